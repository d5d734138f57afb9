/*-------------------------------------------------------------------------
 *
 * qtext.c
 *		Query texts: cutting a statement out of its source string, replacing
 *		its constants by $n, and keeping texts in DSA memory.
 *
 * Why a file of its own: the promise that no literal is ever stored rests
 * on this code alone.  ng_qtext_prepare returns either a text that is safe
 * to store or NULL; the callers store no text when they get NULL.
 *
 * Normalization follows pg_stat_statements' visible behaviour: constants
 * found by the query jumble are replaced, left to right, by $k with k
 * counting on from the highest external parameter; a negative number is
 * replaced with its sign; repeated locations count once; on 18, a squashed
 * IN list becomes "$k" followed by a "..." comment.  The jumble gives only where each
 * constant starts, so the lengths come from the core SQL scanner.  Every
 * location is checked against the statement's bounds before use: a
 * location that is out of range, or that the scanner cannot match to a
 * token, makes the whole statement go without text.
 *
 * Text memory: allocations in the DSA area, counted in
 * ng_shared->text_bytes (an atomic) and capped by query_text_memory.  A
 * text that does not fit is not stored; the caller counts it.  Freeing is
 * done by whoever removes the text from its entry, under the partition
 * lock (store.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/keywords.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "parser/scanner.h"
#include "utils/memutils.h"

#include "pg_stat_statements_ng.h"

typedef struct QtextConst
{
	int			location;		/* offset in the statement text */
	int			length;			/* bytes, or -1 for a duplicate */
	bool		squashed;
	bool		extern_param;
} QtextConst;

static int
qtext_const_cmp(const void *a, const void *b)
{
	int			la = ((const QtextConst *) a)->location;
	int			lb = ((const QtextConst *) b)->location;

	return (la > lb) - (la < lb);
}

/*
 * qtext_measure_constants
 *		Fill in each constant's length by scanning the statement (a
 *		NUL-terminated copy of exactly the statement).  Returns false if any
 *		constant cannot be matched to a token within the text.
 */
static bool
qtext_measure_constants(QtextConst *consts, int n, const char *stmt, int len)
{
	core_yyscan_t scanner;
	core_yy_extra_type extra;
	core_YYSTYPE lval;
	YYLTYPE		lloc = -1;
	int			tok = -1;
	bool		ok = true;

	scanner = scanner_init(stmt, &extra, &ScanKeywords, ScanKeywordTokens);
	extra.escape_string_warning = false;

	for (int i = 0; i < n && ok; i++)
	{
		int			loc = consts[i].location;

		if (i > 0 && loc == consts[i - 1].location)
		{
			consts[i].length = -1;
			continue;
		}
		if (consts[i].squashed)
		{
			/* the jumble measured the list; check it stays inside */
			if (consts[i].length < 0 || consts[i].length > len - loc)
				ok = false;
			continue;
		}

		/* advance to the first token at or after loc */
		while (tok != 0 && lloc < loc)
			tok = core_yylex(&lval, &lloc, scanner);
		if (tok == 0 || lloc != loc)
		{
			ok = false;
			break;
		}
		if (stmt[loc] == '-')
		{
			/* a negative number: the sign and the number go together */
			tok = core_yylex(&lval, &lloc, scanner);
			if (tok == 0)
			{
				ok = false;
				break;
			}
		}

		/*
		 * The scanner ends the current token's text with a zero byte in its
		 * buffer, which is a copy of stmt; measure from the constant's start
		 * to there.
		 */
		consts[i].length = strlen(extra.scanbuf + loc);
		if (consts[i].length <= 0 || consts[i].length > len - loc)
			ok = false;
		/* the next constant must begin after this one */
		tok = core_yylex(&lval, &lloc, scanner);
	}
	scanner_finish(scanner);
	return ok;
}

/*
 * qtext_normalize
 *		Replace the constants of a statement by parameter symbols.  stmt is
 *		a NUL-terminated copy of the statement, which starts at offset
 *		stmt_loc of the source string the jumble's locations refer to.
 *		Returns a palloc'd text, or NULL if any location does not check out.
 */
static char *
qtext_normalize(const JumbleState *jstate, const char *stmt, int stmt_loc,
				int len, int *out_len)
{
	int			n = jstate->clocations_count;
	QtextConst *consts = palloc(sizeof(QtextConst) * n);
	StringInfoData buf;
	int			copied = 0;		/* bytes of stmt already written */
	int			replaced = 0;
	bool		has_squashed = false;

	for (int i = 0; i < n; i++)
	{
		const LocationLen *l = &jstate->clocations[i];

		consts[i].location = l->location - stmt_loc;
		consts[i].length = l->length;
		consts[i].squashed = NG_LOC_SQUASHED(l);
		consts[i].extern_param = NG_LOC_EXTERN_PARAM(l);
		has_squashed |= consts[i].squashed;
		/* untrusted: every location must lie within the statement */
		if (consts[i].location < 0 || consts[i].location >= len)
		{
			pfree(consts);
			return NULL;
		}
	}
	qsort(consts, n, sizeof(QtextConst), qtext_const_cmp);

	if (!qtext_measure_constants(consts, n, stmt, len))
	{
		pfree(consts);
		return NULL;
	}

	initStringInfo(&buf);
	for (int i = 0; i < n; i++)
	{
		const QtextConst *c = &consts[i];

		if (c->length < 0)
			continue;			/* a duplicate location */
		/* an external parameter is already $n: keep it unless renumbering */
		if (c->extern_param && !has_squashed)
			continue;
		if (c->location < copied)
		{
			/* overlaps what was replaced before: cannot happen, be safe */
			pfree(consts);
			pfree(buf.data);
			return NULL;
		}
		appendBinaryStringInfo(&buf, stmt + copied, c->location - copied);
		appendStringInfo(&buf, "$%d%s",
						 replaced + 1 + jstate->highest_extern_param_id,
						 c->squashed ? " /*, ... */" : "");
		replaced++;
		copied = c->location + c->length;
	}
	appendBinaryStringInfo(&buf, stmt + copied, len - copied);
	pfree(consts);
	*out_len = buf.len;
	return buf.data;
}

/*
 * ng_qtext_prepare
 *		The text to store for a statement: the statement cut out of its
 *		source string, with constants replaced if the jumble found any.
 *		Returns a palloc'd, NUL-terminated text and its length, or NULL
 *		when no safe text can be made.  Never raises an error of its own;
 *		errors from the scanner are caught and mean "no text".
 */
char *
ng_qtext_prepare(const NgTextSource *src, int *len)
{
	int			loc = src->location;
	int			stmt_len = src->len;
	const char *stmt;
	char	   *copy;
	char	   *result = NULL;
	MemoryContext cxt = CurrentMemoryContext;

	if (src->query == NULL)
		return NULL;
	stmt = CleanQuerytext(src->query, &loc, &stmt_len);
	if (stmt_len < 0)
		return NULL;
	copy = pnstrdup(stmt, stmt_len);
	stmt_len = strlen(copy);	/* an embedded NUL would end the text */

	if (src->jstate == NULL || src->jstate->clocations_count == 0)
	{
		*len = stmt_len;
		return copy;
	}

	PG_TRY();
	{
		result = qtext_normalize(src->jstate, copy, loc, stmt_len, len);
	}
	PG_CATCH();
	{
		/* a scanner error: go without text rather than fail the query */
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		result = NULL;
	}
	PG_END_TRY();
	pfree(copy);
	return result;
}

/*
 * ng_qtext_store
 *		Copy a text into DSA memory, if it fits under query_text_memory.
 *		Returns InvalidDsaPointer if it does not fit or memory is short (the
 *		reservation is then returned).  Caller holds no partition lock
 *		(ng_dsa_allocate); the byte count is an atomic reservation.
 */
dsa_pointer
ng_qtext_store(const char *qtext, int len)
{
	uint64		cap = (uint64) ng_query_text_memory_kb * 1024;
	uint64		need = (uint64) len + 1;
	uint64		cur = pg_atomic_read_u64(&ng_shared->text_bytes);
	dsa_pointer dp;

	do
	{
		if (cur + need > cap)
			return InvalidDsaPointer;
	} while (!pg_atomic_compare_exchange_u64(&ng_shared->text_bytes, &cur,
											 cur + need));

	dp = ng_dsa_allocate(need, DSA_ALLOC_HUGE);
	if (!DsaPointerIsValid(dp))
	{
		pg_atomic_fetch_sub_u64(&ng_shared->text_bytes, need);
		return InvalidDsaPointer;
	}
	memcpy(dsa_get_address(ng_area, dp), qtext, len);
	((char *) dsa_get_address(ng_area, dp))[len] = '\0';
	return dp;
}

/*
 * ng_qtext_free
 *		Free a stored text of length len.
 */
void
ng_qtext_free(dsa_pointer qtext, int len)
{
	dsa_free(ng_area, qtext);
	pg_atomic_fetch_sub_u64(&ng_shared->text_bytes, (uint64) len + 1);
}
