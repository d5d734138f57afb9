/*-------------------------------------------------------------------------
 *
 * fold.c
 *		Folding: moving a slot's counts into its entry, and freeing the slot
 *		(ng_slot_release, and ng_slots_release_idle for eviction) or keeping
 *		it bound, empty (ng_slots_reclaim_cells, when the cell pool runs
 *		short).
 *
 * Why a file of its own: a fold is where a slot's sparse histogram cells
 * (slots.h) become the entry's 64-bit groups (entry_hist.h), whose memory
 * must be had before the lock: the groups the slot's cells need, less
 * those the entry already has (read without the lock, a hint), are
 * allocated as spares first.
 *
 * Locking.  A slot is folded, and zeroed, under its partition's lock held
 * exclusively, in the same critical section, so that a reader (who holds
 * it shared) sees each execution once; ng_slot_release takes that lock,
 * waiting only when its caller asks to (wait = true: at exit, and for the
 * last resort of slot_find_victim).  Pins are atomic counters, changed under
 * the partition lock.  The unadmitted counts go into this backend's
 * refused counts (slots.h), which only it writes, in a write section of
 * their own: no lock.  Spares are allocated with no lock held.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "alloc.h"
#include "entry_hist.h"
#include "evict.h"
#include "history.h"
#include "plans.h"
#include "slots_int.h"

/*
 * slot_hist_need
 *		The histogram groups (hist.h) slot's cells fall in.
 */
static uint32
slot_hist_need(NgSlot *slot)
{
	NgHistCell *pool = ngs_pool;
	uint32		need = 0;

	for (uint16 at = slot->hist_head; at != NG_NO_CELL; at = pool[at].next)
		need |= ng_hist_group_bit(pool[at].kind, pool[at].bucket);
	return need;
}

/*
 * slot_merge_into
 *		entry += slot's counts, histogram cells included.  Caller holds the
 *		partition lock exclusively.
 */
static void
slot_merge_into(NgSharedEntry *entry, NgSlot *slot, bool clear_minmax)
{
	NgHistCell *pool = ngs_pool;
	NgCounters *counts = &slot->counters;

	/*
	 * Segments first: an error mapping one must come before anything is
	 * added, or the counts would be in the entry and still in the slot.
	 */
	ng_entry_hist_map(entry);
	if (clear_minmax)
	{
		NgCounters	copy = *counts;

		ng_counters_clear_minmax(&copy);
		ng_counters_merge(&entry->counters, &copy);
	}
	else
		ng_counters_merge(&entry->counters, counts);
	for (uint16 at = slot->hist_head; at != NG_NO_CELL; at = pool[at].next)
		(void) ng_entry_hist_add(entry, pool[at].kind, pool[at].bucket,
								 pool[at].count);
	ng_evict_earn_usage(entry, counts->calls[NG_EXEC] + counts->calls[NG_PLAN]);
}

/*
 * ng_slot_count_refused
 *		Add executions that have no entry (calls successful ones of
 *		exec_time ms in all, failed failed ones; refusals of them refused by
 *		the admission filter at their execution) to this backend's refused
 *		counts (slots.h, NgRefusedCounts), in a write section of their own,
 *		as slot_record adds to a slot: no lock, no atomic read-modify-write.
 *		Counts of an older stats generation are cleared first.  A full reset
 *		that bumps the generation while we write would void these counts,
 *		which end after it: then add them again, in the new generation (a
 *		full barrier orders the write before the second read of the
 *		generation).  Caller may hold a partition lock (a fold).
 */
void
ng_slot_count_refused(int64 calls, double exec_time, int64 failed,
					  int64 refusals)
{
	NgBackendSlots *area = ngs_my_area;
	volatile uint32 *generation = &ng_shared->stats_generation;

	for (int attempt = 0;; attempt++)
	{
		uint32		gen;

		write_section_begin(&area->refused_changecount);
		gen = *generation;
		if (area->refused_generation != gen)
		{
			memset(&area->refused, 0, sizeof(NgRefusedCounts));
			area->refused_generation = gen;
		}
		area->refused.calls += calls;
		area->refused.exec_time += exec_time;
		area->refused.failed += failed;
		area->refused.refusals += refusals;
		write_section_end(&area->refused_changecount);
		pg_memory_barrier();
		if (likely(*generation == gen) || attempt > 0)
			break;
	}
}

/*
 * slot_move_counts
 *		Move slot i's counts into the shared table (the slot itself is the
 *		caller's to clear).  Caller holds the slot's partition lock
 *		exclusively.
 *
 *		While the backend exits nothing can be allocated (alloc.c): if the
 *		entry lacks a histogram group the slot needs and no spare is left,
 *		nothing is moved and false returned; the slot stays in use, counted
 *		by readers, and the next backend with this process number folds it
 *		(slots_inherit).  Otherwise (spares were just allocated, or a few
 *		are kept: NG_HIST_SPARES_KEPT) a group DSA refused leaves its
 *		samples out of the histogram only.
 *
 *		A bound slot adds its counts to its entry (unless the entry is dead:
 *		a reset voided them).  An unbound slot adds its counts to the key's
 *		entry if one exists by now; otherwise they go where evicted entries'
 *		counts go (evicted_calls), and are also counted as unadmitted_calls.
 */
static bool
slot_move_counts(int i, NgSharedPartition *part)
{
	NgSlot	   *slot = slot_at(ngs_my_area, i);
	NgLocalSlot *ls = &ngs_local_slots[i];
	NgCounters *counts = &slot->counters;
	NgSharedEntry *entry = NULL;
	dsa_pointer dp;

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	if (ls->entry != NULL)
		entry = ls->entry->dead ? NULL : ls->entry;
	else if (slot->partition_generation == part->generation &&
			 ng_counters_any(counts))
		entry = ng_entry_lookup(part, &slot->key, ng_key_hash(&slot->key),
								&dp);
	if (entry != NULL && ngs_exiting &&
		!ng_entry_hist_fits(entry, slot_hist_need(slot)))
		return false;

	pg_atomic_fetch_add_u64(&ng_shared->folds, 1);
	if (ls->entry != NULL)
	{
		if (entry != NULL)
			slot_merge_into(entry, slot,
							slot->minmax_generation != entry->minmax_generation);
	}
	else if (slot->partition_generation == part->generation &&
			 ng_counters_any(counts))
	{
		if (entry != NULL)
			slot_merge_into(entry, slot, false);
		else
		{
			/*
			 * The statement never got an entry (the table was full of entries
			 * in use, or the admission filter refused it, entry.c): its
			 * counts leave the table as an evicted entry's do.
			 */
			ng_slot_count_refused(counts->calls[NG_EXEC],
								  counts->total_time[NG_EXEC],
								  ng_counters_failed(counts), 0);
			/* the history's open window counted them: keep them for it */
			ng_history_keep_unbound(slot->partition, &slot->key, counts,
									slot->planid);
		}
	}
	/* plan statistics (plans.c): the slot's executions are of one plan */
	ng_plans_fold(entry, slot, i, entry != NULL && ls->entry != NULL &&
				  slot->minmax_generation != entry->minmax_generation);
	return true;
}

/*
 * slot_fold_locked
 *		Move slot i's counts into the shared table and free the slot,
 *		dropping its pin (and freeing a dead entry when it was the last).
 *		Caller holds the slot's partition lock exclusively.  False if the
 *		counts could not be moved (slot_move_counts): the slot is left as
 *		it was.
 */
static bool
slot_fold_locked(int i)
{
	NgSlot	   *slot = slot_at(ngs_my_area, i);
	NgLocalSlot *ls = &ngs_local_slots[i];

	if (!slot_move_counts(i, &ng_shared->partitions[slot->partition]))
		return false;
	if (ls->entry != NULL)
	{
		NgSharedEntry *entry = ls->entry;

		if (pg_atomic_sub_fetch_u32(&entry->pins, 1) == 0 && entry->dead)
			ng_entry_release_memory(entry, slot->entry);
	}

	slot_begin_write(slot);
	slot->in_use = false;
	slot->entry = InvalidDsaPointer;
	slot->planid = 0;			/* plan statistics */
	memset(&slot->counters, 0, sizeof(NgCounters));
	slot_hist_clear(slot, i);
	ngs_my_area->partition_of[i] = NG_SLOT_FREE;
	slot_end_write(slot);
	slot_partition_give(slot->partition);

	{
		NgLocalEntry *le = nglocal_lookup(ngs_local_map, ls->key);

		if (le != NULL)
			le->slot = -1;
	}
	ls->in_use = false;
	ls->entry = NULL;
	ls->used = false;
	ngs_nfree++;
	return true;
}

/*
 * slot_lock
 *		Take slot's partition lock exclusively (waiting, or not: then false
 *		if busy, counted in lock_misses), having first made sure of the
 *		spare histogram groups its fold may need.  Caller holds no lock.
 */
static bool
slot_lock(NgSlot *slot, NgLocalSlot *ls, bool wait)
{
	LWLock	   *lock = ng_shared->partitions[slot->partition].lock;
	uint32		need = slot_hist_need(slot);

	if (ls->entry != NULL)
		need = ng_entry_hist_lacks(ls->entry, need);
	(void) ng_hist_spares_fill(pg_popcount32(need) + NG_HIST_SPARES_KEPT);
	if (slot->counters.calls[NG_EXEC] > 0 && !ngs_exiting)
		ng_plans_prepare(ls->entry, slot->planid);	/* plan statistics */
	if (wait)
		LWLockAcquire(lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(lock, LW_EXCLUSIVE))
	{
		ng_count_stat(&ng_shared->stats.lock_misses, 1);
		return false;
	}
	return true;
}

/*
 * ng_slot_release
 *		Fold slot i and free it.  With wait = false, gives up (returns
 *		false) if the partition lock is busy.  Also false, at exit, if the
 *		counts could not be moved (slot_move_counts).  Caller holds no
 *		partition lock.
 */
bool
ng_slot_release(int i, bool wait)
{
	NgSlot	   *slot = slot_at(ngs_my_area, i);
	bool		folded;

	if (!slot_lock(slot, &ngs_local_slots[i], wait))
		return false;
	folded = slot_fold_locked(i);
	LWLockRelease(ng_shared->partitions[slot->partition].lock);
	ng_plans_prepared_release();	/* plan statistics */
	return folded;
}

/*
 * ng_slot_flush
 *		Fold bound slot i into its entry and leave it bound, empty (its cells
 *		back in the pool).  An unbound slot, or one whose entry a reset
 *		removed, is released instead.  Caller holds no partition lock.
 */
bool
ng_slot_flush(int i, bool wait)
{
	NgSlot	   *slot = slot_at(ngs_my_area, i);
	NgLocalSlot *ls = &ngs_local_slots[i];
	NgSharedPartition *part = &ng_shared->partitions[slot->partition];

	if (ls->entry == NULL)
		return ng_slot_release(i, wait);
	if (!slot_lock(slot, ls, wait))
		return false;
	if (ls->entry->dead)
		(void) slot_fold_locked(i);
	else if (slot_move_counts(i, part))
	{
		uint32		gen = ls->entry->minmax_generation;

		slot_begin_write(slot);
		memset(&slot->counters, 0, sizeof(NgCounters));
		slot_hist_clear(slot, i);
		slot->minmax_generation = gen;
		slot_end_write(slot);
	}
	LWLockRelease(part->lock);
	ng_plans_prepared_release();	/* plan statistics */
	return true;
}

/*
 * ng_slots_reclaim_cells
 *		My cell pool is empty: fold the slot holding the most cells, waiting
 *		for its lock, as a new statement waits to bind.  This happens only
 *		when more than NG_CELLS_PER_SLOT x ngs_nslots (bucket, slot)
 *		pairs came up since maintenance last flushed (ng_slots_flush_cells).
 *		Caller holds no partition lock.
 */
void
ng_slots_reclaim_cells(void)
{
	int			best = -1;

	for (int i = 0; i < ngs_nslots; i++)
	{
		if (!ngs_local_slots[i].in_use ||
			slot_at(ngs_my_area, i)->hist_cells == 0)
			continue;
		if (best < 0 || slot_at(ngs_my_area, i)->hist_cells >
			slot_at(ngs_my_area, best)->hist_cells)
			best = i;
	}
	if (best >= 0)
		(void) ng_slot_flush(best, true);
}

/*
 * ng_slots_flush_cells
 *		At maintenance: when more than half my cell pool is in use, fold the
 *		bound slots holding more than NG_CELLS_PER_SLOT cells (keeping them
 *		bound), without waiting for a lock, so that a hot statement with
 *		many buckets does not use up the pool; and any slot whose cell
 *		count could come near wrapping a uint32 before the next time.
 */
void
ng_slots_flush_cells(void)
{
	NgHistCell *pool = ngs_pool;
	bool		short_of_cells = ngs_cells_free < (int) ngs_my_area->ncells / 2;

	for (int i = 0; i < ngs_nslots; i++)
	{
		NgSlot	   *slot = slot_at(ngs_my_area, i);
		bool		flush = false;

		if (!ngs_local_slots[i].in_use || slot->hist_cells == 0)
			continue;
		if (short_of_cells && slot->hist_cells > NG_CELLS_PER_SLOT)
			flush = true;
		for (uint16 at = slot->hist_head; at != NG_NO_CELL && !flush;
			 at = pool[at].next)
			flush = pool[at].count >= PG_INT32_MAX;
		if (flush)
			(void) ng_slot_flush(i, false);
	}
}

/*
 * ng_slots_release_idle
 *		The table is full of entries in use and a new statement needs one:
 *		release (fold and unpin) up to n of this backend's bound slots that
 *		were idle since its last maintenance, least recently used first,
 *		without waiting, so that eviction can take the cold ones among their
 *		entries.  Without this, backends that each keep their slots'
 *		statements bound could together pin the whole table until their
 *		next maintenance.  A slot used since then is never released here:
 *		its statement is one this backend runs now, and when the statements
 *		in use outnumber max, giving up one of them for another only makes
 *		each evict the next, again and again (a working set of 130
 *		statements in a table of 100 evicted some 35,000 entries in 10
 *		seconds that way).  Returns the number released.
 */
int
ng_slots_release_idle(int n)
{
	int			released = 0;

	if (ngs_my_area == NULL)
		return 0;
	while (released < n)
	{
		int			best = -1;

		for (int i = 0; i < ngs_nslots; i++)
		{
			if (!ngs_local_slots[i].in_use || ngs_local_slots[i].entry == NULL ||
				ngs_local_slots[i].used)
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
