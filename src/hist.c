/*-------------------------------------------------------------------------
 *
 * hist.c
 *		The latency histograms' buckets: which bucket a duration falls in,
 *		a bucket's bounds; sparse histograms (hist.h): copying, adding,
 *		percentiles.
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

#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "hist.h"

StaticAssertDecl(NG_HIST_BUCKETS == 256,
				 "ng_hist_bucket's search assumes 256 buckets");

/* the table ng_hist_bucket (hist.h) reads: see there */
double		ng_hist_bounds[NG_HIST_BUCKETS];
NG_HOT int	ng_hist_slice_base;
NG_HOT double ng_hist_first_bound;
NG_HOT double ng_hist_last_bound;
NG_HOT const uint8 *ng_hist_slice_bucket = NULL;
static int	nslices;

/* by the definition: the largest b with ng_hist_bounds[b] <= ms, 0 if none */
static int
ng_hist_bucket_search(double ms)
{
	int			b = 0;

	for (int step = NG_HIST_BUCKETS / 2; step >= 1; step /= 2)
		if (ng_hist_bounds[b + step] <= ms)
			b += step;
	return b;
}

/*
 * ng_hist_init
 *		Build ng_hist_bucket's table, once, in _PG_init (so in the
 *		postmaster, whose children inherit it).
 */
void
ng_hist_init(void)
{
	uint8	   *slice_bucket;

	if (ng_hist_slice_bucket != NULL)
		return;
	ng_hist_bounds[0] = 0.0;
	for (int b = 1; b < NG_HIST_BUCKETS; b++)
		ng_hist_bounds[b] = ng_hist_lower(b);
	ng_hist_first_bound = ng_hist_bounds[1];
	ng_hist_last_bound = ng_hist_bounds[NG_HIST_BUCKETS - 1];
	ng_hist_slice_base = NG_HIST_SLICE(ng_hist_bounds[1]);
	nslices = NG_HIST_SLICE(ng_hist_bounds[NG_HIST_BUCKETS - 1]) -
		ng_hist_slice_base + 1;
	slice_bucket = MemoryContextAlloc(TopMemoryContext, nslices);
	for (int i = 0; i < nslices; i++)
	{
		uint64		bits = (uint64) (ng_hist_slice_base + i) << 48;
		double		low;

		memcpy(&low, &bits, sizeof(low));
		slice_bucket[i] = (uint8) ng_hist_bucket_search(low);
	}
	ng_hist_slice_bucket = slice_bucket;
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
		uint64		bits = (uint64) (ng_hist_slice_base + i) << 48;
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
 * ng_hist_midpoint
 *		What a percentile in bucket b is reported as: the bucket's geometric
 *		midpoint (for bucket 0, half its bound).
 */
double
ng_hist_midpoint(int bucket)
{
	if (bucket == 0)
		return NG_HIST_MIN_MS / 2;
	return ng_hist_lower(bucket) * sqrt(NG_HIST_RATIO);
}

/* count of bucket b of kind k in h (0 where h lacks its group) */
uint64
ng_hist_count(NgHistView h, int kind, int bucket)
{
	int			at = ng_hist_slot(h.mask, kind, bucket);

	return at < 0 ? 0 : h.groups[at];
}

/*
 * ng_hist_regroup
 *		Lay src out for dst_mask, a superset of src's mask, into dst: src's
 *		groups copied, the others zero.
 */
void
ng_hist_regroup(uint64 *dst, uint32 dst_mask, NgHistView src)
{
	const uint64 *from = src.groups;

	Assert((src.mask & ~dst_mask) == 0);
	for (int bit = 0; bit < 32; bit++)
	{
		if ((dst_mask & ((uint32) 1 << bit)) == 0)
			continue;
		if (src.mask & ((uint32) 1 << bit))
		{
			memcpy(dst, from, NG_HIST_GROUP_BYTES);
			from += NG_HIST_GROUP_SIZE;
		}
		else
			memset(dst, 0, NG_HIST_GROUP_BYTES);
		dst += NG_HIST_GROUP_SIZE;
	}
}

/* the groups (their bits) n cells fall in */
uint32
ng_hist_cells_mask(const NgHistCell *cells, int n)
{
	uint32		mask = 0;

	for (int c = 0; c < n; c++)
		mask |= ng_hist_group_bit(cells[c].kind, cells[c].bucket);
	return mask;
}

/*
 * ng_hist_add_cells
 *		dst (laid out for dst_mask, which has every cell's group) += n cells.
 */
void
ng_hist_add_cells(uint64 *dst, uint32 dst_mask, const NgHistCell *cells, int n)
{
	for (int c = 0; c < n; c++)
		dst[ng_hist_slot(dst_mask, cells[c].kind, cells[c].bucket)] +=
			cells[c].count;
}

/*
 * midpoints[b] = ng_hist_midpoint(b), for the readers' percentiles: computed
 * once by the same expression (same doubles), without allocating (readers
 * compute percentiles under a partition lock).
 */
static double midpoints[NG_HIST_BUCKETS];
static bool midpoints_ready = false;

static void
midpoints_init(void)
{
	for (int b = 0; b < NG_HIST_BUCKETS; b++)
		midpoints[b] = ng_hist_midpoint(b);
	midpoints_ready = true;
}

/*
 * ng_hist_percentiles
 *		For each of nfractions increasing fractions, the duration below which
 *		that fraction of kind's samples in h falls: the midpoint of the
 *		bucket holding the sample of rank ceil(fraction * total) (at least
 *		1), into ms[].  The total is the buckets' own, so a histogram that
 *		lacks samples (a group that could not be allocated, counted in
 *		dsa_failures) still gives percentiles of what it holds.  Two passes
 *		over the groups of kind only, the ranks computed once.  Returns
 *		false, and sets nothing, when there are no samples.
 */
bool
ng_hist_percentiles(NgHistView h, int kind, const double *fractions,
					int nfractions, double *ms)
{
	uint32		kind_bits = ((uint32) 1 << NG_HIST_GROUPS) - 1;
	uint32		kmask = (h.mask >> (kind * NG_HIST_GROUPS)) & kind_bits;
	const uint64 *groups;
	int			ngroups;
	uint64		total = 0;
	uint64		seen = 0;
	uint64		rank[NG_HIST_MAX_FRACTIONS];
	int			f = 0;

	Assert(nfractions <= NG_HIST_MAX_FRACTIONS);
	if (kmask == 0)
		return false;
	groups = h.groups +
		pg_popcount32(h.mask & ((((uint32) 1) << (kind * NG_HIST_GROUPS)) - 1)) *
		NG_HIST_GROUP_SIZE;
	ngroups = pg_popcount32(kmask);
	for (int i = 0; i < ngroups * NG_HIST_GROUP_SIZE; i++)
		total += groups[i];
	if (total == 0)
		return false;
	if (unlikely(!midpoints_ready))
		midpoints_init();
	for (int k = 0; k < nfractions; k++)
	{
		uint64		r = (uint64) ceil(fractions[k] * (double) total);

		Assert(k == 0 || fractions[k] >= fractions[k - 1]);
		rank[k] = Max(r, 1);
	}
	/* the groups of kind in bit order; groups advances with them */
	while (kmask != 0 && f < nfractions)
	{
		int			base = pg_rightmost_one_pos32(kmask) * NG_HIST_GROUP_SIZE;

		for (int i = 0; i < NG_HIST_GROUP_SIZE && f < nfractions; i++)
		{
			seen += groups[i];
			while (f < nfractions && seen >= rank[f])
				ms[f++] = midpoints[base + i];
		}
		kmask &= kmask - 1;
		groups += NG_HIST_GROUP_SIZE;
	}
	/* only if rounding put a rank beyond the total */
	while (f < nfractions)
		ms[f++] = ng_hist_lower(NG_HIST_BUCKETS - 1);
	return true;
}
