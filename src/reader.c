/*-------------------------------------------------------------------------
 *
 * reader.c
 *		Collecting exact statistics: shared entries plus what backends still
 *		hold in their slots.
 *
 * Why a file of its own: this is the other half of the slot protocol
 * (slots.c), and the place where exactness is decided; the SQL functions
 * (funcs.c) and the dump at shutdown (persist.c) both read through it.
 *
 * Reading.  Partition by partition: take the partition lock in shared mode,
 * copy its entries, then add every backend slot that counts for the
 * partition (found through each backend's partition map, copied with the
 * change-count protocol), and release the lock.  Holding the lock in shared
 * mode keeps every fold into this partition out while we look, so each
 * execution is seen exactly once: in a slot or in an entry.  A slot bound to
 * an entry that is no longer in the table (a reset removed it) is skipped; a
 * slot with no entry is added to the key's entry if there is one, or becomes
 * a row of its own without text.  Texts are copied under the shared lock (a
 * text is freed only under the exclusive lock).
 *
 * A slot whose writer is in the middle of a write is not waited for under
 * the lock (interrupts are held there): the read releases the lock, sleeps,
 * checks for interrupts and reads the partition again; after 5 s it goes on
 * without that slot and says so (see ng_read_partition).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "pg_stat_statements_ng.h"

/* how long a read waits for a slot in the middle of a write (ms) */
#define NG_READ_WAIT_MS		5000

static bool read_partition_once(int p, HTAB *rows, bool showtext,
								bool skip_busy, int *skipped);

/*
 * ng_read_rows_create
 *		An empty table of NgRow keyed by NgKey, in the current memory
 *		context, for ng_read_partition.
 */
HTAB *
ng_read_rows_create(void)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(NgKey);
	ctl.entrysize = sizeof(NgRow);
	ctl.hcxt = CurrentMemoryContext;
	return hash_create("pg_stat_statements_ng rows", 256, &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/*
 * ng_read_partition
 *		Build the rows of one partition into rows (a hash table keyed by
 *		NgKey, empty on entry).  Takes and releases the partition lock.
 *
 *		A slot found in the middle of a write for longer than a spin (its
 *		writer descheduled or stopped) cannot be waited for under the lock,
 *		where interrupts are held: release the lock, forget the partial
 *		rows, sleep 1 ms, check for interrupts, and read the partition again.
 *		After NG_READ_WAIT_MS of that, the read goes on without the slots
 *		still being written, and says so in a WARNING: exact but for them.
 */
void
ng_read_partition(int p, HTAB *rows, bool showtext)
{
	TimestampTz wait_start = 0;
	bool		skip_busy = false;
	int			skipped = 0;

	while (!read_partition_once(p, rows, showtext, skip_busy, &skipped))
	{
		HASH_SEQ_STATUS seq;
		NgRow	   *row;

		hash_seq_init(&seq, rows);
		while ((row = hash_seq_search(&seq)) != NULL)
		{
			if (row->qtext)
				pfree(row->qtext);
			(void) hash_search(rows, &row->key, HASH_REMOVE, NULL);
		}
		if (wait_start == 0)
			wait_start = GetCurrentTimestamp();
		else if (TimestampDifferenceExceeds(wait_start, GetCurrentTimestamp(),
											NG_READ_WAIT_MS))
			skip_busy = true;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1L, WAIT_EVENT_PG_SLEEP);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	if (skipped > 0)
		ereport(WARNING,
				(errmsg("pg_stat_statements_ng: %d backend slots stayed in the middle of a write for %d ms; this read omits its counts",
						skipped, NG_READ_WAIT_MS),
				 errdetail("The backends writing them are stopped or not running; a later read includes their counts.")));
}

/*
 * read_entries
 *		Copy the folded counts of every entry of part into rows.  The caller
 *		holds the partition lock, in any mode.
 */
static void
read_entries(NgSharedPartition *part, HTAB *rows, bool showtext)
{
	dsa_pointer *buckets;

	if (part->nbuckets == 0)
		return;
	buckets = dsa_get_address(ng_area, part->buckets);
	for (uint32 b = 0; b < part->nbuckets; b++)
	{
		for (dsa_pointer cur = buckets[b]; DsaPointerIsValid(cur);)
		{
			NgSharedEntry *entry = dsa_get_address(ng_area, cur);
			NgRow	   *row = hash_search(rows, &entry->key, HASH_ENTER, NULL);

			row->entry = cur;
			row->minmax_generation = entry->minmax_generation;
			row->usage = entry->usage;
			row->counters = entry->counters;
			row->stats_since = entry->stats_since;
			row->minmax_stats_since = entry->minmax_stats_since;
			row->text_stored_at = entry->text_stored_at;
			row->encoding = entry->encoding;
			row->qtext = NULL;
			row->qtext_len = 0;
			if (showtext && DsaPointerIsValid(entry->qtext))
			{
				row->qtext_len = entry->text_len;
				row->qtext = palloc(entry->text_len + 1);
				memcpy(row->qtext, dsa_get_address(ng_area, entry->qtext),
					   entry->text_len + 1);
			}
			cur = entry->next;
		}
	}
}

/*
 * read_slot_row
 *		The row a slot's copy adds to, or NULL if it counts for none (bound
 *		to an entry a reset removed; unbound and counted before a reset, or
 *		empty).  May create a row of its own for an unbound slot.
 */
static NgRow *
read_slot_row(NgSharedPartition *part, HTAB *rows, NgSlot *copy,
			  TimestampTz now)
{
	NgRow	   *row;
	bool		found;

	if (DsaPointerIsValid(copy->entry))
	{
		row = hash_search(rows, &copy->key, HASH_FIND, NULL);
		if (row == NULL || row->entry != copy->entry)
			return NULL;		/* bound to an entry a reset removed */
		if (copy->minmax_generation != row->minmax_generation)
			ng_counters_clear_minmax(&copy->counters);
		return row;
	}
	if (copy->partition_generation != part->generation)
		return NULL;			/* counted before a reset */
	if (!ng_counters_any(&copy->counters))
		return NULL;
	row = hash_search(rows, &copy->key, HASH_ENTER, &found);
	if (!found)
	{
		row->entry = InvalidDsaPointer;
		row->minmax_generation = 0;
		row->usage = 0;
		memset(&row->counters, 0, sizeof(NgCounters));
		row->qtext = NULL;
		row->qtext_len = 0;
		row->encoding = GetDatabaseEncoding();
		row->stats_since = now;
		row->minmax_stats_since = now;
		row->text_stored_at = 0;
	}
	return row;
}

/*
 * read_partition_once
 *		ng_read_partition under the partition lock.  Returns false, having
 *		released the lock, when a slot could not be copied (unless
 *		skip_busy: then such slots are left out and counted in *skipped).
 */
static bool
read_partition_once(int p, HTAB *rows, bool showtext, bool skip_busy,
					int *skipped)
{
	NgSharedPartition *part = &ng_shared->partitions[p];
	int			nprocs = ng_store_num_slot_procs();
	TimestampTz now = GetCurrentTimestamp();
	NgSlot		copy;

	LWLockAcquire(part->lock, LW_SHARED);

	/* the folded counts */
	read_entries(part, rows, showtext);

	/* the counts still in backends' slots */
	for (int proc = 0; proc < nprocs; proc++)
	{
		NgBackendSlots *area = ng_slots_of_proc(proc);

		for (int i = 0; i < ng_slots_per_backend; i++)
		{
			NgRow	   *row;

			if (area->partition_of[i] != p)
				continue;
			if (!ng_slot_try_read(ng_slot_at(area, i), &copy))
			{
				if (!skip_busy)
				{
					LWLockRelease(part->lock);
					return false;
				}
				(*skipped)++;
				continue;
			}
			if (!copy.in_use || copy.partition != p)
				continue;
			row = read_slot_row(part, rows, &copy, now);
			if (row != NULL)
				ng_counters_merge(&row->counters, &copy.counters);
		}
	}

	LWLockRelease(part->lock);
	return true;
}
