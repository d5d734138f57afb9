/*-------------------------------------------------------------------------
 *
 * slots_bind.c
 *		Binding a slot of this backend to a statement, and releasing it
 *		again: choosing a free slot or the least recently used one to give
 *		up, folding a slot's counts into its entry (slots_fold.c), and
 *		recording the binding in the slot.
 *
 * Why a file of its own: this is the part of the slots that moves counts
 * between a slot and the shared table.  The hot path (slots_count.c) comes
 * here only when a statement has no slot yet or its entry was removed; the
 * entry itself is found in slots_entry.c.  slots_int.h describes the whole
 * slot protocol.
 *
 * Locking.  A slot is folded, and zeroed, under its partition's lock held
 * exclusively, in the same critical section, so that a reader (who holds
 * it shared) sees each execution once.  Nothing here waits for a lock
 * unless its caller asks to (wait = true: at exit, and for the last resort
 * of slot_find_victim).  Pins are atomic counters, changed under the
 * partition lock.  The unadmitted counts go into the shared stats under
 * ng_shared->mutex.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "alloc.h"
#include "evict.h"
#include "slots_int.h"

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

/*
 * ng_slot_adopt_entry
 *		For an unbound slot with counts: make sure its key has an entry, so
 *		that folding the slot keeps the counts.  Returns true if the slot
 *		can be folded without loss (an entry exists, or there is nothing to
 *		keep).  With wait, waits for the partition lock (at exit).
 */
bool
ng_slot_adopt_entry(int i, bool wait)
{
	NgSlot	   *slot = slot_at(ngs_my_area, i);
	dsa_pointer dp;
	bool		has_text;

	if (!ng_counters_any(&slot->counters))
		return true;
	return ng_slot_get_entry(&slot->key, ng_key_hash(&slot->key), NULL, 0,
							 false, wait, &dp, &has_text) != NULL;
}

/*
 * slot_find_victim
 *		For slot_find_free, when all slots are taken and the least recently
 *		used bound one could not be released without waiting: release the
 *		least recently used slot that can be, bound ones first.  A bound
 *		slot folds into its entry without loss.  An unbound slot is given up
 *		only if its key has an entry by now (or has nothing to keep).  Tries
 *		a few victims without waiting before it waits for one.
 */
static int
slot_find_victim(void)
{
	int			victims[4];
	int			nvictims = 0;
	int			bound = 0;

	/* the least recently used slots, bound ones first */
	for (int pass = 0; pass < 2 && nvictims < lengthof(victims); pass++)
	{
		while (nvictims < lengthof(victims))
		{
			int			best = -1;

			for (int i = 0; i < ng_slots_per_backend; i++)
			{
				bool		taken = false;

				if ((ngs_local_slots[i].entry != NULL) != (pass == 0))
					continue;
				for (int v = 0; v < nvictims; v++)
					taken |= (victims[v] == i);
				if (!taken && (best < 0 ||
							   ngs_local_slots[i].last_used < ngs_local_slots[best].last_used))
					best = i;
			}
			if (best < 0)
				break;
			victims[nvictims++] = best;
			if (pass == 0)
				bound++;
		}
	}
	for (int v = 0; v < nvictims; v++)
	{
		if (ngs_local_slots[victims[v]].entry == NULL &&
			!ng_slot_adopt_entry(victims[v], false))
			continue;
		if (ng_slot_release(victims[v], false))
			return victims[v];
	}

	/* wait: for a bound victim's lock, or for an unbound one's entry */
	if (bound > 0)
	{
		ng_slot_release(victims[0], true);
		return victims[0];
	}
	for (int v = 0; v < nvictims; v++)
	{
		if (ng_slot_adopt_entry(victims[v], true))
		{
			ng_slot_release(victims[v], true);
			return victims[v];
		}
	}

	/*
	 * Every slot counts for a statement that has no entry and can get none
	 * (the table is full of entries other backends are using): give up the
	 * oldest one's counts, counted as discarded.
	 */
	ng_slot_release(victims[0], true);
	return victims[0];
}

/*
 * The next victims: the least recently used bound slots as of the last
 * scan, oldest first, each with its last_used then.  One scan serves
 * several new statements.  A listed slot used since (its last_used
 * changed) or no longer bound is skipped.  A slot not listed was used
 * later than every listed one: its last_used was larger at the scan, or
 * it was bound or used after it, and use_clock only grows.  So the first
 * listed slot still valid is the least recently used bound slot of all,
 * as a full scan would find it.
 */
#define NG_VICTIMS_LISTED	8

static int	victim_slot[NG_VICTIMS_LISTED];
static uint64 victim_used[NG_VICTIMS_LISTED];
static int	victim_next = 0;
static int	victim_count = 0;

/* list the least recently used bound slots, oldest first */
static void
slot_list_victims(void)
{
	victim_next = 0;
	victim_count = 0;
	for (int i = 0; i < ng_slots_per_backend; i++)
	{
		NgLocalSlot *ls = &ngs_local_slots[i];
		int			at;

		if (!ls->in_use || ls->entry == NULL ||
			(victim_count == NG_VICTIMS_LISTED &&
			 ls->last_used >= victim_used[victim_count - 1]))
			continue;
		if (victim_count < NG_VICTIMS_LISTED)
			victim_count++;
		for (at = victim_count - 1;
			 at > 0 && victim_used[at - 1] > ls->last_used; at--)
		{
			victim_slot[at] = victim_slot[at - 1];
			victim_used[at] = victim_used[at - 1];
		}
		victim_slot[at] = i;
		victim_used[at] = ls->last_used;
	}
}

/*
 * slot_next_victim
 *		The position in victim_slot of the least recently used bound slot,
 *		listing them anew when no listed one is valid, or -1 if no slot is
 *		bound.
 */
static int
slot_next_victim(void)
{
	for (int pass = 0; pass < 2; pass++)
	{
		for (; victim_next < victim_count; victim_next++)
		{
			NgLocalSlot *ls = &ngs_local_slots[victim_slot[victim_next]];

			if (ls->in_use && ls->entry != NULL &&
				ls->last_used == victim_used[victim_next])
				return victim_next;
		}
		slot_list_victims();
	}
	return -1;
}

/*
 * slot_find_free
 *		A free slot of mine, releasing the least recently used bound slot if
 *		all are taken (slot_find_victim if that cannot be done without
 *		waiting).
 */
static int
slot_find_free(void)
{
	int			pos;

	if (ngs_nfree > 0)
	{
		for (int i = 0; i < ng_slots_per_backend; i++)
			if (!ngs_local_slots[i].in_use)
				return i;
	}
	pos = slot_next_victim();
	if (pos >= 0 && ng_slot_release(victim_slot[pos], false))
	{
		victim_next = pos + 1;
		return victim_slot[pos];
	}
	return slot_find_victim();
}

/*
 * ng_slot_bind
 *		Give key a slot of mine, bound to its shared entry if that can be had
 *		without waiting.  Returns the slot index.
 */
int
ng_slot_bind(NgLocalEntry *le, const NgTextSource *src)
{
	int			i = slot_find_free();
	NgSlot	   *slot = slot_at(ngs_my_area, i);
	uint32		hash = le->hash;
	NgSharedPartition *part = ng_partition(hash);
	dsa_pointer dp = InvalidDsaPointer;
	NgSharedEntry *entry = ng_slot_bind_entry(le, src, &dp);

	slot_begin_write(slot);
	slot->in_use = true;
	slot->key = le->key;
	slot->partition = ng_partition_of_hash(hash);
	slot->entry = entry ? dp : InvalidDsaPointer;
	slot->minmax_generation = entry ? entry->minmax_generation : 0;
	slot->partition_generation = part->generation;
	/* a free slot's counters are zero already (ng_slot_clear) */
	ngs_my_area->partition_of[i] = slot->partition;
	slot_end_write(slot);

	ngs_local_slots[i].in_use = true;
	ngs_nfree--;
	Assert(ngs_nfree >= 0);
	ngs_local_slots[i].key = le->key;
	ngs_local_slots[i].entry = entry;
	ngs_local_slots[i].used = false;
	le->slot = i;
	return i;
}
