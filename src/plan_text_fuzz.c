/*-------------------------------------------------------------------------
 *
 * plan_text_fuzz.c
 *		Assertion builds only: a mutation fuzzer for the plan text's
 *		scrubber (plan_text_scrub.c), run inside a backend.
 *
 * Why a file of its own: nothing here exists in a release build.  The
 * entry point, pg_stat_statements_ng_fuzz_plan_text(corpus text[],
 * iterations int8, seed int8) RETURNS int8, is in no extension script;
 * fuzz/run.sh creates it by hand in its throwaway instance of a server
 * built with AddressSanitizer, and feeds it the EXPLAIN texts of
 * fuzz/plan-corpus/.  Each iteration takes a text of the corpus, mutates it
 * none (1 time in 16) to four times (a byte changed, a token of the
 * scanner's inserted: quotes, E', $n, ::, a newline, a label, "->"; a
 * range deleted or repeated; the text cut short), copies it into a malloc'd
 * block of exactly its size (so that ASan sees a read past its end), and
 * checks that
 * - the scrubbed text scrubbed again is the same (no constant is left for
 *   a second pass to find, and the scanner reads its own output as it
 *   wrote it);
 * - a text of the corpus, unmutated, has no quote ' left;
 * - the text cut at a random size is at most that size, and ends with the
 *   marker line when it was cut.
 * A failed check raises an ERROR naming the iteration (the seed replays
 * it).  Returns the number of iterations.
 *
 * Locking: none.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef USE_ASSERT_CHECKING

#include "catalog/pg_type_d.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "compat.h"
#include "plan_text_scrub.h"

NG_FUNCTION_INFO(pg_stat_statements_ng_fuzz_plan_text);

/* what a mutation may insert: the scanner's tokens and line forms */
static const char *const fuzz_tokens[] = {
	"'", "''", "E'", "e'\\", "\\", "\"", "\"\"", "$", "$1", "$0", "$99999999999",
	"::", "::numeric(10,2)", "::character varying(5)[]", " varying", " with",
	"\n", "\n  ->  ", "\n  Filter: ", "\n  Workers Planned: ", "\n  SubPlan ",
	"InitPlan ", "SubPlan 1", "\nCTE ", "U&'", "B'", "1e", "1e+", "-", "5",
	"1.5", "(", ")", "[]", ":", ": ", "\n  Index Cond: (a = '", NULL
};

/* one mutation of buf (len bytes, room for cap) */
static void
fuzz_mutate(pg_prng_state *rng, char *buf, int *len, int cap)
{
	int			how = (int) pg_prng_uint64_range(rng, 0, 5);
	int			at = *len > 0 ? (int) pg_prng_uint64_range(rng, 0, *len - 1) : 0;

	if (how == 0 && *len > 0)
		buf[at] = (char) pg_prng_uint64_range(rng, 0, 255);
	else if (how <= 2)
	{
		int			ntokens = lengthof(fuzz_tokens) - 1;
		const char *t = fuzz_tokens[pg_prng_uint64_range(rng, 0, ntokens - 1)];
		int			n = strlen(t);

		if (*len + n > cap)
			return;
		memmove(buf + at + n, buf + at, *len - at);
		memcpy(buf + at, t, n);
		*len += n;
	}
	else if (how == 3 && *len > 0)
	{
		int			n = (int) pg_prng_uint64_range(rng, 1, Min(64, *len - at));

		memmove(buf + at, buf + at + n, *len - at - n);
		*len -= n;
	}
	else if (how == 4 && *len > 0)
	{
		int			n = (int) pg_prng_uint64_range(rng, 1, Min(64, *len - at));

		if (*len + n > cap)
			return;
		memmove(buf + at + n, buf + at, *len - at);
		*len += n;
	}
	else
		*len = at;
}

/* one iteration: the checks above, an ERROR when one fails */
static void
fuzz_one(pg_prng_state *rng, char *buf, int cap, text *t, int64 it)
{
	int			len = VARSIZE_ANY_EXHDR(t);
	int			nmut = (int) pg_prng_uint64_range(rng, 0, 15);
	char	   *input;
	char	   *out;
	char	   *again;
	int			outlen;
	int			againlen;
	int			max;

	memcpy(buf, VARDATA_ANY(t), len);
	nmut = nmut == 0 ? 0 : (int) pg_prng_uint64_range(rng, 1, 4);
	for (int m = 0; m < nmut; m++)
		fuzz_mutate(rng, buf, &len, cap);

	/* exactly len bytes: a read past them is ASan's to see */
	input = malloc(Max(len, 1));
	if (input == NULL)
		elog(ERROR, "out of memory");
	memcpy(input, buf, len);
	out = ng_plan_text_scrub(input, len, &outlen);
	free(input);

	again = ng_plan_text_scrub(out, outlen, &againlen);
	if (againlen != outlen || memcmp(again, out, outlen) != 0)
		elog(ERROR, "iteration " INT64_FORMAT ": scrubbed twice differs:\n%s\n----\n%s",
			 it, out, again);
	if (nmut == 0 && memchr(out, '\'', outlen) != NULL)
		elog(ERROR, "iteration " INT64_FORMAT ": a quote is left:\n%s", it, out);

	max = (int) strlen(NG_PLAN_TEXT_CUT_MARKER) + 1 +
		(int) pg_prng_uint64_range(rng, 0, outlen + 8);
	len = ng_plan_text_cut(out, outlen, max);
	if (len > max || len > outlen ||
		(len < outlen - 1 &&
		 strcmp(out + len - strlen(NG_PLAN_TEXT_CUT_MARKER), NG_PLAN_TEXT_CUT_MARKER) != 0))
		elog(ERROR, "iteration " INT64_FORMAT ": cut at %d gave %d bytes of %d",
			 it, max, len, outlen);
}

/*
 * pg_stat_statements_ng_fuzz_plan_text(corpus text[], iterations int8,
 * seed int8) RETURNS int8
 */
Datum
pg_stat_statements_ng_fuzz_plan_text(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int64		iterations = PG_GETARG_INT64(1);
	pg_prng_state rng;
	Datum	   *elems;
	bool	   *nulls;
	int			ntexts;
	int			cap = 0;
	char	   *buf;
	MemoryContext iter_cxt;

	pg_prng_seed(&rng, (uint64) PG_GETARG_INT64(2));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls,
					  &ntexts);
	if (ntexts == 0)
		elog(ERROR, "empty corpus");
	for (int i = 0; i < ntexts; i++)
		cap = Max(cap, VARSIZE_ANY_EXHDR(DatumGetTextPP(elems[i])));
	cap = cap * 2 + 4096;
	buf = palloc(cap);
	iter_cxt = AllocSetContextCreate(CurrentMemoryContext, "plan text fuzz",
									 ALLOCSET_DEFAULT_SIZES);

	for (int64 it = 0; it < iterations; it++)
	{
		text	   *t = DatumGetTextPP(elems[pg_prng_uint64_range(&rng, 0, ntexts - 1)]);
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(iter_cxt);
		fuzz_one(&rng, buf, cap, t, it);
		MemoryContextSwitchTo(old);
		MemoryContextReset(iter_cxt);
	}
	MemoryContextDelete(iter_cxt);
	PG_RETURN_INT64(iterations);
}

#else

/* a release build has no fuzz entry point: an empty unit is not allowed */
typedef int ng_plan_text_fuzz_unused;

#endif							/* USE_ASSERT_CHECKING */
