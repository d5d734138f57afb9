/*-------------------------------------------------------------------------
 *
 * hist.h
 *		The latency histograms (hist.c): the bucket of a duration, a
 *		bucket's lower bound, and the sparse form every histogram of a
 *		statement takes outside a slot: groups of 16 buckets, only those a
 *		sample fell in, with 64-bit counts.
 *
 * Locks: none; callers own the histograms they pass.  ng_hist_bucket
 * reads a table that _PG_init builds (ng_hist_init, in the postmaster's
 * memory, which every process inherits).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_HIST_H
#define NG_HIST_H

#include "port/pg_bitutils.h"

#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

/*
 * Latency histograms: bucket 0 holds durations under NG_HIST_MIN_MS; bucket
 * b >= 1 holds [NG_HIST_MIN_MS * r^(b-1), NG_HIST_MIN_MS * r^b) with
 * r = NG_HIST_RATIO, up to about ten hours; the last bucket takes the rest.
 * A percentile is reported as its bucket's geometric midpoint, within
 * sqrt(r) - 1 = 4.9% of the true value.
 */
#define NG_HIST_BUCKETS		256
#define NG_HIST_MIN_MS		0.001
#define NG_HIST_RATIO		1.1

/*
 * The sparse form.  The buckets of one kind are cut into NG_HIST_GROUPS
 * groups of NG_HIST_GROUP_SIZE; group g of kind k is bit k * NG_HIST_GROUPS
 * + g of a 32-bit mask, and a histogram holds the groups of its mask's bits,
 * in bit order, each NG_HIST_GROUP_SIZE uint64 counts (128 bytes).  A
 * statement whose durations stay within a factor of 4.6 touches one or two
 * groups per kind.  64-bit counts cannot wrap.
 */
#define NG_HIST_GROUP_SIZE	16
#define NG_HIST_GROUPS		(NG_HIST_BUCKETS / NG_HIST_GROUP_SIZE)
#define NG_HIST_GROUP_BYTES	(NG_HIST_GROUP_SIZE * sizeof(uint64))

static inline uint32
ng_hist_group_bit(int kind, int bucket)
{
	return (uint32) 1 << (kind * NG_HIST_GROUPS + bucket / NG_HIST_GROUP_SIZE);
}

/* bytes of a sparse histogram's groups */
static inline Size
ng_hist_groups_size(uint32 mask)
{
	return (Size) pg_popcount32(mask) * NG_HIST_GROUP_BYTES;
}

/*
 * A sparse histogram: mask and groups, somewhere (shared memory under a
 * lock, or a reader's copy).
 */
typedef struct NgHistView
{
	uint32		mask;
	const uint64 *groups;		/* ng_hist_groups_size(mask) bytes */
} NgHistView;

/*
 * ng_hist_slot
 *		Where bucket b of kind k is in groups laid out for mask, or -1 if
 *		mask lacks its group.
 */
static inline int
ng_hist_slot(uint32 mask, int kind, int bucket)
{
	uint32		bit = ng_hist_group_bit(kind, bucket);

	if ((mask & bit) == 0)
		return -1;
	return pg_popcount32(mask & (bit - 1)) * NG_HIST_GROUP_SIZE +
		bucket % NG_HIST_GROUP_SIZE;
}

/*
 * One bucket's count in a slot (slots.h), chained with the slot's other
 * cells; also a reader's copy of it.
 */
typedef struct NgHistCell
{
	uint16		next;			/* next cell of the slot, or NG_NO_CELL */
	uint8		kind;
	uint8		bucket;
	uint32		count;
} NgHistCell;

/*
 * ng_hist_bucket's table (hist.c), built by ng_hist_init from _PG_init.  A
 * double's sign, exponent and top 4 mantissa bits (its bits >> 48) name a
 * slice of the number line whose ends differ by a ratio of at most 1 + 1/16
 * < NG_HIST_RATIO, so at most one bound falls inside a slice: slice_bucket
 * holds the bucket of each slice's lowest value, and a duration is in that
 * bucket or the next.  Slices from NG_HIST_MIN_MS's to the last bound's.
 * ng_hist_bounds[b] = ng_hist_lower(b) for b >= 1; [0] is never read.
 * ng_hist_first_bound and ng_hist_last_bound are copies of [1] and of the
 * last, read by every sample, on the hooks' cache lines (NG_HOT).
 */
extern double ng_hist_bounds[NG_HIST_BUCKETS];
extern double ng_hist_first_bound;
extern double ng_hist_last_bound;
extern int	ng_hist_slice_base;
extern const uint8 *ng_hist_slice_bucket;
extern void ng_hist_init(void);

static inline uint64
ng_double_bits(double d)
{
	uint64		bits;

	memcpy(&bits, &d, sizeof(bits));
	return bits;
}
#define NG_HIST_SLICE(ms)	((int) (ng_double_bits(ms) >> 48))

/*
 * ng_hist_bucket
 *		The histogram bucket of a duration in ms: the largest b with
 *		ng_hist_lower(b) <= ms (0 if none, and for NaN).  Inline, without a
 *		log(): a table lookup by the slice, then one comparison.
 */
static inline int
ng_hist_bucket(double ms)
{
	int			b;

	Assert(ng_hist_slice_bucket != NULL);
	if (!(ms >= ng_hist_first_bound))	/* also NaN */
		return 0;
	if (unlikely(ms >= ng_hist_last_bound))
		return NG_HIST_BUCKETS - 1;
	b = ng_hist_slice_bucket[NG_HIST_SLICE(ms) - ng_hist_slice_base];
	/* b < NG_HIST_BUCKETS - 1 here: ms is below the last bound */
	if (ms >= ng_hist_bounds[b + 1])
		b++;
	return b;
}

extern double ng_hist_lower(int bucket);
extern double ng_hist_midpoint(int bucket);
extern uint64 ng_hist_count(NgHistView h, int kind, int bucket);
extern void ng_hist_regroup(uint64 *dst, uint32 dst_mask, NgHistView src);
extern uint32 ng_hist_cells_mask(const NgHistCell *cells, int n);
extern void ng_hist_add_cells(uint64 *dst, uint32 dst_mask,
							  const NgHistCell *cells, int n);

/* the most fractions ng_hist_percentiles computes at once */
#define NG_HIST_MAX_FRACTIONS	8

extern bool ng_hist_percentiles(NgHistView h, int kind,
								const double *fractions, int nfractions,
								double *ms);
extern int	ng_hist_check(void);

#pragma GCC visibility pop

#endif							/* NG_HIST_H */
