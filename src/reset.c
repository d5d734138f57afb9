/*-------------------------------------------------------------------------
 *
 * reset.c
 *		Resets: pg_stat_statements_reset's semantics on the shared table
 *		and on the counts backends still hold in their slots.
 *
 * Why a file of its own: a reset is the one operation that must see both
 * the shared entries (store.c) and every backend's slots (slots.h), and the
 * only one that holds every partition lock at once.
 *
 * Locking: a full reset takes every partition lock exclusively, in index
 * order, so that no reader or backend sees a half-reset table; a partial
 * reset takes them one at a time.  Entries with bound slots are unlinked
 * and marked dead (their memory goes with the last pin); counts in unbound
 * slots are voided through the partition generation.  What a reset removes
 * and voids is handed, under the same locks, to the history's open window
 * (history_capture.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "counters.h"
#include "guc.h"
#include "evict.h"
#include "history.h"
#include "plans.h"
#include "reset.h"
#include "shmem.h"
#include "slots/slots.h"
#include "store.h"
#include "waits.h"

/*
 * One reset, as ng_store_reset applies it to each partition
 * (reset_partition): which entries (the filter: InvalidOid or 0 matches
 * anything), what is done to them, when, and where what it removes goes.
 */
typedef struct ResetRequest
{
	Oid			userid;
	Oid			dbid;
	uint64		queryid;
	bool		minmax_only;	/* reset min and max only, remove nothing */
	TimestampTz now;			/* the reset's time */
	void	   *cap;			/* the history's capture of what it removes
								 * (ng_history_capture_begin), or NULL */
} ResetRequest;

static bool
reset_matches(const NgKey *key, Oid userid, Oid dbid, uint64 queryid)
{
	return (userid == InvalidOid || key->userid == userid) &&
		(dbid == InvalidOid || key->dbid == dbid) &&
		(queryid == 0 || key->queryid == queryid);
}

/*
 * reset_voids_unbound
 *		Does a partial reset of partition p have counts to void in unbound
 *		slots: does any backend count, for this partition and without an
 *		entry, a key the filter matches?  Unbound slots are voided only as a
 *		whole (through the partition generation), so a reset that matches
 *		none of them must leave the generation alone: other users' counts
 *		would go with it.
 *
 *		Caller holds the partition lock exclusively, so no slot of this
 *		partition can be folded meanwhile: a write in progress on one is
 *		either a count (its key and binding stay as they are) or a new
 *		binding (its counts are still zero, so whether it is voided does not
 *		matter).  A slot that cannot be copied consistently now (its writer
 *		is stopped mid-write) is therefore judged by its key and binding as
 *		they are, without waiting.
 */
static bool
reset_voids_unbound(int p, Oid userid, Oid dbid, uint64 queryid)
{
	NgPartitionSlots it;
	NgBackendSlots *area;
	int			i;
	NgSlot		copy;

	ng_partition_slots_begin(&it, p);
	while (ng_partition_slots_next(&it, &area, &i))
	{
		if (!ng_slot_try_read(area, ng_slot_at(area, i), &copy, NULL))
			memcpy(&copy, ng_slot_at(area, i), sizeof(NgSlot));
		if (copy.in_use && copy.partition == p &&
			!DsaPointerIsValid(copy.entry) &&
			reset_matches(&copy.key, userid, dbid, queryid))
			return true;
	}
	return false;
}

/*
 * reset_partition
 *		Apply reset req to one partition.  Caller holds its lock exclusively.
 *		A full reset voids every unbound slot of the partition; a partial one
 *		only if one of them counts for a key it matches (then all of them).
 */
static void
reset_partition(NgSharedPartition *part, const ResetRequest *req)
{
	Oid			userid = req->userid;
	Oid			dbid = req->dbid;
	uint64		queryid = req->queryid;
	bool		minmax_only = req->minmax_only;
	dsa_pointer *buckets;
	bool		full = (userid == InvalidOid && dbid == InvalidOid &&
						queryid == 0 && !minmax_only);
	bool		dropped = false;

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	if (full ||
		(!minmax_only &&
		 reset_voids_unbound(part - ng_shared->partitions, userid, dbid,
							 queryid)))
		part->generation++;
	if (full)
		part->text_epoch++;
	if (part->nbuckets == 0)
		return;

	buckets = ng_store_buckets(part);
	for (uint32 b = 0; b < part->nbuckets; b++)
	{
		dsa_pointer cur = buckets[b];

		while (DsaPointerIsValid(cur))
		{
			NgSharedEntry *entry = dsa_get_address(ng_area, cur);
			dsa_pointer next = entry->next;

			if (reset_matches(&entry->key, userid, dbid, queryid))
			{
				if (minmax_only)
				{
					ng_counters_clear_minmax(&entry->counters);
					ng_plans_clear_minmax(entry);
					entry->minmax_generation++;
					entry->minmax_stats_since = req->now;
					/* changed: collectors (changed_since) see it again */
					entry->counters.changed_generation =
						pg_atomic_read_u64(&ng_shared->change_generation);
					/* owners of bound slots look again (shmem.h) */
					pg_write_barrier();
					part->reset_epoch++;
				}
				else
				{
					/* the history's open window keeps its counts */
					ng_history_capture_entry(req->cap,
											 part - ng_shared->partitions,
											 entry, cur);
					ng_entry_drop(part, entry, cur);
					dropped = true;
				}
			}
			cur = next;
		}
	}

	/* texts went with the removed entries: backends must look again */
	if (dropped && !full)
		part->text_epoch++;
}

/* a reset stopped between a void and the history's copy (tests) */
static inline void
reset_stall(const NgSharedPartition *part, uint32 old_generation)
{
	if (part->generation != old_generation &&
		NG_DEBUG_FAULT(NG_FAULT_STALL_RESET))
		ng_debug_stall();
}

/*
 * ng_store_reset
 *		pg_stat_statements_reset semantics: remove the entries matching the
 *		filter (0 matches anything), or with minmax_only reset their min and
 *		max.  With no filter and not minmax_only, everything is removed and
 *		the info figures start afresh; any other reset that leaves the table
 *		without entries restarts dealloc (and admissions_refused) and
 *		stats_reset, as contrib's does.  Returns the reset time.
 *
 * Only the full reset holds every partition at once, so that no reader or
 * backend sees a half-reset table.  Counts that backends hold in slots bound
 * to removed entries are void (the entries are dead); counts in unbound
 * slots are void through the partition generation, which a partial reset
 * moves only when it matches one of them (reset_partition).  The wait
 * profile's rows of the statements reset go with them (waits.c), after the
 * partition locks are released.
 */
TimestampTz
ng_store_reset(Oid userid, Oid dbid, uint64 queryid, bool minmax_only)
{
	TimestampTz now = GetCurrentTimestamp();
	bool		full = (userid == InvalidOid && dbid == InvalidOid &&
						queryid == 0 && !minmax_only);

	/* what the reset removes stays in the history's open window */
	void	   *cap = minmax_only ? NULL : ng_history_capture_begin();
	ResetRequest req = {
		.userid = userid,
		.dbid = dbid,
		.queryid = queryid,
		.minmax_only = minmax_only,
		.now = now,
		.cap = cap,
	};

	if (full)
	{
		for (int i = 0; i < NG_NUM_PARTITIONS; i++)
			LWLockAcquire(ng_shared->partitions[i].lock, LW_EXCLUSIVE);
		for (int i = 0; i < NG_NUM_PARTITIONS; i++)
		{
			uint32		generation = ng_shared->partitions[i].generation;

			reset_partition(&ng_shared->partitions[i], &req);
			reset_stall(&ng_shared->partitions[i], generation);
			ng_history_capture_slots(cap, i, generation);
		}
		SpinLockAcquire(&ng_shared->mutex);
		memset(&ng_shared->stats, 0, sizeof(NgSharedStats));
		ng_shared->stats.stats_reset = now;
		/* void every process's refused counts (slots.h) */
		ng_shared->stats_generation++;
		SpinLockRelease(&ng_shared->mutex);
		pg_atomic_write_u32(&ng_shared->losses_logged, 0);
		pg_atomic_write_u64(&ng_shared->sqlstates_lost, 0);
		ng_evict_forget_room();
		for (int i = NG_NUM_PARTITIONS - 1; i >= 0; i--)
			LWLockRelease(ng_shared->partitions[i].lock);
	}
	else
	{
		for (int i = 0; i < NG_NUM_PARTITIONS; i++)
		{
			NgSharedPartition *part = &ng_shared->partitions[i];
			uint32		generation;

			LWLockAcquire(part->lock, LW_EXCLUSIVE);
			generation = part->generation;
			reset_partition(part, &req);
			reset_stall(part, generation);
			ng_history_capture_slots(cap, i, generation);
			LWLockRelease(part->lock);
		}

		/*
		 * As contrib's: a reset that leaves no entry (it removed them all, or
		 * found none) restarts dealloc and stats_reset, and only those.
		 */
		if (pg_atomic_read_u32(&ng_shared->entry_count) == 0)
		{
			NgSharedStats cur;

			/* refusals are counted in the slot areas too: offset them */
			ng_stats_read(&cur);
			SpinLockAcquire(&ng_shared->mutex);
			ng_shared->stats.dealloc = 0;
			ng_shared->stats.admissions_refused -= cur.admissions_refused;
			ng_shared->stats.stats_reset = now;
			SpinLockRelease(&ng_shared->mutex);
		}
	}
	ng_history_capture_end(cap);
	/* the wait profile's rows of the same statements (none of our locks) */
	if (!minmax_only)
		ng_waits_reset(userid, dbid, queryid);
	return now;
}
