/*-------------------------------------------------------------------------
 *
 * count.c
 *		The hot path: counting one execution or planning of a statement in
 *		this backend's slot.
 *
 * Why a file of its own: this runs for every statement, and must stay
 * small and visibly free of locks.  It uses the binding (bind.c)
 * only when a statement has no slot yet or its entry was removed, and
 * includes nothing of eviction, persistence or the SQL functions.
 * slots_int.h describes the whole slot protocol.
 *
 * Locking.  Counting a statement this backend already has a slot for
 * takes no lock, no spinlock and no atomic read-modify-write: a lookup of
 * the backend-local map (usually a hit in its cache of recent keys), two
 * plain reads of the partition's reset epoch (the bound entry
 * itself is read only when a reset moved it), one of the change
 * generation, and the update of our own slot (and one histogram cell)
 * bracketed by its changecount.  Two rare events add to that: a sample that
 * opens a histogram group its entry lacks may allocate spare groups in DSA
 * (DSA's own locks) after the write, once per group of an entry; and when
 * the backend's cell pool is empty, the slot holding the most cells is
 * folded first, waiting for its partition lock as a new statement does.  A
 * statement without a slot that the backend runs less often than its slots
 * turn over is counted into its entry under the partition lock, exclusive
 * and never waited for (direct.c); busy, it takes a slot instead.  A
 * sample a reset voided, and an unbound slot's first since a reset voided
 * it, are written under the partition lock, shared (slot_write_locked).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "alloc.h"
#include "counters_record.h"
#include "entry_hist.h"
#include "hist.h"
#include "plans.h"
#include "slots_int.h"

/*
 * ng_slots_attach
 *		Is this backend set up to count (attaching it the first time)?
 *		False if it cannot count (library not preloaded, no shared memory,
 *		or detached at exit).
 */
static inline bool
ng_slots_attach(void)
{
	if (likely(ngs_attached))
		return ng_area != NULL; /* false once detached, at backend exit */
	return ng_slots_attach_first();
}

/*
 * slot_cell_with_room
 *		My slot i's cell for samples of kind in bucket, found through the
 *		index, if it has room for one more; else NG_NO_CELL (no index, no
 *		such cell yet, or a full one: ng_slot_hist_count_new's cases).
 */
static inline uint16
slot_cell_with_room(int i, int kind, int bucket)
{
	uint16	   *index = slot_cell_index(i);
	uint16		at;

	if (unlikely(index == NULL))
		return NG_NO_CELL;
	at = index[kind * NG_HIST_BUCKETS + bucket];
	if (unlikely(at != NG_NO_CELL && ngs_pool[at].count == PG_UINT32_MAX))
		return NG_NO_CELL;
	return at;
}

/*
 * slot_hist_count
 *		Count one sample of kind in bucket in slot's (my slot i's) cells:
 *		inline when the index has a cell of that bucket with room (the
 *		statement's usual durations), else ng_slot_hist_count_new.  Returns
 *		true if the cell is the slot's first in its histogram group.
 *		Inside the slot's write section.
 */
static inline bool
slot_hist_count(NgSlot *slot, int i, int kind, int bucket)
{
	uint16		at = slot_cell_with_room(i, kind, bucket);

	if (likely(at != NG_NO_CELL))
	{
		ngs_pool[at].count++;
		return false;
	}
	return ng_slot_hist_count_new(slot, i, kind, bucket);
}

/*
 * slot_record_end
 *		The end of a sample's write section of slot (my slot ls): stamp the
 *		change generation, and return true if a reset has voided the slot
 *		meanwhile (slot_record), having taken the sample back: it is counted
 *		again in a slot bound anew, and the history, which copies a voided
 *		slot's counts after the void (history_capture.c), must not find it
 *		here as well (ng_counters_unrecord).
 */
static pg_attribute_always_inline bool
slot_record_end(NgSlot *slot, const NgLocalSlot *ls,
				const NgSharedPartition *part, const NgSample *sample)
{
	NgSharedEntry *entry = ls->entry;

	/*
	 * Stamp the change generation, read after this write section began (a
	 * full barrier orders our changecount store before the load): a
	 * changed_since call that advanced the generation before this load sees
	 * this write in its scan (it waits out an odd changecount) or, if it
	 * copied the slot before the write began, the next call sees it.
	 */
	pg_memory_barrier();
	slot->counters.changed_generation =
		pg_atomic_read_u64(&ng_shared->change_generation);

	/*
	 * The same barrier orders the counts before these loads: if they show no
	 * reset, a reset that voids this slot comes after the sample was in
	 * place, and rightly takes it.  (A reset that marked the entry dead had
	 * bumped the epoch, behind a write barrier, before it returned.)
	 */
	if (entry != NULL)
	{
		if (likely(part->reset_epoch == ls->reset_epoch))
			return false;
		pg_read_barrier();
		if (!entry->dead)
			return false;
	}
	else if (likely(slot->partition_generation == part->generation))
		return false;
	ng_counters_unrecord(&slot->counters, sample);
	return true;
}

/* my slot i has just counted a sample */
static inline void
slot_note_used(int i)
{
	ngs_local_slots[i].used = true;
	ngs_local_slots[i].last_used = ++ngs_use_clock;
}

/*
 * slot_record
 *		Inside the write section of slot (my slot i): add sample, and stamp
 *		the change generation.  Returns true if a reset has voided the slot
 *		meanwhile (removed its bound entry, or moved the partition
 *		generation of an unbound slot), in which case the sample is not in
 *		the slot and must be counted again.  With sync_minmax (the
 *		partition's reset epoch moved since the slot last looked), first
 *		take the bound entry's min/max generation.  locked: the caller holds
 *		the partition lock, without which a voided unbound slot is left be.
 *
 *		A bound slot reads its entry only when the partition's reset epoch
 *		moved: resets store dead or the min/max generation, then (after a
 *		write barrier) bump the epoch; we read the epoch, then (after a read
 *		barrier) the entry.
 */
static pg_attribute_always_inline bool
slot_record(NgSlot *slot, int i, NgSharedPartition *part,
			const NgSample *sample, bool sync_minmax, bool locked)
{
	NgLocalSlot *ls = &ngs_local_slots[i];
	NgSharedEntry *entry = ls->entry;

	if (entry != NULL)
	{
		if (unlikely(sync_minmax))
		{
			uint32		gen = entry->minmax_generation;

			if (slot->minmax_generation != gen)
			{
				ng_counters_clear_minmax(&slot->counters);
				slot->minmax_generation = gen;
			}
		}
	}
	else
	{
		uint32		gen = part->generation;

		if (unlikely(slot->partition_generation != gen))
		{
			/* voided: cleared only after the reset's copy (slot_write_locked) */
			if (!locked)
				return true;
			memset(&slot->counters, 0, sizeof(NgCounters));
			slot_hist_clear(slot, i);
			slot->partition_generation = gen;
		}
	}
	/* plan statistics: a new plan begins only in a slot with no execution */
	if (unlikely(ng_sample_plan_differs(slot, sample)))
	{
		slot->planid = sample->planid;
		slot->plan_first_at = sample->started_at;
	}
	ng_counters_record(&slot->counters, sample);
	if (sample->failure == NG_SUCCEEDED)
	{
		int			bucket = ng_hist_bucket(sample->time);

		if (unlikely(slot_hist_count(slot, i, sample->kind, bucket)))
			ng_slot_owe_group(slot, ls, sample->kind, bucket);
	}
	return slot_record_end(slot, ls, part, sample);
}

/*
 * slot_write
 *		Count sample in my slot i of area, in its write section (slot_record,
 *		sync_minmax and locked as there), and note the slot used.  Returns
 *		true if a reset voided the slot: the sample must be counted again.
 */
static pg_attribute_always_inline bool
slot_write(NgBackendSlots *area, int i, NgSharedPartition *part,
		   const NgSample *sample, bool sync_minmax, bool locked)
{
	NgSlot	   *slot = slot_at(area, i);
	bool		voided;

	slot_begin_write(slot);
	if (NG_DEBUG_FAULT(NG_FAULT_STALL_WRITE))
		ng_debug_stall();		/* a writer stopped mid-write (tests) */
	voided = slot_record(slot, i, part, sample, sync_minmax, locked);
	slot_end_write(slot);
	slot_note_used(i);
	return voided;
}

/*
 * slot_write_locked
 *		slot_write under part's lock, shared (waited for): every reset that
 *		voided the slot has copied it (history_capture.c), and none runs.
 */
static pg_noinline bool
slot_write_locked(int i, NgSharedPartition *part, const NgSample *sample,
				  bool sync_minmax)
{
	bool		voided;

	LWLockAcquire(part->lock, LW_SHARED);
	voided = slot_write(ngs_my_area, i, part, sample, sync_minmax, true);
	LWLockRelease(part->lock);
	return voided;
}

#define NG_COUNT_ATTEMPTS	8	/* writes of a sample that resets void */

/*
 * recurs_rarely
 *		Does a key without a slot, last counted at prev_counted (0: never),
 *		recur less often than this backend's slots turn over (ngs_nslots
 *		counts since)?  A slot bound to it would likely be given up first.
 */
static inline bool
recurs_rarely(uint64 prev_counted)
{
	return prev_counted != 0 &&
		ngs_use_clock - prev_counted >= (uint64) ngs_nslots;
}

/*
 * slot_after_reset
 *		Slot i, bound, whose partition saw a reset since the slot last
 *		looked at its entry: -1 if the reset removed the entry (the slot is
 *		released, its counts void, to be bound anew), else i, with
 *		*sync_minmax set (the reset may have cleared min/max).
 */
static pg_noinline int
slot_after_reset(int i, NgSharedPartition *part, bool *sync_minmax)
{
	NgLocalSlot *ls = &ngs_local_slots[i];

	ls->reset_epoch = part->reset_epoch;
	pg_read_barrier();
	if (ls->entry->dead)
	{
		ng_slot_release(i, true);
		return -1;
	}
	*sync_minmax = true;
	return i;
}

/*
 * count_into_entry_if_rare
 *		A key without a slot that recurs rarely (recurs_rarely), with its
 *		text settled and no pin carried for it: count the sample straight
 *		into its entry (ng_slot_count_into_entry) and return true; false if
 *		it should have a slot, or the entry cannot be had at once.
 */
static inline bool
count_into_entry_if_rare(NgLocalEntry *le, uint64 prev_counted,
						 const NgSharedPartition *part, const NgSample *sample)
{
	if (!recurs_rarely(prev_counted) || !text_settled(le, part) ||
		ng_slot_carries_pin() || !ng_slot_count_into_entry(le, sample))
		return false;
	ngs_use_clock++;
	return true;
}

/*
 * count_refused
 *		A sample of le's key, refused an entry by the admission filter,
 *		that took no slot (ng_slot_bind): an execution goes where an unbound
 *		slot's fold would send it (unadmitted_calls and evicted_calls, or
 *		counts_discarded if it failed), and counts in admissions_refused,
 *		through this backend's refused counts; a planning is not kept.  No
 *		lock, no atomic read-modify-write (a full barrier).  le is
 *		forgotten: one-offs would grow the local map until its next trim
 *		(life.c); the filter's fingerprint remembers the statement.
 */
static void
count_refused(NgLocalEntry *le, const NgSample *sample)
{
	ngs_use_clock++;
	/* a delete keeps the map's array: the cache stays valid (NG_RECENT_KEYS) */
	nglocal_delete_item(ngs_local_map, le);
	if (sample->kind != NG_EXEC)
		return;
	if (sample->failure == NG_SUCCEEDED)
		ng_slot_count_refused(1, sample->time, 0, 1);
	else
		ng_slot_count_refused(0, 0.0, 1, 1);
}

/*
 * slot_plan_change
 *		Plan statistics (plans.h): sample, an execution of le's key, runs
 *		another plan than my slot *i counts.  A slot's executions since its
 *		last fold are all of one plan: if it has any, fold it first (a bound
 *		slot stays bound, an unbound one is released and *i bound anew);
 *		then make the new plan's text (plans.c), when the slot is bound.
 *		Waits for the partition lock, as a release does.  Returns le, found
 *		again (making a text may change the local map); *i is -1 if the key
 *		was refused a slot (the sample is then counted as such).
 */
static pg_noinline NgLocalEntry *
slot_plan_change(NgLocalEntry *le, const NgSample *sample,
				 const NgTextSource *src, int *i)
{
	NgKey		key = le->key;

	if (slot_at(ngs_my_area, *i)->counters.calls[NG_EXEC] > 0)
	{
		/* an unbound slot, or one whose entry is dead, is released */
		(void) ng_slot_flush(*i, true);
		if (!ngs_local_slots[*i].in_use)
		{
			*i = ng_slot_bind(le, src, true);
			if (*i < 0)
			{
				count_refused(le, sample);
				return le;
			}
		}
	}
	if (ngs_local_slots[*i].entry != NULL)
		ng_plans_array_ensure(ngs_local_slots[*i].entry);
	ng_plans_text_note(*i, ngs_local_slots[*i].entry, sample);
	le = local_entry_of(&key);
	*i = le->slot;
	if (unlikely(*i < 0))
	{
		/* the text's making counted statements that took the slot */
		*i = ng_slot_bind(le, src, true);
		if (*i < 0)
			count_refused(le, sample);
	}
	return le;
}

/* a group a fold will have to make: see that there is a spare for it */
static inline void
slots_fill_spares(void)
{
	if (unlikely(ngs_spares_owed > ng_hist_nspares))
		(void) ng_hist_spares_fill(ngs_spares_owed + NG_HIST_SPARES_KEPT);
}

/*
 * slots_count_slow
 *		ng_slots_count for whatever slot_count_plain does not take: a
 *		sample that is not plain, a key without a slot, a reset since the
 *		slot last looked, a new cell, an empty cell pool, no slot area.
 *		first_attempt is 1 if slot_count_plain counted the sample in a slot
 *		that a reset voided meanwhile: this is a retry.
 */
static pg_noinline void
slots_count_slow(NgLocalEntry *le, const NgSample *sample,
				 const NgTextSource *src, int first_attempt)
{
	int			i;
	uint64		prev_counted;

	if (ngs_my_area == NULL)
	{
		ng_slot_count_direct(le, sample, src);
		return;
	}

	/*
	 * le may move when a bind changes the local map: note this count now.
	 * Executions only: a planning counted just before its execution must not
	 * make the statement look frequent to it.
	 */
	prev_counted = le->last_counted;
	if (sample->kind == NG_EXEC && first_attempt == 0)
		le->last_counted = ngs_use_clock + 1;

	for (int attempt = first_attempt;; attempt++)
	{
		NgSharedPartition *part =
			&ng_shared->partitions[ng_partition_of_hash(le->hash)];
		bool		sync_minmax = false;
		bool		voided;

		/* a sample may need a new cell: see that the pool has one */
		if (unlikely(ngs_cells_free == 0))
			ng_slots_reclaim_cells();
		i = le->slot;
		if (i >= 0 && ngs_local_slots[i].entry != NULL &&
			unlikely(part->reset_epoch != ngs_local_slots[i].reset_epoch))
			i = slot_after_reset(i, part, &sync_minmax);
		if (i < 0 && attempt == 0 &&
			count_into_entry_if_rare(le, prev_counted, part, sample))
			return;
		if (i < 0)
			i = ng_slot_bind(le, src, sample->kind == NG_EXEC);
		if (i < 0)
		{
			count_refused(le, sample);
			return;
		}
		/* plan statistics: another plan than the slot's (rare) */
		if (unlikely(ng_sample_plan_differs(slot_at(ngs_my_area, i), sample)))
		{
			le = slot_plan_change(le, sample, src, &i);
			if (i < 0)
				return;
		}

		/* a retry, or an unbound slot a reset voided: under the lock */
		if (attempt > 0 || (ngs_local_slots[i].entry == NULL &&
							slot_at(ngs_my_area, i)->partition_generation !=
							part->generation))
			voided = slot_write_locked(i, part, sample, sync_minmax);
		else
			voided = slot_write(ngs_my_area, i, part, sample, sync_minmax,
								false);

		/* voided: the sample, not in the slot, is counted after the reset */
		if (likely(!voided) || attempt + 1 >= NG_COUNT_ATTEMPTS)
			break;
	}
	slots_fill_spares();
}

/*
 * slot_count_plain
 *		The usual count, with no call (ng_slots_count's only calls are then
 *		tail calls): a plain sample (ng_sample_is_plain) of le, whose slot is
 *		bound and untouched by a reset since it last looked, and has a cell
 *		with room for the sample's bucket, with cells left in the pool.
 *		Returns false, having written nothing, in any other case.  Returns
 *		true once counted, *voided set if a reset voided the slot meanwhile
 *		(count again, as slot_record says).
 */
static pg_attribute_always_inline bool
slot_count_plain(NgLocalEntry *le, const NgSample *sample,
				 bool *voided)
{
	NgBackendSlots *area = ngs_my_area;
	int			i = le->slot;
	NgLocalSlot *ls;
	NgSharedPartition *part;
	uint16		at;
	NgSlot	   *slot;

	if (i < 0 || unlikely(area == NULL || ngs_cells_free == 0) ||
		!ng_sample_is_plain(sample) || NG_DEBUG_FAULT(NG_FAULT_STALL_WRITE))
		return false;
	ls = &ngs_local_slots[i];
	part = &ng_shared->partitions[ng_partition_of_hash(le->hash)];
	if (ls->entry == NULL || unlikely(part->reset_epoch != ls->reset_epoch))
		return false;
	at = slot_cell_with_room(i, sample->kind, ng_hist_bucket(sample->time));
	if (unlikely(at == NG_NO_CELL))
		return false;
	slot = slot_at(area, i);
	/* plan statistics: another plan than the slot's is a rare event */
	if (unlikely(sample->planid != slot->planid) && sample->kind == NG_EXEC)
		return false;

	if (sample->kind == NG_EXEC)
		le->last_counted = ngs_use_clock + 1;	/* as slots_count_slow */
	slot_begin_write(slot);
	ng_counters_record_plain(&slot->counters, sample);
	ngs_pool[at].count++;
	*voided = slot_record_end(slot, ls, part, sample);
	slot_end_write(slot);
	slot_note_used(i);
	return true;
}

/* ng_slots_count for whatever slot_count_plain does not take */
static pg_noinline void
slots_count_general(const NgKey *key, const NgSample *sample,
					const NgTextSource *src)
{
	if (!ng_slots_attach())
		return;
	slots_count_slow(local_entry_of(key), sample, src, 0);
}

/*
 * ng_slots_count
 *		Count one execution or planning of key.  Called from the hooks.
 *
 *		For a statement this backend already has a slot for, this is the hot
 *		path (slot_count_plain): no lock, no atomic read-modify-write, no
 *		shared-memory write but to our own slot.  Never raises an error
 *		because of the extension's limits.
 */
void
ng_slots_count(const NgKey *key, const NgSample *sample, const NgTextSource *src)
{
	NgLocalEntry *le;
	bool		voided = false;

	if (likely(ngs_attached && ng_area != NULL) &&
		(le = local_entry_recent(key)) != NULL &&
		likely(slot_count_plain(le, sample, &voided)))
	{
		if (unlikely(voided))
			slots_count_slow(le, sample, src, 1);
		else
			slots_fill_spares();
		return;
	}
	slots_count_general(key, sample, src);
}
