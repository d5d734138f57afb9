/*-------------------------------------------------------------------------
 *
 * textconv.c
 *		Query texts as the reader shows them: converted to the reader's
 *		database encoding, never failing because of their content.
 *
 * Why a file of its own: a text is stored in the encoding of the database
 * it ran in, and read from any database; this conversion is the one place
 * that decides what a reader sees of bytes its encoding cannot show.
 *
 * Locks: none.  Called outside every lock of ours, when a row is emitted
 * (it allocates, and conversion procedures are arbitrary code).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"

#include "textconv.h"

/*
 * text_escape_bytes
 *		Append n bytes as \xNN each.
 */
static void
text_escape_bytes(StringInfo buf, const char *s, int n)
{
	for (int k = 0; k < n; k++)
		appendStringInfo(buf, "\\x%02x", (unsigned char) s[k]);
}

/*
 * text_verified
 *		Same encoding, or unknown bytes (stored in a SQL_ASCII database): show
 *		the stretches valid in the database encoding db, escape the other
 *		bytes.  Returns qtext itself when it is valid as it is.
 */
static char *
text_verified(const char *qtext, int len, int db)
{
	StringInfoData buf;
	int			pos = 0;
	int			ok = pg_encoding_verifymbstr(db, qtext, len);

	if (ok == len)
		return (char *) qtext;
	initStringInfo(&buf);
	while (pos < len)
	{
		ok = pg_encoding_verifymbstr(db, qtext + pos, len - pos);
		appendBinaryStringInfo(&buf, qtext + pos, ok);
		pos += ok;
		if (pos < len)
			text_escape_bytes(&buf, qtext + pos++, 1);
	}
	return buf.data;
}

/*
 * text_converted
 *		Convert with proc from enc to db in pieces, without raising errors:
 *		the conversion stops before the first character it cannot convert;
 *		that character is escaped (its bytes if it is valid in enc, else one
 *		byte) and the conversion goes on after it.  Appends to buf.
 */
static void
text_converted(StringInfo buf, Oid proc, const char *qtext, int len,
			   int enc, int db)
{
	int			chunk = 8192;
	int			destlen = chunk * MAX_CONVERSION_GROWTH + 1;
	unsigned char *dest = palloc(destlen);
	int			pos = 0;

	while (pos < len)
	{
		int			n;

		n = pg_do_encoding_conversion_buf(proc, enc, db,
										  (unsigned char *) qtext + pos,
										  Min(len - pos, chunk),
										  dest, destlen, true);
		if (n > 0)
		{
			appendStringInfoString(buf, (char *) dest);
			pos += n;
		}
		else
		{
			int			l = pg_encoding_verifymbchar(enc, qtext + pos, len - pos);

			if (l <= 0)
				l = 1;
			text_escape_bytes(buf, qtext + pos, l);
			pos += l;
		}
	}
	pfree(dest);
}

/*
 * ng_text_for_reader
 *		A stored text (len bytes without NUL, followed by one, in encoding
 *		enc) as a string in the database encoding, whatever its bytes:
 *		converted where it can be; a character that is not valid, or has no
 *		equivalent in the database encoding, is written as \xNN per byte (in
 *		the text's own encoding).  Returns qtext itself when it can be shown
 *		as it is, else a palloc'd string.  Never raises an error because of
 *		the text's content, so one text in a foreign encoding cannot make a
 *		whole read fail (pg_any_to_server would).
 */
char *
ng_text_for_reader(const char *qtext, int len, int enc)
{
	int			db = GetDatabaseEncoding();
	StringInfoData buf;
	int			pos = 0;
	Oid			proc;

	/* a SQL_ASCII database takes any byte but zero */
	if (len <= 0 || db == PG_SQL_ASCII)
		return (char *) qtext;

	if (enc == db || enc == PG_SQL_ASCII || !PG_VALID_BE_ENCODING(enc))
		return text_verified(qtext, len, db);

	/* another encoding: plain ASCII is the same in every backend encoding */
	while (pos < len && !IS_HIGHBIT_SET(qtext[pos]))
		pos++;
	if (pos == len)
		return (char *) qtext;

	initStringInfo(&buf);
	proc = FindDefaultConversionProc(enc, db);
	if (OidIsValid(proc))
		text_converted(&buf, proc, qtext, len, enc, db);
	else
	{
		/* no conversion known: keep ASCII, escape the rest */
		for (pos = 0; pos < len; pos++)
		{
			if (IS_HIGHBIT_SET(qtext[pos]))
				text_escape_bytes(&buf, qtext + pos, 1);
			else
				appendStringInfoChar(&buf, qtext[pos]);
		}
	}
	return buf.data;
}
