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
 * Literals the jumble does not record: it finds none of a utility
 * statement's constants on 15 and only some on later majors (yet they carry
 * passwords, OPTIONS values, function and DO bodies, comments), and in other
 * statements it skips some (a CYCLE clause's marks, JSON_TABLE and XMLTABLE
 * defaults, PASSING, XMLNAMESPACES; constants at no location, which make a
 * statement share its queryid with one that has a literal there).  So every
 * text is scanned as a whole, and every string constant (quoted, E'', U&'',
 * B'', X'', dollar-quoted) and numeric constant the scanner finds outside
 * the ones the jumble replaced is replaced too, by $k numbered after the
 * jumble's and after any $n the text contains; outside utility statements,
 * but for the integers SQL reads as type modifiers or ORDER BY positions
 * (qtext_scan.c).  A text the scanner rejects goes without text.  Having
 * constants is thus a property of the text itself: a text made without the
 * jumble (jstate NULL) is made the same way.
 *
 * A text with a backslash is scanned with standard_conforming_strings both
 * on and off, as a SET earlier in the same query string may have changed it
 * since the raw parse: the two must agree, or one must be refuted by a
 * scanner error (the raw parse accepted the text); otherwise no text.
 *
 * Text memory: allocations in the DSA area, each a header (the cached
 * fingerprint, qtext.h) then the text and its terminator, counted whole in
 * ng_shared->text_bytes (an atomic) and capped by query_text_memory.  A
 * text that does not fit is not stored; the caller counts it.  Freeing is
 * done by whoever removes the text from its entry, under the partition
 * lock (store.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "common/keywords.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "parser/parser.h"
#include "parser/scanner.h"
#include "utils/memutils.h"

#include "alloc.h"
#include "guc.h"
#include "qtext.h"
#include "qtext_scan.h"
#include "shmem.h"

typedef struct QtextConst
{
	int			location;		/* offset in the statement text */
	int			length;			/* bytes, or -1 for a duplicate */
	bool		squashed;
	bool		extern_param;
	bool		literal;		/* found by the scanner, not the jumble */
} QtextConst;

/* A statement being normalized, cut out of its source string */
typedef struct QtextStatement
{
	const NgTextSource *src;	/* its jumble (may be NULL) and whether it is
								 * a utility statement */
	const char *text;			/* a NUL-terminated copy of the statement */
	int			location;		/* where it starts in the source string, to
								 * which the jumble's locations refer */
	int			len;			/* its length in bytes */
} QtextStatement;

/*
 * How qtext_substitute numbers the parameter symbols it writes: the
 * jumble's constants after the highest external parameter, the scanner's
 * literals after first_lit
 */
typedef struct QtextNumbering
{
	int			highest_extern; /* the jumble's highest $n of the statement */
	int			first_lit;		/* the scanner's literals are numbered after */
	bool		has_squashed;	/* a constant stands for a squashed list:
								 * external parameters are renumbered too */
} QtextNumbering;

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
qtext_measure_constants(QtextConst *consts, int n, const char *stmt, int len,
						bool scs)
{
	core_yyscan_t scanner;
	core_yy_extra_type extra;
	core_YYSTYPE lval;
	YYLTYPE		lloc = -1;
	int			tok = -1;
	bool		ok = true;

	scanner = ng_scan_begin(stmt, &extra, scs);

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
 * qtext_find_literals
 *		The scanner's literals of a statement (a NUL-terminated copy of
 *		exactly the statement), as constants with literal set, in text
 *		order (ng_scan_literals; integers that are type modifiers or
 *		positions are kept unless utility); *max_param gets the highest $n
 *		written in the text.  Returns a palloc'd array of *n entries, or
 *		NULL if a token cannot be measured within the text.  A scanner error
 *		propagates (the caller catches it).
 */
static QtextConst *
qtext_find_literals(const char *stmt, int len, bool scs, bool utility,
					int *n, int *max_param)
{
	NgLiteral  *found = ng_scan_literals(stmt, len, scs, !utility, n,
										 max_param);
	QtextConst *lits;

	if (found == NULL)
		return NULL;
	lits = palloc(sizeof(QtextConst) * (*n + 1));
	for (int i = 0; i < *n; i++)
	{
		lits[i].location = found[i].location;
		lits[i].length = found[i].length;
		lits[i].squashed = false;
		lits[i].extern_param = false;
		lits[i].literal = true;
	}
	pfree(found);
	return lits;
}

/*
 * qtext_jumble_constants
 *		The jumble's n constants, as offsets into the statement (which
 *		starts at stmt_loc of the source string and is len bytes long), not
 *		yet sorted nor measured.  Sets *has_squashed if one stands for a
 *		squashed list.  Returns a palloc'd array of n + 1, or NULL if a
 *		location lies outside the statement.
 */
static QtextConst *
qtext_jumble_constants(const JumbleState *jstate, int n, int stmt_loc,
					   int len, bool *has_squashed)
{
	QtextConst *consts = palloc(sizeof(QtextConst) * (n + 1));

	for (int i = 0; i < n; i++)
	{
		const LocationLen *l = &jstate->clocations[i];

		consts[i].location = l->location - stmt_loc;
		consts[i].length = l->length;
		consts[i].squashed = NG_LOC_SQUASHED(l);
		consts[i].extern_param = NG_LOC_EXTERN_PARAM(l);
		consts[i].literal = false;
		*has_squashed |= consts[i].squashed;
		/* untrusted: every location must lie within the statement */
		if (consts[i].location < 0 || consts[i].location >= len)
		{
			pfree(consts);
			return NULL;
		}
	}
	return consts;
}

/*
 * qtext_add_literals
 *		The jumble's n constants (sorted) plus the
 *		scanner's nlits literals that do not lie within a constant of the
 *		jumble's (the number of a negative constant, a constant the jumble
 *		found too), sorted.  Returns a palloc'd array; its length in *nall.
 */
static QtextConst *
qtext_add_literals(const QtextConst *consts, int n, const QtextConst *lits,
				   int nlits, int *nall)
{
	QtextConst *all = palloc(sizeof(QtextConst) * (n + nlits + 1));
	int			j = 0;

	memcpy(all, consts, sizeof(QtextConst) * n);
	*nall = n;
	for (int i = 0; i < nlits; i++)
	{
		/*
		 * Both lists are in text order and the jumble's spans do not overlap:
		 * pass the spans that end before this literal; it is inside the next
		 * one if that one starts at or before it.
		 */
		while (j < n && (consts[j].length < 0 ||
						 consts[j].location + consts[j].length <= lits[i].location))
			j++;
		if (j < n && consts[j].location <= lits[i].location)
			continue;
		all[(*nall)++] = lits[i];
	}
	qsort(all, *nall, sizeof(QtextConst), qtext_const_cmp);
	return all;
}

/*
 * qtext_substitute
 *		Write the statement with each of the nall constants (sorted, measured)
 *		replaced by its parameter symbol, numbered as num says.  Returns a
 *		palloc'd text (its length in *out_len), or NULL if two constants
 *		overlap.
 */
static char *
qtext_substitute(const QtextConst *all, int nall, const char *stmt, int len,
				 const QtextNumbering *num, int *out_len)
{
	StringInfoData buf;
	int			copied = 0;		/* bytes of stmt already written */
	int			replaced = 0;
	int			replaced_lits = 0;

	initStringInfo(&buf);
	for (int i = 0; i < nall; i++)
	{
		const QtextConst *c = &all[i];

		if (c->length < 0)
			continue;			/* a duplicate location */
		/* an external parameter is already $n: keep it unless renumbering */
		if (c->extern_param && !num->has_squashed)
			continue;
		if (c->location < copied)
		{
			/* overlaps what was replaced before: cannot happen, be safe */
			pfree(buf.data);
			return NULL;
		}
		appendBinaryStringInfo(&buf, stmt + copied, c->location - copied);
		if (c->literal)
			appendStringInfo(&buf, "$%d", num->first_lit + ++replaced_lits);
		else
			appendStringInfo(&buf, "$%d%s",
							 replaced++ + 1 + num->highest_extern,
							 c->squashed ? " /*, ... */" : "");
		copied = c->location + c->length;
	}
	appendBinaryStringInfo(&buf, stmt + copied, len - copied);
	*out_len = buf.len;
	return buf.data;
}

/*
 * qtext_normalize
 *		Replace the constants of statement st by parameter symbols.  Its
 *		jumble (st->src->jstate) may be NULL (no constants found by the
 *		jumble).  The literals the scanner (with standard_conforming_strings
 *		= scs) finds outside the jumble's constants are replaced too,
 *		numbered after them; integers that are type modifiers or positions
 *		only in a utility statement.
 *		Returns a palloc'd text, or NULL if any location does not check out.
 */
static char *
qtext_normalize(const QtextStatement *st, bool scs, int *out_len)
{
	const JumbleState *jstate = st->src->jstate;
	const char *stmt = st->text;
	int			len = st->len;
	int			n = jstate ? jstate->clocations_count : 0;
	int			nlits = 0;
	int			max_param = 0;
	QtextNumbering num = {
		.highest_extern = jstate ? jstate->highest_extern_param_id : 0,
	};
	QtextConst *consts;
	QtextConst *lits = NULL;
	QtextConst *all;
	int			nall;
	int			first_lit;
	char	   *result;

	consts = qtext_jumble_constants(jstate, n, st->location, len,
									&num.has_squashed);
	if (consts == NULL)
		return NULL;
	qsort(consts, n, sizeof(QtextConst), qtext_const_cmp);

	if (!qtext_measure_constants(consts, n, stmt, len, scs))
	{
		pfree(consts);
		return NULL;
	}

	/* add the scanner's literals that do not lie within a jumble constant */
	lits = qtext_find_literals(stmt, len, scs, st->src->utility, &nlits,
							   &max_param);
	if (lits == NULL)
	{
		pfree(consts);
		return NULL;
	}
	all = qtext_add_literals(consts, n, lits, nlits, &nall);

	/* the jumble's constants are numbered first, then the scanner's */
	first_lit = num.highest_extern;
	for (int i = 0; i < n; i++)
		if (consts[i].length >= 0 &&
			!(consts[i].extern_param && !num.has_squashed))
			first_lit++;
	num.first_lit = Max(first_lit, max_param);

	result = qtext_substitute(all, nall, stmt, len, &num, out_len);
	pfree(all);
	pfree(lits);
	pfree(consts);
	return result;
}

/*
 * qtext_try_normalize
 *		qtext_normalize, catching any error (then NULL).  *refuted is set
 *		if the error shows that the text cannot have been scanned so: a
 *		syntax error or an invalid escape, not a lack of resources.
 */
static char *
qtext_try_normalize(const QtextStatement *st, bool scs, int *len,
					bool *refuted)
{
	char	   *result = NULL;
	MemoryContext cxt = CurrentMemoryContext;
	uint32		holdoff = InterruptHoldoffCount;
	uint32		cancel_holdoff = QueryCancelHoldoffCount;

	*refuted = false;
	PG_TRY();
	{
		result = qtext_normalize(st, scs, len);
	}
	PG_CATCH();
	{
		int			category = ERRCODE_TO_CATEGORY(geterrcode());

		/*
		 * A scanner error: go without text rather than fail the query.  The
		 * ERROR zeroed the interrupt holdoff counts; a caller that holds
		 * interrupts gets its counts back.
		 */
		*refuted = (category == ERRCODE_SYNTAX_ERROR_OR_ACCESS_RULE_VIOLATION ||
					category == ERRCODE_DATA_EXCEPTION);
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		InterruptHoldoffCount = holdoff;
		QueryCancelHoldoffCount = cancel_holdoff;
		result = NULL;
	}
	PG_END_TRY();
	return result;
}

/*
 * qtext_normalize_either
 *		A text with a backslash, whose scan depends on
 *		standard_conforming_strings as the raw parse had it (possibly not
 *		as it is now): normalized with it on and off.  The two texts must
 *		agree, or one setting must be refuted by an error; else NULL.
 */
static char *
qtext_normalize_either(const QtextStatement *st, int *len)
{
	int			len_on = 0;
	int			len_off = 0;
	bool		refuted_on;
	bool		refuted_off;
	char	   *on = qtext_try_normalize(st, true, &len_on, &refuted_on);
	char	   *off = qtext_try_normalize(st, false, &len_off, &refuted_off);

	if (on != NULL && (refuted_off ||
					   (off != NULL && len_on == len_off &&
						memcmp(on, off, len_on) == 0)))
	{
		*len = len_on;
		if (off)
			pfree(off);
		return on;
	}
	if (off != NULL && refuted_on)
	{
		*len = len_off;
		return off;
	}
	if (on)
		pfree(on);
	if (off)
		pfree(off);
	return NULL;
}

/*
 * ng_qtext_prepare
 *		The text to store for a statement: the statement cut out of its
 *		source string, with the constants the jumble found and every
 *		literal the scanner finds replaced (see the head of the file).
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
	char	   *result;
	bool		refuted;
	QtextStatement st;

	if (src->query == NULL)
		return NULL;
	stmt = CleanQuerytext(src->query, &loc, &stmt_len);
	if (stmt_len < 0)
		return NULL;
	copy = pnstrdup(stmt, stmt_len);
	stmt_len = strlen(copy);	/* an embedded NUL would end the text */
	st.src = src;
	st.text = copy;
	st.location = loc;
	st.len = stmt_len;

	/* without a backslash, standard_conforming_strings changes no token */
	if (strchr(copy, '\\') == NULL)
		result = qtext_try_normalize(&st, standard_conforming_strings, len,
									 &refuted);
	else
		result = qtext_normalize_either(&st, len);
	pfree(copy);
	return result;
}

/*
 * Why this backend's last ng_qtext_store failed: true if the DSA area could
 * not grow, false if query_text_memory was full (ng_qtext_note_dropped).
 */
static bool qtext_refused_by_dsa = false;

/*
 * ng_qtext_store
 *		Copy a text into DSA memory, if it fits under query_text_memory.
 *		Returns InvalidDsaPointer if it does not fit or memory is short (the
 *		reservation is then returned; ng_qtext_note_dropped tells which).
 *		Caller holds no partition lock (ng_dsa_allocate); the byte count is
 *		an atomic reservation.
 */
dsa_pointer
ng_qtext_store(const char *qtext, int len)
{
	uint64		cap = (uint64) ng_query_text_memory_kb * 1024;
	uint64		need = NG_QTEXT_OVERHEAD(len);
	uint64		cur = pg_atomic_read_u64(&ng_shared->text_bytes);
	dsa_pointer dp;
	void	   *stored;
	char	   *text;

	do
	{
		if (cur + need > cap)
		{
			qtext_refused_by_dsa = false;
			return InvalidDsaPointer;
		}
	} while (!pg_atomic_compare_exchange_u64(&ng_shared->text_bytes, &cur,
											 cur + need));

	dp = ng_dsa_allocate(need, DSA_ALLOC_HUGE);
	if (!DsaPointerIsValid(dp))
	{
		pg_atomic_fetch_sub_u64(&ng_shared->text_bytes, need);
		qtext_refused_by_dsa = true;
		return InvalidDsaPointer;
	}
	stored = dsa_get_address(ng_area, dp);
	pg_atomic_init_u64(ng_qtext_fingerprint(stored), 0);
	((NgQtextHeader *) stored)->stored_at = 0;
	text = (char *) ng_qtext_text(stored);

	memcpy(text, qtext, len);
	text[		len] = '\0';

	return dp;
}

/*
 * ng_qtext_note_dropped
 *		Count an entry left without its text because this backend's last
 *		ng_qtext_store failed, in texts_dropped.  If query_text_memory was
 *		full, that is logged (once) with the hint to raise it; if the DSA
 *		area could not grow, the refusal was logged already with its own
 *		cause and hint (NG_LOSS_DSA), and raising query_text_memory would
 *		not help: the text is only counted.  Safe under a partition lock.
 */
void
ng_qtext_note_dropped(void)
{
	if (qtext_refused_by_dsa)
		ng_count_stat(&ng_shared->stats.texts_dropped, 1);
	else
		ng_note_loss(NG_LOSS_TEXT_MEMORY, 1);
}

/*
 * ng_qtext_stamp
 *		The text_stored_at of a text being stored now: the time, or one
 *		microsecond after the last stamp given, whichever is later, so that
 *		no two texts stored in a run have the same stamp, and a run's stamps
 *		are above those of the runs before it (while the clock does not go
 *		back).  A collector tells the texts of one key apart by it: an entry
 *		re-created after an eviction or a reset, or given its text later,
 *		has a text with a new stamp (README, texts once).  A compare-and-swap
 *		on text_stamp; safe under a partition lock (no allocation, no ERROR).
 */
TimestampTz
ng_qtext_stamp(void)
{
	uint64		now = (uint64) Max(GetCurrentTimestamp(), 1);
	uint64		last = pg_atomic_read_u64(&ng_shared->text_stamp);
	uint64		next;

	do
	{
		next = Max(now, last + 1);
	} while (!pg_atomic_compare_exchange_u64(&ng_shared->text_stamp, &last,
											 next));
	return (TimestampTz) next;
}

/*
 * ng_qtext_free
 *		Free a stored text of length len, and its header.
 */
void
ng_qtext_free(dsa_pointer qtext, int len)
{
	dsa_free(ng_area, qtext);
	pg_atomic_fetch_sub_u64(&ng_shared->text_bytes, NG_QTEXT_OVERHEAD(len));
}
