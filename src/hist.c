/*-------------------------------------------------------------------------
 *
 * hist.c
 *		The latency histograms' buckets: which bucket a duration falls in,
 *		a bucket's bounds, and percentiles from a histogram.
 *
 * Why a file of its own: the bucket of every sample is computed on the hot
 * path, and must agree exactly with the bounds that readers report.
 *
 * The definition (pg_stat_statements_ng.h): bucket 0 holds durations under
 * NG_HIST_MIN_MS, bucket b >= 1 holds [ng_hist_lower(b), ng_hist_lower(b+1))
 * with ng_hist_lower(b) = NG_HIST_MIN_MS * NG_HIST_RATIO^(b-1), and the last
 * bucket everything above.  ng_hist_bucket compares with a table of those
 * very bounds (no log(): a table lookup by the double's exponent and top
 * mantissa bits, then one comparison), so it agrees with the definition at
 * and around every boundary, which ng_hist_check verifies against a binary
 * search of the bounds.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "hist.h"
#include "utils/memutils.h"

StaticAssertDecl(NG_HIST_BUCKETS == 256,
				 "ng_hist_bucket's search assumes 256 buckets");

/* bounds[b] = ng_hist_lower(b) for b >= 1; bounds[0] is never read */
static double bounds[NG_HIST_BUCKETS];

/*
 * A double's sign, exponent and top 4 mantissa bits (its bits >> 48) name a
 * slice of the number line whose ends differ by a ratio of at most 1 + 1/16
 * < NG_HIST_RATIO, so at most one bound falls inside a slice: slice_bucket[]
 * holds the bucket of each slice's lowest value, and a duration is in that
 * bucket or the next.  Slices from NG_HIST_MIN_MS's to the last bound's.
 */
#define NG_HIST_SLICE(ms)	((int) (ng_double_bits(ms) >> 48))
static int	slice_base;
static int	nslices;
static uint8 *slice_bucket;
static bool bounds_ready = false;

static inline uint64
ng_double_bits(double d)
{
	uint64		bits;

	memcpy(&bits, &d, sizeof(bits));
	return bits;
}

/* by the definition: the largest b with bounds[b] <= ms, 0 if none */
static int
ng_hist_bucket_search(double ms)
{
	int			b = 0;

	for (int step = NG_HIST_BUCKETS / 2; step >= 1; step /= 2)
		if (bounds[b + step] <= ms)
			b += step;
	return b;
}

static void
ng_hist_init(void)
{
	bounds[0] = 0.0;
	for (int b = 1; b < NG_HIST_BUCKETS; b++)
		bounds[b] = ng_hist_lower(b);
	slice_base = NG_HIST_SLICE(bounds[1]);
	nslices = NG_HIST_SLICE(bounds[NG_HIST_BUCKETS - 1]) - slice_base + 1;
	slice_bucket = MemoryContextAlloc(TopMemoryContext, nslices);
	for (int i = 0; i < nslices; i++)
	{
		uint64		bits = (uint64) (slice_base + i) << 48;
		double		low;

		memcpy(&low, &bits, sizeof(low));
		slice_bucket[i] = (uint8) ng_hist_bucket_search(low);
	}
	bounds_ready = true;
}

/*
 * ng_hist_bucket
 *		The histogram bucket of a duration in ms: the largest b with
 *		ng_hist_lower(b) <= ms (0 if none, and for NaN).
 */
int
ng_hist_bucket(double ms)
{
	int			b;

	if (unlikely(!bounds_ready))
		ng_hist_init();
	if (!(ms >= bounds[1]))		/* also NaN */
		return 0;
	if (unlikely(ms >= bounds[NG_HIST_BUCKETS - 1]))
		return NG_HIST_BUCKETS - 1;
	b = slice_bucket[NG_HIST_SLICE(ms) - slice_base];
	/* b < NG_HIST_BUCKETS - 1 here: ms is below the last bound */
	if (ms >= bounds[b + 1])
		b++;
	return b;
}

/*
 * ng_hist_lower
 *		The lower bound, in ms, of a bucket (0 for bucket 0).
 */
double
ng_hist_lower(int bucket)
{
	if (bucket <= 0)
		return 0.0;
	return NG_HIST_MIN_MS * pow(NG_HIST_RATIO, bucket - 1);
}

/*
 * ng_hist_check
 *		The number of durations, at and next to each bucket's bounds, that
 *		ng_hist_bucket puts in another bucket than the definition does; 0 when
 *		all is well.  Run at startup by assertion builds (hooks.c).
 */
int
ng_hist_check(void)
{
	int			wrong = 0;

	for (int b = 1; b < NG_HIST_BUCKETS; b++)
	{
		double		lo = ng_hist_lower(b);

		double		mid = lo * sqrt(NG_HIST_RATIO);

		/* the definition: lo is in b, the double below it in b - 1 */
		if (ng_hist_bucket(lo) != b || ng_hist_bucket_search(lo) != b)
			wrong++;
		if (ng_hist_bucket(nextafter(lo, 0.0)) != b - 1)
			wrong++;
		if (ng_hist_bucket(nextafter(lo, HUGE_VAL)) != b)
			wrong++;
		/* inside the bucket */
		if (ng_hist_bucket(mid) != ng_hist_bucket_search(mid) ||
			(b < NG_HIST_BUCKETS - 1 && ng_hist_bucket(mid) != b))
			wrong++;
		/* and bounds grow: every bucket is non-empty */
		if (!(lo > ng_hist_lower(b - 1)))
			wrong++;
	}
	/* both ends of every slice of the table */
	for (int i = 0; i < nslices; i++)
	{
		uint64		bits = (uint64) (slice_base + i) << 48;
		double		low;

		memcpy(&low, &bits, sizeof(low));
		if (ng_hist_bucket(low) != ng_hist_bucket_search(low) ||
			ng_hist_bucket(nextafter(low, 0.0)) !=
			ng_hist_bucket_search(nextafter(low, 0.0)))
			wrong++;
	}
	if (ng_hist_bucket(0.0) != 0 || ng_hist_bucket(-1.0) != 0 ||
		ng_hist_bucket(NAN) != 0 ||
		ng_hist_bucket(HUGE_VAL) != NG_HIST_BUCKETS - 1)
		wrong++;
	return wrong;
}

/*
 * ng_hist_percentiles
 *		For each of nfractions increasing fractions, the duration below which
 *		that fraction of samples falls: the geometric midpoint of the bucket
 *		holding the sample of rank ceil(fraction * total) (for bucket 0, half
 *		its bound), into ms[].  All in two passes over the buckets, since a
 *		reader computes several for each of many entries.  Returns false, and
 *		sets nothing, when there are no samples.
 */
bool
ng_hist_percentiles(const NgCounters *c, int kind, const double *fractions,
					int nfractions, double *ms)
{
	const uint32 *hist = c->hist[kind];
	uint64		total = 0;
	uint64		seen = 0;
	int			f = 0;

	for (int b = 0; b < NG_HIST_BUCKETS; b++)
		total += hist[b];
	if (total == 0)
		return false;
	for (int b = 0; b < NG_HIST_BUCKETS && f < nfractions; b++)
	{
		seen += hist[b];
		while (f < nfractions)
		{
			uint64		rank = (uint64) ceil(fractions[f] * (double) total);

			Assert(f == 0 || fractions[f] >= fractions[f - 1]);
			if (seen < Max(rank, 1))
				break;
			ms[f++] = b == 0 ? NG_HIST_MIN_MS / 2 :
				ng_hist_lower(b) * sqrt(NG_HIST_RATIO);
		}
	}
	/* only if rounding put a rank beyond the total */
	while (f < nfractions)
		ms[f++] = ng_hist_lower(NG_HIST_BUCKETS - 1);
	return true;
}
