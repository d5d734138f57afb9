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
 * bucket everything above.  ng_hist_bucket searches a table of those very
 * bounds (8 comparisons, no log()), so it agrees with the definition at and
 * around every boundary, which ng_hist_check verifies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "pg_stat_statements_ng.h"

StaticAssertDecl(NG_HIST_BUCKETS == 256,
				 "ng_hist_bucket's search assumes 256 buckets");

/* bounds[b] = ng_hist_lower(b) for b >= 1; bounds[0] is never read */
static double bounds[NG_HIST_BUCKETS];
static bool bounds_ready = false;

static void
ng_hist_init(void)
{
	bounds[0] = 0.0;
	for (int b = 1; b < NG_HIST_BUCKETS; b++)
		bounds[b] = ng_hist_lower(b);
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
	int			b = 0;

	if (unlikely(!bounds_ready))
		ng_hist_init();
	/* binary search; each step keeps bounds[b] <= ms (or b = 0) */
#define NG_HIST_STEP(s) \
	do { if (bounds[b + (s)] <= ms) b += (s); } while (0)
	NG_HIST_STEP(128);
	NG_HIST_STEP(64);
	NG_HIST_STEP(32);
	NG_HIST_STEP(16);
	NG_HIST_STEP(8);
	NG_HIST_STEP(4);
	NG_HIST_STEP(2);
	NG_HIST_STEP(1);
#undef NG_HIST_STEP
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

		/* the definition: lo is in b, the double below it in b - 1 */
		if (ng_hist_bucket(lo) != b)
			wrong++;
		if (ng_hist_bucket(nextafter(lo, 0.0)) != b - 1)
			wrong++;
		if (ng_hist_bucket(nextafter(lo, HUGE_VAL)) != b)
			wrong++;
		/* and bounds grow: every bucket is non-empty */
		if (!(lo > ng_hist_lower(b - 1)))
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
