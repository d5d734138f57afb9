/*-------------------------------------------------------------------------
 *
 * life.c
 *		The life of this backend's slots: attaching to them at first use
 *		(and taking over slots a previous owner left in use), the periodic
 *		maintenance that releases idle slots and binds unbound ones, and
 *		the fold of every slot when the backend exits.
 *
 * Why a file of its own: these run once per backend, or once a second,
 * never for a single statement; they use the binding (bind.c) and
 * eviction.  slots_int.h describes the whole slot protocol.
 *
 * Locking.  Attaching touches only this backend's own slot area, before
 * any reader can take it for active.  Maintenance never waits for a lock
 * (slots that cannot be released now are tried again next time).  At exit
 * every slot is folded, waiting for the partition locks: no count may be
 * lost.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "alloc.h"
#include "entry_hist.h"
#include "evict.h"
#include "keeper_start.h"
#include "slots_int.h"

TimestampTz ng_slots_next_maintenance = 0;
static bool slots_unavailable = false;

static void slots_exit_callback(int code, Datum arg);

/*
 * slots_build_free_cells
 *		Chain the cells of my pool that no slot in use holds into the free
 *		list (at attach, after slots_inherit).  A chain is walked no further
 *		than the pool's size.
 */
static void
slots_build_free_cells(void)
{
	NgHistCell *pool = ngs_pool = area_cells(ngs_my_area);
	int			ncells = ngs_my_area->ncells;
	bool	   *held = palloc_extended(sizeof(bool) * ncells,
									   MCXT_ALLOC_ZERO | MCXT_ALLOC_NO_OOM);

	/*
	 * Out of memory: no free cells, rather than an error in the user's
	 * statement; samples then stay out of the histograms (slot_hist_count).
	 */
	ngs_free_cell = NG_NO_CELL;
	ngs_cells_free = 0;
	if (held == NULL)
		return;

	for (int i = 0; i < ngs_nslots; i++)
	{
		NgSlot	   *slot = slot_at(ngs_my_area, i);
		int			walked = 0;

		if (ngs_my_area->partition_of[i] == NG_SLOT_FREE)
			continue;
		for (uint16 at = slot->hist_head; at < ncells && walked < ncells;
			 at = pool[at].next, walked++)
			held[at] = true;
	}
	/* the index of the cells (slots_int.h); without it, chains are walked */
	ngs_cell_index = MemoryContextAllocExtended(TopMemoryContext,
												sizeof(uint16) * NG_NUM_KINDS * NG_HIST_BUCKETS *
												ngs_nslots,
												MCXT_ALLOC_NO_OOM);
	if (ngs_cell_index != NULL)
		memset(ngs_cell_index, 0xFF,
			   sizeof(uint16) * NG_NUM_KINDS * NG_HIST_BUCKETS *
			   ngs_nslots);
	for (int i = 0; i < ngs_nslots && ngs_cell_index != NULL; i++)
	{
		NgSlot	   *slot = slot_at(ngs_my_area, i);
		uint16	   *index = slot_cell_index(i);
		int			walked = 0;

		if (ngs_my_area->partition_of[i] == NG_SLOT_FREE)
			continue;
		for (uint16 at = slot->hist_head; at < ncells && walked < ncells;
			 at = pool[at].next, walked++)
			index[pool[at].kind * NG_HIST_BUCKETS + pool[at].bucket] = at;
	}

	ngs_free_cell = NG_NO_CELL;
	ngs_cells_free = 0;
	for (int at = ncells - 1; at >= 0; at--)
	{
		if (held[at])
			continue;
		pool[at].next = ngs_free_cell;
		ngs_free_cell = at;
		ngs_cells_free++;
	}
	pfree(held);
}

/*
 * slots_inherit
 *		Take over the slots a previous owner of this slot area left in use.
 *		A backend folds all its slots at exit, but if its exit callback
 *		failed (an ERROR there is FATAL, and the rest of the callback is
 *		skipped), slots can still be in use, bound slots still pinning their
 *		entries.  Readers count them all along; this backend now owns them:
 *		it folds them as its own (and so drops their pins) at its next
 *		maintenance, or when it needs the slots, or at its exit.  Nothing is
 *		overwritten but the area's partition mask, made anew from the slots
 *		in use (slots.h).  Logged once per backend that inherits.
 */
static void
slots_inherit(void)
{
	int			inherited = 0;
	uint32		mask = 0;

	for (int i = 0; i < ngs_nslots; i++)
	{
		NgSlot	   *slot = slot_at(ngs_my_area, i);
		NgLocalEntry *le;

		if (ngs_my_area->partition_of[i] == NG_SLOT_FREE)
			continue;

		/*
		 * The previous owner never fails inside a write section, but if it
		 * had, readers would wait on an odd count forever: end it.
		 */
		if (slot->changecount & 1)
			slot_end_write(slot);
		Assert(slot->in_use);
		ngs_local_slots[i].in_use = true;
		ngs_local_slots[i].key = slot->key;
		ngs_local_slots[i].entry = DsaPointerIsValid(slot->entry) ?
			dsa_get_address(ng_area, slot->entry) : NULL;
		ngs_local_slots[i].last_used = 0;
		ngs_local_slots[i].used = false;
		/* not the epoch: the first count looks at the entry (dead, min/max) */
		ngs_local_slots[i].reset_epoch =
			~ng_shared->partitions[slot->partition].reset_epoch;
		le = local_entry(&slot->key, ng_key_hash(&slot->key));
		le->slot = i;
		inherited++;
		mask |= NG_PARTITION_BIT(ngs_my_area->partition_of[i]);
		ngs_partition_slots[ngs_my_area->partition_of[i]]++;
	}
	/* the bits of the slots in use, and none else (slots.h) */
	*ngs_my_partitions = mask;
	ngs_nfree = ngs_nslots - inherited;
	slots_build_free_cells();

	/*
	 * An exit that completed (active cleared) leaves slots in use only when
	 * their histograms needed memory it could not allocate (fold.c): nothing
	 * to report then.
	 */
	if (inherited > 0 && ngs_my_area->active)
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: took over %d slots that the previous backend with this process number left in use",
						inherited),
				 errdetail("Its exit did not complete; the counts are kept and will be folded by this backend.")));
}

/*
 * ng_slots_attach_first
 *		Set up this backend's local state, once (ng_slots_attach).  Returns false if the
 *		process cannot count (library not preloaded, no shared memory, a
 *		parallel worker).
 */
bool
ng_slots_attach_first(void)
{
	int			procno;

	if (ngs_attached)
		return ng_area != NULL; /* false once detached, at backend exit */

	/*
	 * A parallel worker counts nothing: its leader counts the statement, as
	 * pg_stat_statements does (the hooks test nothing else for workers).
	 */
	if (slots_unavailable || IsParallelWorker() || !ng_store_attach())
	{
		slots_unavailable = true;
		return false;
	}

	ngs_local_map = nglocal_create(TopMemoryContext, 256, NULL);

	procno = NG_MY_PROC_NUMBER();

	/*
	 * Client backends, and they only, have the process numbers of the large
	 * areas (compat.h, area.c).
	 */
	Assert(!IsUnderPostmaster ||
		   (procno < NG_NUM_CLIENT_PROCS()) == (MyBackendType == B_BACKEND));
	if (procno >= 0 && procno < ng_store_num_slot_procs())
	{
		ngs_my_area = ng_slots_of_proc(procno);
		ngs_my_partitions = &ng_slots_partition_masks()[procno];
		ngs_nslots = ngs_my_area->nslots;
		ngs_local_slots = MemoryContextAllocZero(TopMemoryContext,
												 sizeof(NgLocalSlot) * ngs_nslots);
		slots_inherit();
		ngs_my_area->active = true;
	}
	before_shmem_exit(slots_exit_callback, (Datum) 0);
	ng_slots_next_maintenance = GetCurrentTimestamp() +
		NG_MAINTENANCE_INTERVAL_MS * (TimestampTz) 1000;
	ngs_attached = true;
	return true;
}

/*
 * slots_trim_local_map
 *		Forget what we know of keys that have no slot when the local map has
 *		grown large (a backend running endless distinct statements).
 */
static void
slots_trim_local_map(void)
{
	nglocal_iterator iter;
	NgLocalEntry *le;
	nglocal_hash *kept;

	if (ngs_local_map->members <= 4 * (uint32) ngs_nslots + 1024)
		return;
	kept = nglocal_create(TopMemoryContext, 2 * ngs_nslots, NULL);
	nglocal_start_iterate(ngs_local_map, &iter);
	while ((le = nglocal_iterate(ngs_local_map, &iter)) != NULL)
	{
		if (le->slot >= 0)
		{
			bool		found;
			NgLocalEntry *copy = nglocal_insert_hash(kept, le->key, le->hash,
													 &found);

			copy->slot = le->slot;
			copy->constants = le->constants;
			copy->text_done = le->text_done;
			copy->text_epoch = le->text_epoch;
			copy->text_missing = le->text_missing;
			copy->text_cap_seen = le->text_cap_seen;
			copy->text_bytes_seen = le->text_bytes_seen;
			copy->last_counted = le->last_counted;
		}
	}
	nglocal_destroy(ngs_local_map);
	ngs_local_map = kept;
	ngs_map_version++;			/* the cache pointed into the old map */
}

/*
 * ng_slots_maintenance
 *		From time to time, at the end of a top-level statement: release the
 *		slots this backend has not used since the last time (so idle
 *		statements stop pinning entries), try to bind unbound slots, help
 *		bring the table down to max and text memory down to
 *		query_text_memory, and try to start the keeper if it is missing.  Never waits for a lock.  now is
 *		the statement's start time; ng_slots_maintenance_if_due calls this
 *		once NG_MAINTENANCE_INTERVAL_MS have passed since the last time.
 */
void
ng_slots_maintenance(TimestampTz now)
{
	bool		over_max;

	ng_slots_next_maintenance = now +
		NG_MAINTENANCE_INTERVAL_MS * (TimestampTz) 1000;
	if (!ngs_attached || ngs_my_area == NULL)
		return;

	/* a pin a parse took for an execution that did not follow */
	(void) ng_slot_drop_carried(false);
	over_max = pg_atomic_read_u32(&ng_shared->entry_count) > (uint32) ng_max;
	for (int i = 0; i < ngs_nslots; i++)
	{
		NgLocalSlot *ls = &ngs_local_slots[i];

		if (!ls->in_use)
			continue;
		if (ls->entry == NULL)
		{
			/* unbound: fold once its entry can be had; until then, keep */
			if (ng_slot_adopt_entry(i, false))
				ng_slot_release(i, false);
		}
		else if (!ls->used || over_max)
		{
			/*
			 * Idle since the last time, or the table is over max (max was
			 * lowered): fold and drop the pin, so that eviction can take the
			 * entry if it is cold.  A statement still running binds again.
			 */
			ng_slot_release(i, false);
		}
		else
			ls->used = false;
	}

	ng_slots_flush_cells();
	if (pg_atomic_read_u32(&ng_shared->entry_count) > (uint32) ng_max)
		ng_evict_to_limit();
	if (pg_atomic_read_u64(&ng_shared->text_bytes) >
		(uint64) ng_query_text_memory_kb * 1024)
		ng_evict_texts_to_limit();
	ng_keeper_maintenance(now);
	slots_trim_local_map();
}

/*
 * slots_exit_callback
 *		Fold every slot before the backend goes (waiting for locks: the
 *		counts must not be lost).
 *
 *		This before_shmem_exit callback is registered after InitPostgres
 *		registered ShutdownPostgres, so it runs first: a backend that exits
 *		in the middle of a transaction (FATAL, pg_terminate_backend) still has
 *		it open here, possibly with LWLocks held.  So it first does what
 *		ShutdownPostgres would do next anyway, as RemoveTempRelationsCallback
 *		does in the same position: AbortOutOfAnyTransaction, which releases
 *		every LWLock and runs the abort callbacks (failures.c records the
 *		failed statement into our slots now, before they are folded);
 *		LWLockReleaseAll covers an exit outside a transaction.
 *
 *		Nothing here allocates DSA memory (ng_dsa_can_allocate is false while
 *		the process exits): an unbound slot whose key has no entry leaves its
 *		counts in evicted_calls and unadmitted_calls.  If this callback
 *		fails nonetheless (an ERROR here is FATAL and skips the rest of it),
 *		each slot is either folded or still in use and consistent; readers
 *		count the latter, and the next backend with this process number takes
 *		them over (slots_inherit).
 */
static void
slots_exit_callback(int code, Datum arg)
{
	if (ngs_my_area == NULL || ng_area == NULL)
		return;
	AbortOutOfAnyTransaction();
	LWLockReleaseAll();
	ngs_exiting = true;
	(void) ng_slot_drop_carried(true);
	/* bound slots first: dropping their pins may make room for the others */
	for (int i = 0; i < ngs_nslots; i++)
	{
		if (ngs_local_slots[i].in_use && ngs_local_slots[i].entry != NULL)
		{
			ng_slot_release(i, true);
#ifdef USE_ASSERT_CHECKING
			if (ng_debug_fail_at_exit)
				elog(ERROR, "pg_stat_statements_ng: failure injected at exit");
#endif
		}
	}
	for (int i = 0; i < ngs_nslots; i++)
	{
		if (!ngs_local_slots[i].in_use)
			continue;
		(void) ng_slot_adopt_entry(i, true);
		ng_slot_release(i, true);
	}
	ng_hist_spares_free();
	pg_write_barrier();
	ngs_my_area->active = false;
	ngs_my_area = NULL;
}
