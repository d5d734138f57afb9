/*-------------------------------------------------------------------------
 *
 * slots_fold.c
 *		Folding: moving a slot's counters into its entry and freeing the
 *		slot (ng_slot_release, and ng_slots_release_lru for eviction),
 *		touching only the histogram buckets the slot's samples can be in.
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
 * Locking.  A slot is folded, and zeroed, under its partition's lock held
 * exclusively, in the same critical section, so that a reader (who holds
 * it shared) sees each execution once; ng_slot_release takes that lock,
 * waiting only when its caller asks to (wait = true: at exit, and for the
 * last resort of slot_find_victim).  Pins are atomic counters, changed under
 * the partition lock.  The unadmitted counts go into the shared stats under
 * ng_shared->mutex.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "alloc.h"
#include "evict.h"
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

/*
 * slot_fold_locked
 *		Move slot i's counts into the shared table and free the slot.
 *		Caller holds the slot's partition lock exclusively.
 *
 *		A bound slot adds its counts to its entry (unless the entry is dead:
 *		a reset voided them) and drops its pin, freeing a dead entry when it
 *		was the last.  An unbound slot adds its counts to the key's entry if
 *		one exists by now; otherwise they go where evicted entries' counts
 *		go (evicted_calls), and are also counted as unadmitted_calls.
 */
static void
slot_fold_locked(int i)
{
	NgSlot	   *slot = slot_at(ngs_my_area, i);
	NgLocalSlot *ls = &ngs_local_slots[i];
	NgSharedPartition *part = &ng_shared->partitions[slot->partition];
	NgCounters *counts = &slot->counters;
	int			lo[NG_NUM_KINDS];
	int			hi[NG_NUM_KINDS];

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	pg_atomic_fetch_add_u64(&ng_shared->folds, 1);
	ng_slot_hist_range(counts, lo, hi);
	if (ls->entry != NULL)
	{
		NgSharedEntry *entry = ls->entry;

		if (!entry->dead)
		{
			ng_slot_merge(&entry->counters, counts,
						  slot->minmax_generation != entry->minmax_generation,
						  lo, hi);
			ng_evict_earn_usage(entry, counts->calls[NG_EXEC] + counts->calls[NG_PLAN]);
		}
		if (pg_atomic_sub_fetch_u32(&entry->pins, 1) == 0 && entry->dead)
			ng_entry_release_memory(entry, slot->entry);
	}
	else if (slot->partition_generation == part->generation &&
			 ng_counters_any(counts))
	{
		dsa_pointer dp;
		NgSharedEntry *entry = ng_entry_lookup(part, &slot->key,
											   ng_key_hash(&slot->key), &dp);

		if (entry != NULL)
		{
			ng_slot_merge(&entry->counters, counts, false, lo, hi);
			ng_evict_earn_usage(entry, counts->calls[NG_EXEC] + counts->calls[NG_PLAN]);
		}
		else
		{
			/*
			 * The statement never got an entry (the table was full of entries
			 * in use): its counts leave the table as an evicted entry's do,
			 * into evicted_calls and evicted_exec_time, so that sum(calls)
			 * plus evicted_calls still counts every execution.  Its failed
			 * executions, which are not calls, are counted as discarded.
			 */
			SpinLockAcquire(&ng_shared->mutex);
			ng_shared->stats.evicted_calls += counts->calls[NG_EXEC];
			ng_shared->stats.evicted_exec_time += counts->total_time[NG_EXEC];
			ng_shared->stats.unadmitted_calls += counts->calls[NG_EXEC];
			ng_shared->stats.counts_discarded += ng_counters_failed(counts);
			SpinLockRelease(&ng_shared->mutex);
		}
	}

	slot_begin_write(slot);
	slot->in_use = false;
	slot->entry = InvalidDsaPointer;
	ng_slot_clear(&slot->counters, lo, hi);
	ngs_my_area->partition_of[i] = NG_SLOT_FREE;
	slot_end_write(slot);

	{
		NgLocalEntry *le = nglocal_lookup(ngs_local_map, ls->key);

		if (le != NULL)
			le->slot = -1;
	}
	ls->in_use = false;
	ls->entry = NULL;
	ls->used = false;
	ngs_nfree++;
}

/*
 * ng_slot_release
 *		Fold slot i and free it.  With wait = false, gives up (returns
 *		false) if the partition lock is busy.  Caller holds no partition lock.
 */
bool
ng_slot_release(int i, bool wait)
{
	NgSlot	   *slot = slot_at(ngs_my_area, i);
	LWLock	   *lock = ng_shared->partitions[slot->partition].lock;

	if (wait)
		LWLockAcquire(lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(lock, LW_EXCLUSIVE))
	{
		ng_count_stat(&ng_shared->stats.lock_misses, 1);
		return false;
	}
	slot_fold_locked(i);
	LWLockRelease(lock);
	return true;
}

/*
 * ng_slots_release_lru
 *		The table is full of entries in use and a new statement needs one:
 *		release (fold and unpin) up to n of this backend's least recently
 *		used bound slots, without waiting, so that eviction can take the
 *		cold ones among their entries.  Without this, backends that each
 *		keep their last slots_per_backend statements bound could together
 *		pin the whole table, and a workload of ever-new statements would
 *		find nothing to evict.  Returns the number released.
 */
int
ng_slots_release_lru(int n)
{
	int			released = 0;

	if (ngs_my_area == NULL)
		return 0;
	while (released < n)
	{
		int			best = -1;

		for (int i = 0; i < ng_slots_per_backend; i++)
		{
			if (!ngs_local_slots[i].in_use || ngs_local_slots[i].entry == NULL)
				continue;
			if (best < 0 || ngs_local_slots[i].last_used < ngs_local_slots[best].last_used)
				best = i;
		}
		if (best < 0 || !ng_slot_release(best, false))
			break;
		released++;
	}
	return released;
}
