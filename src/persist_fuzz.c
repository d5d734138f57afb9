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
 * built with AddressSanitizer.  Each iteration takes a dump of the corpus,
 * mutates it (bits flipped, bytes and aligned 4- and 8-byte fields set to
 * boundary values, cuts, insertions, deletions, splices of two dumps),
 * fixes its CRC half of the time (so that the entries' checks, which a
 * wrong CRC does not skip, and the second pass, which it does, are both
 * reached), copies it into a malloc'd block of exactly its size (so that
 * ASan sees a read one byte past its end), and hands it to
 * ng_persist_check_buffer, which checks it as the loader checks a file.
 * Returns one row per outcome: why the loader refused the input (its
 * reason cut before the first digit), or 'sound', and how often.
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
	int64		count;
} FuzzOutcome;

static const uint64 fuzz_values[] = {
	0, 1, 2, 3, 4, 7, 8, 16, 64, 127, 128, 255, 256, 1024, 65535, 65536,
	PG_INT32_MAX, (uint64) PG_INT32_MAX + 1, PG_UINT32_MAX - 1, PG_UINT32_MAX,
	(uint64) PG_INT64_MAX, (uint64) PG_INT64_MAX + 1, PG_UINT64_MAX - 1,
	PG_UINT64_MAX
};

/*
 * fuzz_mutate
 *		One mutation of buf (*len bytes, room for cap), at random.
 */
static void
fuzz_mutate(pg_prng_state *rng, char *buf, size_t *len, size_t cap,
			const char *other, size_t other_len)
{
	size_t		n = *len;
	size_t		at = n > 0 ? pg_prng_uint64_range(rng, 0, n - 1) : 0;
	uint64		v = fuzz_values[pg_prng_uint64_range(rng, 0, lengthof(fuzz_values) - 1)];
	size_t		k;

	switch (pg_prng_uint64_range(rng, 0, 7))
	{
		case 0:					/* flip a bit */
			if (n > 0)
				buf[at] ^= (char) (1 << pg_prng_uint64_range(rng, 0, 7));
			break;
		case 1:					/* a byte to a boundary value */
			if (n > 0)
				buf[at] = (char) v;
			break;
		case 2:					/* an aligned 4-byte field */
			at &= ~(size_t) 3;
			if (at + 4 <= n)
			{
				uint32		v32 = (uint32) v;

				if (pg_prng_bool(rng))
					v32 = (uint32) (v32 + (int) pg_prng_uint64_range(rng, 0, 2) - 1);
				memcpy(buf + at, &v32, 4);
			}
			break;
		case 3:					/* an aligned 8-byte field */
			at &= ~(size_t) 7;
			if (at + 8 <= n)
				memcpy(buf + at, &v, 8);
			break;
		case 4:					/* cut */
			*len = at;
			break;
		case 5:					/* insert random bytes */
			k = pg_prng_uint64_range(rng, 1, 64);
			if (n + k <= cap)
			{
				memmove(buf + at + k, buf + at, n - at);
				for (size_t i = 0; i < k; i++)
					buf[at + i] = (char) pg_prng_uint32(rng);
				*len = n + k;
			}
			break;
		case 6:					/* delete a range */
			k = pg_prng_uint64_range(rng, 1, 256);
			if (at + k <= n)
			{
				memmove(buf + at, buf + at + k, n - at - k);
				*len = n - k;
			}
			break;
		case 7:					/* splice: this head, the other's tail */
			if (other_len > 0)
			{
				size_t		from = pg_prng_uint64_range(rng, 0, other_len - 1);

				k = Min(other_len - from, cap - at);
				memcpy(buf + at, other + from, k);
				*len = at + k;
			}
			break;
	}
}

/* The CRC trailer of buf made right for its body */
static void
fuzz_fix_crc(char *buf, size_t len)
{
	pg_crc32c	crc;

	if (len < sizeof(pg_crc32c))
		return;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, buf, len - sizeof(pg_crc32c));
	FIN_CRC32C(crc);
	memcpy(buf + len - sizeof(pg_crc32c), &crc, sizeof(crc));
}

/* Count an outcome: the reason cut before its first digit */
static void
fuzz_count(FuzzOutcome *outcomes, int *n, const char *why)
{
	size_t		len = strcspn(why, "0123456789(");

	for (int i = 0; i < *n; i++)
		if (strncmp(outcomes[i].why, why, len) == 0 && outcomes[i].why[len] == '\0')
		{
			outcomes[i].count++;
			return;
		}
	if (*n == FUZZ_MAX_OUTCOMES)
		elog(ERROR, "more than %d outcomes", FUZZ_MAX_OUTCOMES);
	outcomes[*n].why = pnstrdup(why, len);
	outcomes[*n].count = 1;
	(*n)++;
}

/*
 * pg_stat_statements_ng_fuzz_loader(corpus bytea[], iterations int8, seed
 * int8) RETURNS TABLE (outcome text, count int8)
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
	size_t		cap = 0;
	char	   *buf;
	FuzzOutcome outcomes[FUZZ_MAX_OUTCOMES];
	int			noutcomes = 0;
	MemoryContext iter_cxt;

	InitMaterializedSRF(fcinfo, 0);
	pg_prng_seed(&rng, (uint64) PG_GETARG_INT64(2));
	deconstruct_array(arr, BYTEAOID, -1, false, TYPALIGN_INT, &elems, &nulls,
					  &nfiles);
	if (nfiles == 0)
		elog(ERROR, "empty corpus");
	for (int i = 0; i < nfiles; i++)
		cap = Max(cap, VARSIZE_ANY_EXHDR(DatumGetPointer(elems[i])));
	cap = cap * 2 + 4096;
	buf = palloc(cap);
	iter_cxt = AllocSetContextCreate(CurrentMemoryContext, "loader fuzz",
									 ALLOCSET_DEFAULT_SIZES);

	for (int64 it = 0; it < iterations; it++)
	{
		bytea	   *f = DatumGetByteaPP(elems[pg_prng_uint64_range(&rng, 0, nfiles - 1)]);
		bytea	   *o = DatumGetByteaPP(elems[pg_prng_uint64_range(&rng, 0, nfiles - 1)]);
		size_t		len = VARSIZE_ANY_EXHDR(f);
		int			nmut = (int) pg_prng_uint64_range(&rng, 1, 4);
		char	   *input;
		const char *why;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		memcpy(buf, VARDATA_ANY(f), len);
		for (int m = 0; m < nmut; m++)
			fuzz_mutate(&rng, buf, &len, cap, VARDATA_ANY(o), VARSIZE_ANY_EXHDR(o));
		if (pg_prng_bool(&rng))
			fuzz_fix_crc(buf, len);
		/* exactly len bytes: a read past them is ASan's to see */
		input = malloc(Max(len, 1));
		if (input == NULL)
			elog(ERROR, "out of memory");
		memcpy(input, buf, len);
		old = MemoryContextSwitchTo(iter_cxt);
		why = ng_persist_check_buffer(input, len);
		MemoryContextSwitchTo(old);
		fuzz_count(outcomes, &noutcomes, why ? why : "sound");
		free(input);
		MemoryContextReset(iter_cxt);
	}

	for (int i = 0; i < noutcomes; i++)
	{
		Datum		values[2];
		bool		isnull[2] = {false, false};

		values[0] = CStringGetTextDatum(outcomes[i].why);
		values[1] = Int64GetDatum(outcomes[i].count);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
	}
	MemoryContextDelete(iter_cxt);
	return (Datum) 0;
}

#else

/* a release build has no fuzz entry point: an empty unit is not allowed */
typedef int ng_persist_fuzz_unused;

#endif							/* USE_ASSERT_CHECKING */
