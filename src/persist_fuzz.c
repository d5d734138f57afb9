/*-------------------------------------------------------------------------
 *
 * persist_fuzz.c
 *		Assertion builds only: a mutation fuzzer for the dump loader, run
 *		inside a backend, as fast as the loader's checks go.
 *
 * Why a file of its own: nothing here exists in a release build.  The
 * entry point, pg_stat_statements_ng_fuzz_loader(corpus bytea[], iterations
 * int8, seed int8), is in no extension script; fuzz/run.sh creates it by
 * hand (CREATE FUNCTION .. LANGUAGE C) in a throwaway instance of a server
 * built with AddressSanitizer.  Each iteration takes a dump of the corpus
 * (one of the current format 7 times in 8, when the corpus has both),
 * and mutates it (persist_fuzz_mutate.c) one to four times, in one of
 * three ways:
 * - 1 in 8: raw mutations, the CRC left as it is, for the checksum check;
 * - 1 in 8: raw mutations, the CRC made right, for the header's checks and
 *   lengths that disagree with the bytes;
 * - 6 in 8: mutations that know the format, lengths and entry and plan
 *   counts made to agree, and the CRC made right, so that the checks of
 *   the entries and of the plan rows, and the second pass, which reads
 *   every text, are reached.
 * It copies the result into a malloc'd block of exactly its size (so that
 * ASan sees a read one byte past its end) and hands it to
 * ng_persist_check_buffer, which checks it as the loader checks a file.
 * Returns one row per outcome: why the loader refused the input (its
 * reason cut before the first digit), or 'sound'; the stage that gave the
 * verdict ('header': the size, the header or the CRC; 'entries': past
 * them); and how often.
 *
 * Locking: none; the loader's checks read only the input and settings.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef USE_ASSERT_CHECKING

#include "common/pg_prng.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "utils/array.h"
#include "catalog/pg_type_d.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "persist_internal.h"

NG_FUNCTION_INFO(pg_stat_statements_ng_fuzz_loader);

#define FUZZ_MAX_OUTCOMES	64

typedef struct FuzzOutcome
{
	char	   *why;
	bool		past_header;	/* the verdict is the entries' */
	int64		count;
} FuzzOutcome;

/* Count an outcome: the reason cut before its first digit, and its stage */
static void
fuzz_count(FuzzOutcome *outcomes, int *n, const char *why, bool past_header)
{
	size_t		len = strcspn(why, "0123456789(");

	for (int i = 0; i < *n; i++)
		if (strncmp(outcomes[i].why, why, len) == 0 && outcomes[i].why[len] == '\0' &&
			outcomes[i].past_header == past_header)
		{
			outcomes[i].count++;
			return;
		}
	if (*n == FUZZ_MAX_OUTCOMES)
		elog(ERROR, "more than %d outcomes", FUZZ_MAX_OUTCOMES);
	outcomes[*n].why = pnstrdup(why, len);
	outcomes[*n].past_header = past_header;
	outcomes[*n].count = 1;
	(*n)++;
}

/* Is this dump of the corpus of the current format (by its header)? */
static bool
fuzz_is_current(bytea *f)
{
	NgDumpHeader hdr;

	if (VARSIZE_ANY_EXHDR(f) < sizeof(hdr))
		return false;
	memcpy(&hdr, VARDATA_ANY(f), sizeof(hdr));
	return hdr.magic == NG_DUMP_MAGIC && hdr.format == NG_DUMP_FORMAT;
}

/*
 * fuzz_pick
 *		A dump of the corpus: of the current format 7 times in 8, when the
 *		corpus has both kinds (files lists the ncurrent of the current
 *		format first, then the others).
 */
static bytea *
fuzz_pick(pg_prng_state *rng, bytea **files, int nfiles, int ncurrent)
{
	if (ncurrent > 0 && ncurrent < nfiles)
	{
		if (pg_prng_uint64_range(rng, 0, 7) != 0)
			return files[pg_prng_uint64_range(rng, 0, ncurrent - 1)];
		return files[pg_prng_uint64_range(rng, ncurrent, nfiles - 1)];
	}
	return files[pg_prng_uint64_range(rng, 0, nfiles - 1)];
}

/*
 * fuzz_one
 *		One mutated dump, built in b (its room b->cap) from f (and o),
 *		checked by the loader's code: its verdict (NULL: sound; allocated in
 *		the current memory context) and *past_header.
 */
static const char *
fuzz_one(pg_prng_state *rng, NgFuzzBuf *b, NgFuzzDump *d, bytea *f, bytea *o,
		 bool *past_header)
{
	int			nmut = (int) pg_prng_uint64_range(rng, 1, 4);
	int			how = (int) pg_prng_uint64_range(rng, 0, 7);
	char	   *input;
	const char *why;

	b->len = VARSIZE_ANY_EXHDR(f);
	memcpy(b->data, VARDATA_ANY(f), b->len);
	for (int m = 0; m < nmut; m++)
	{
		if (how < 2)
			ng_fuzz_mutate_raw(rng, b->data, &b->len, b->cap, VARDATA_ANY(o), VARSIZE_ANY_EXHDR(o));
		else
			ng_fuzz_mutate_dump(rng, b, d, VARDATA_ANY(o), VARSIZE_ANY_EXHDR(o));
	}
	if (how != 0)
		ng_fuzz_fix_crc(b->data, b->len);
	/* exactly len bytes: a read past them is ASan's to see */
	input = malloc(Max(b->len, 1));
	if (input == NULL)
		elog(ERROR, "out of memory");
	memcpy(input, b->data, b->len);
	why = ng_persist_check_buffer(input, b->len, past_header);
	free(input);
	return why;
}

/*
 * pg_stat_statements_ng_fuzz_loader(corpus bytea[], iterations int8, seed
 * int8) RETURNS TABLE (outcome text, stage text, count int8)
 */
Datum
pg_stat_statements_ng_fuzz_loader(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int64		iterations = PG_GETARG_INT64(1);
	pg_prng_state rng;
	Datum	   *elems;
	bool	   *nulls;
	int			nfiles;
	int			ncurrent = 0;
	bytea	  **files;
	size_t		cap = 0;
	NgFuzzBuf	b;
	NgFuzzDump	d;
	FuzzOutcome outcomes[FUZZ_MAX_OUTCOMES];
	int			noutcomes = 0;
	MemoryContext iter_cxt;

	InitMaterializedSRF(fcinfo, 0);
	pg_prng_seed(&rng, (uint64) PG_GETARG_INT64(2));
	deconstruct_array(arr, BYTEAOID, -1, false, TYPALIGN_INT, &elems, &nulls,
					  &nfiles);
	if (nfiles == 0)
		elog(ERROR, "empty corpus");
	/* the dumps of the current format first, then the others */
	files = palloc(nfiles * sizeof(bytea *));
	for (int pass = 0, n = 0; pass < 2; pass++)
		for (int i = 0; i < nfiles; i++)
		{
			bytea	   *f = DatumGetByteaPP(elems[i]);

			if (fuzz_is_current(f) != (pass == 0))
				continue;
			files[n++] = f;
			ncurrent += (pass == 0);
			cap = Max(cap, VARSIZE_ANY_EXHDR(f));
		}
	cap = cap * 2 + 4096;
	b.data = palloc(cap);
	b.cap = cap;
	d.max_entries = cap / sizeof(NgDumpEntry);
	d.entry_at = palloc((d.max_entries + 1) * sizeof(size_t));
	d.max_plans = cap / sizeof(NgDumpPlan);
	d.plan_at = palloc((d.max_plans + 1) * sizeof(size_t));
	iter_cxt = AllocSetContextCreate(CurrentMemoryContext, "loader fuzz",
									 ALLOCSET_DEFAULT_SIZES);

	for (int64 it = 0; it < iterations; it++)
	{
		bytea	   *f = fuzz_pick(&rng, files, nfiles, ncurrent);
		bytea	   *o = fuzz_pick(&rng, files, nfiles, ncurrent);
		MemoryContext old;
		const char *why;
		bool		past_header;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(iter_cxt);
		why = fuzz_one(&rng, &b, &d, f, o, &past_header);
		MemoryContextSwitchTo(old);
		fuzz_count(outcomes, &noutcomes, why ? why : "sound", past_header);
		MemoryContextReset(iter_cxt);
	}

	for (int i = 0; i < noutcomes; i++)
	{
		Datum		values[3];
		bool		isnull[3] = {false, false, false};

		values[0] = CStringGetTextDatum(outcomes[i].why);
		values[1] = CStringGetTextDatum(outcomes[i].past_header ? "entries" : "header");
		values[2] = Int64GetDatum(outcomes[i].count);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
	}
	MemoryContextDelete(iter_cxt);
	return (Datum) 0;
}

#else

/* a release build has no fuzz entry point: an empty unit is not allowed */
typedef int ng_persist_fuzz_unused;

#endif							/* USE_ASSERT_CHECKING */
