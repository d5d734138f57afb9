/*-------------------------------------------------------------------------
 *
 * slots_fold.c
 *		Moving a slot's counters into an entry, and clearing them, touching
 *		only the histogram buckets the slot's samples can be in.
 *
 * Why a file of its own: a slot usually holds a few samples when it is
 * folded (a new statement: one), yet its counters carry two histograms of
 * NG_HIST_BUCKETS buckets.  Merging and clearing all of them cost more than
 * the rest of the fold together.  No field records which buckets a slot
 * touched; the slot's min and max times tell: every successful sample of a
 * kind was recorded with ng_hist_bucket() of its time, and lies between
 * min_time and max_time as long as min/max were never cleared in the slot
 * (minmax_calls == calls), so its bucket lies between theirs.  Those are
 * bounded from the binary exponents of min and max, without a log(): a
 * range about ten buckets wider than needed, which is still far cheaper
 * than all of them.  Bucket 0 (also where NaN goes) is always included,
 * and a slot whose min/max cannot be trusted is merged and cleared whole.
 *
 * The merge of everything but the histograms and the per-kind means is
 * ng_counters_merge's (counters.c), on a copy of the slot's counters that
 * stops before the histograms and claims no calls; the per-kind part here
 * must stay the same as there.
 *
 * Locking.  None of its own: callers hold the lock that protects dst (the
 * entry's partition lock, exclusively) and own the slot they clear, inside
 * its write section.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "hist.h"
#include "slots_int.h"

/* where the fields after the histograms begin */
#define NG_HIST_END \
	(offsetof(NgCounters, hist) + sizeof(((NgCounters *) NULL)->hist))

/*
 * hist_bound
 *		A bucket at or below (upper: at or above) ng_hist_bucket(ms), for
 *		ms >= 0, found from the binary exponent of ms / NG_HIST_MIN_MS (read
 *		from its IEEE 754 representation) rather than its logarithm: with y = f * 2^e, 1/2 <= f < 1, log(y) /
 *		log(NG_HIST_RATIO) lies between (e - 1) * c and e * c, where c =
 *		log(2) / log(NG_HIST_RATIO).  About c + 2 buckets wide (9 for a
 *		ratio of 1.1), one more on each side against rounding.  Bucket 0,
 *		which callers always include, is left out: a lower bound is at least
 *		1, and the upper bound of a duration in bucket 0 is 0.
 */
static inline int
hist_bound(double ms, bool upper)
{
	double		c = log(2.0) / log(NG_HIST_RATIO);	/* a constant */
	double		y;
	uint64		bits;
	int			e;
	double		b;

	if (!(ms >= NG_HIST_MIN_MS))
		return upper ? 0 : 1;	/* bucket 0 */
	if (isinf(ms))
		return upper ? NG_HIST_BUCKETS - 1 : 1;
	StaticAssertStmt(sizeof(y) == sizeof(bits), "double is not 64 bits");
	y = ms / NG_HIST_MIN_MS;	/* as ng_hist_bucket computes it */
	memcpy(&bits, &y, sizeof(bits));
	e = (int) ((bits >> 52) & 0x7FF) - 1022;	/* frexp's, y >= 1 normal */
	if (upper)
		b = floor(e * c) + 2;
	else
		b = floor((e - 1) * c);
	return (int) Max(Min(b, (double) (NG_HIST_BUCKETS - 1)), 1.0);
}

/*
 * ng_slot_hist_range
 *		The range [lo[k], hi[k]] of buckets other than bucket 0 that c's
 *		samples of kind k can be in (empty, lo > hi, without samples).
 */
void
ng_slot_hist_range(const NgCounters *c, int *lo, int *hi)
{
	for (int k = 0; k < NG_NUM_KINDS; k++)
	{
		if (c->calls[k] == 0)
		{
			lo[k] = 1;
			hi[k] = 0;
		}
		else if (c->minmax_calls[k] != c->calls[k] ||
				 !(c->min_time[k] <= c->max_time[k]))	/* also NaN */
		{
			lo[k] = 1;
			hi[k] = NG_HIST_BUCKETS - 1;
		}
		else
		{
			lo[k] = hist_bound(c->min_time[k], false);
			hi[k] = hist_bound(c->max_time[k], true);
		}
	}
}

/*
 * ng_slot_merge
 *		dst += src, as ng_counters_merge does, for a slot's src whose
 *		buckets lie in the ranges ng_slot_hist_range gave (lo, hi); with
 *		clear_minmax, as if src's min/max had been cleared first.
 */
void
ng_slot_merge(NgCounters *dst, const NgCounters *src, bool clear_minmax,
			  const int *lo, const int *hi)
{
	NgCounters	rest;

	/* everything but the histograms and the tail; no calls claimed */
	memcpy(&rest, src, offsetof(NgCounters, hist));
	memcpy((char *) &rest + NG_HIST_END, (const char *) src + NG_HIST_END,
		   sizeof(NgCounters) - NG_HIST_END);
	for (int k = 0; k < NG_NUM_KINDS; k++)
		rest.calls[k] = 0;
	if (clear_minmax)
		ng_counters_clear_minmax(&rest);
	ng_counters_merge(dst, &rest);

	for (int k = 0; k < NG_NUM_KINDS; k++)
	{
		int64		na = dst->calls[k];
		int64		nb = src->calls[k];
		double		n;
		double		delta;

		if (nb == 0)
			continue;
		/* as in ng_counters_merge: Chan et al. */
		n = (double) (na + nb);
		delta = src->mean_time[k] - dst->mean_time[k];
		dst->sum_var_time[k] += src->sum_var_time[k] +
			delta * delta * ((double) na * (double) nb / n);
		dst->mean_time[k] += delta * ((double) nb / n);
		dst->calls[k] = na + nb;
		dst->total_time[k] += src->total_time[k];

		dst->hist[k][0] += src->hist[k][0];
		for (int b = lo[k]; b <= hi[k]; b++)
			dst->hist[k][b] += src->hist[k][b];
	}
}

/*
 * ng_slot_clear
 *		Zero a slot's counters c, whose buckets lie in the ranges that
 *		ng_slot_hist_range gave (lo, hi).  Caller is inside the slot's write
 *		section.
 */
void
ng_slot_clear(NgCounters *c, const int *lo, const int *hi)
{
	for (int k = 0; k < NG_NUM_KINDS; k++)
	{
		c->hist[k][0] = 0;
		if (lo[k] <= hi[k])
			memset(&c->hist[k][lo[k]], 0,
				   sizeof(c->hist[k][0]) * (hi[k] - lo[k] + 1));
	}
	memset(c, 0, offsetof(NgCounters, hist));
	memset((char *) c + NG_HIST_END, 0, sizeof(NgCounters) - NG_HIST_END);
#ifdef USE_ASSERT_CHECKING
	{
		static const NgCounters zero;

		Assert(memcmp(c, &zero, sizeof(NgCounters)) == 0);
	}
#endif
}
