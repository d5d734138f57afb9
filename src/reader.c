/*-------------------------------------------------------------------------
 *
 * reader.c
 *		Collecting exact statistics: shared entries plus what backends still
 *		hold in their slots.
 *
 * Why a file of its own: the other half of the slot protocol, where
 * exactness is decided; the SQL functions and the dump read through it.
 *
 * Reading.  Partition by partition: take the partition lock in shared mode,
 * copy every backend slot that counts for the partition (found through the
 * partition masks of the processes, then the partition map of each process
 * whose mask has the partition, copied with the change-count protocol), then go
 * through the partition's entries, handing each one, with the slots that
 * add to it, to the caller's row callback, then the slots that have no
 * entry, and release the lock.  Holding the lock in shared mode keeps every
 * fold into this partition out while we look, so each execution is seen
 * exactly once: in a slot or in an entry.  A slot bound to an entry that is
 * no longer in the table (a reset removed it) is skipped; a slot with no
 * entry is added to the key's entry if there is one, or becomes a row of
 * its own without text.  Texts are handed over under the shared lock (a
 * text is freed only under the exclusive lock).
 *
 * Locks: one partition lock at a time, in shared mode.  Under it this file
 * allocates nothing: the slot copies and their lookup table are sized
 * before the lock is taken; when they turn out too small the read releases
 * the lock, forgets what it read, grows them and reads the partition again.
 * A caller's row callback runs under the lock and may do the same (it
 * returns false: nothing allocated under the lock), or allocate there (the
 * NgRow table of ng_read_partition does, as this file always did).
 *
 * A slot whose writer is in the middle of a write is not waited for under
 * the lock (interrupts are held there): the read releases the lock, sleeps,
 * checks for interrupts and reads the partition again; after 5 s it goes on
 * without that slot and says so (see ng_read_partition_with).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "counters.h"
#include "entry_hist.h"
#include "evict.h"
#include "guc.h"
#include "qtext.h"
#include "reader.h"
#include "shmem.h"
#include "slots/slots.h"
#include "store.h"

/* how long a read waits for a slot in the middle of a write (ms) */
#define NG_READ_WAIT_MS		5000

/* prefetching: how many buckets ahead */
#define NG_READ_PREFETCH		8

/* slot copies a read starts with (it doubles them when a partition has more) */
#define NG_READ_FIRST_SLOTS	64

/*
 * The slots counting for the partition being read, and a table to find them
 * by key.  Allocated (and grown) outside the partition lock.
 */
typedef struct NgReadScratch
{
	NgSlot	   *slots;			/* copies, in the order of the scan */
	int		   *next;			/* next slot of the same key, or -1 */
	int			nslots;
	int			maxslots;
	int		   *heads;			/* open addressing: first slot of a key, or
								 * -1; 2 x maxslots, a power of two */
	bool	   *claimed;		/* per head: an entry took the key's slots */
	uint32		mask;
	int		   *cell_at;		/* per slot: its first cell in cells[] */
	NgHistCell *cells;			/* the slots' histogram cells */
	int			ncells;
	int			maxcells;
	NgCounters	merged;			/* an entry's counts plus its slots' */
	uint64		entry_hist[NG_HIST_BUCKETS * NG_NUM_KINDS]; /* an entry's */
	uint64		merged_hist[NG_HIST_BUCKETS * NG_NUM_KINDS];	/* plus slots' */
} NgReadScratch;

/* how one pass over a partition ended */
typedef enum NgReadResult
{
	NG_READ_DONE,
	NG_READ_BUSY,				/* a slot stayed in the middle of a write */
	NG_READ_SLOTS_FULL,			/* more slots than the scratch holds */
	NG_READ_ROWS_FULL			/* the row callback ran out of room */
} NgReadResult;

/*
 * scratch_alloc
 *		(Re)allocate the scratch for maxslots slot copies, outside any lock.
 */
static void
scratch_alloc(NgReader *r, int maxslots)
{
	NgReadScratch *s = r->scratch;
	uint32		nheads = 1;

	if (s == NULL)
		s = r->scratch = palloc0(sizeof(NgReadScratch));
	else
	{
		pfree(s->slots);
		pfree(s->next);
		pfree(s->heads);
		pfree(s->claimed);
		pfree(s->cell_at);
		pfree(s->cells);
	}
	while (nheads < 2 * (uint32) maxslots)
		nheads <<= 1;
	s->slots = MemoryContextAllocHuge(CurrentMemoryContext,
									  sizeof(NgSlot) * (Size) maxslots);
	s->next = palloc(sizeof(int) * maxslots);
	s->heads = palloc(sizeof(int) * nheads);
	s->claimed = palloc(sizeof(bool) * nheads);
	s->cell_at = palloc(sizeof(int) * maxslots);
	/* room for the largest chain a slot can have, and more */
	s->maxcells = maxslots * NG_CELLS_PER_SLOT + ng_slots_most_cells();
	s->cells = MemoryContextAllocHuge(CurrentMemoryContext,
									  sizeof(NgHistCell) * (Size) s->maxcells);
	s->maxslots = maxslots;
	s->mask = nheads - 1;
	s->nslots = 0;
}

static inline uint32
key_hash(const NgKey *key)
{
	return hash_combine(murmurhash32((uint32) key->queryid),
						murmurhash32((uint32) (key->queryid >> 32) ^
									 key->userid ^ (key->dbid << 1) ^
									 (key->toplevel ? 1 : 0)));
}

/*
 * key_head
 *		The head position of key in the scratch's table: where its first
 *		slot is, or the free position it would take.
 */
static inline uint32
key_head(NgReadScratch *s, const NgKey *key)
{
	uint32		h = key_hash(key) & s->mask;

	while (s->heads[h] >= 0 &&
		   !ng_key_equal(&s->slots[s->heads[h]].key, key))
		h = (h + 1) & s->mask;
	return h;
}

/*
 * chain_slots
 *		Link the copied slots by key, each key's slots in the order of the
 *		scan (the order in which they are added to a row).
 */
static void
chain_slots(NgReadScratch *s)
{
	memset(s->heads, -1, sizeof(int) * (s->mask + 1));
	memset(s->claimed, 0, sizeof(bool) * (s->mask + 1));
	for (int i = s->nslots - 1; i >= 0; i--)
	{
		uint32		h = key_head(s, &s->slots[i].key);

		s->next[i] = s->heads[h];
		s->heads[h] = i;
	}
}

/*
 * copy_slots
 *		Copy every slot that may count for partition p into the scratch,
 *		under the partition lock: in use, still for p, and, if unbound,
 *		counted since the partition's last reset and not empty.  Whether a
 *		bound slot's entry is still there is decided with the entries.  Only
 *		the areas of processes whose partition mask has p are looked at
 *		(slots.h), so that a read costs the same whatever max_connections.
 */
static NgReadResult
copy_slots(int p, NgSharedPartition *part, NgReadScratch *s, bool skip_busy,
		   int *skipped)
{
	NgPartitionSlots it;
	NgBackendSlots *area;
	int			i;

	s->nslots = 0;
	s->ncells = 0;
	ng_partition_slots_begin(&it, p);
	while (ng_partition_slots_next(&it, &area, &i))
	{
		NgSlot	   *copy = &s->slots[s->nslots];

		if (s->nslots == s->maxslots ||
			s->ncells + (int) area->ncells > s->maxcells)
			return NG_READ_SLOTS_FULL;
		if (!ng_slot_try_read(area, ng_slot_at(area, i), copy,
							  &s->cells[s->ncells]))
		{
			if (!skip_busy)
				return NG_READ_BUSY;
			(*skipped)++;
			continue;
		}
		if (!copy->in_use || copy->partition != p)
			continue;
		if (!DsaPointerIsValid(copy->entry) &&
			(copy->partition_generation != part->generation ||
			 !ng_counters_any(&copy->counters)))
			continue;			/* counted before a reset, or empty */
		s->cell_at[s->nslots] = s->ncells;
		s->ncells += copy->hist_cells;
		s->nslots++;
	}
	return NG_READ_DONE;
}

/* the cells of slot copy i, and how many */
#define SLOT_CELLS(s, i)	(&(s)->cells[(s)->cell_at[i]]), (s)->slots[i].hist_cells

/*
 * entry_counters
 *		The counts of the entry at cur (key at entry->key) plus those of the
 *		slots that add to it: the entry's own counters when no slot does,
 *		else the scratch's merged copy; and the same for the histograms,
 *		into *hist (in the scratch).  Under the partition lock.
 */
static const NgCounters *
entry_counters(NgReadScratch *s, const NgSharedEntry *entry, dsa_pointer cur,
			   NgHistView *hist)
{
	uint32		h;
	uint32		mask;
	bool		merged = false;

	*hist = ng_entry_hist_copy(entry, s->entry_hist);
	if (s->nslots == 0)
		return &entry->counters;
	h = key_head(s, &entry->key);
	if (s->heads[h] < 0)
		return &entry->counters;
	s->claimed[h] = true;
	mask = hist->mask;
	for (int i = s->heads[h]; i >= 0; i = s->next[i])
		if (!DsaPointerIsValid(s->slots[i].entry) || s->slots[i].entry == cur)
			mask |= ng_hist_cells_mask(SLOT_CELLS(s, i));
	ng_hist_regroup(s->merged_hist, mask, *hist);
	for (int i = s->heads[h]; i >= 0; i = s->next[i])
	{
		NgSlot	   *copy = &s->slots[i];

		if (DsaPointerIsValid(copy->entry))
		{
			if (copy->entry != cur)
				continue;		/* bound to an entry a reset removed */
			if (copy->minmax_generation != entry->minmax_generation)
				ng_counters_clear_minmax(&copy->counters);
		}
		if (!merged)
			s->merged = entry->counters;
		merged = true;
		ng_counters_merge(&s->merged, &copy->counters);
		ng_hist_add_cells(s->merged_hist, mask, SLOT_CELLS(s, i));
	}
	hist->mask = mask;
	hist->groups = s->merged_hist;
	return merged ? &s->merged : &entry->counters;
}

/*
 * hand_slots
 *		Hand each copy of a slot whose counts row includes to r->slot, if
 *		set: the key's unbound slots, and the ones bound to row's entry.
 *		Under the partition lock.  False if the callback ran out of room.
 */
static bool
hand_slots(NgReader *r, const NgReadRow *row)
{
	NgReadScratch *s = r->scratch;
	uint32		h;

	if (r->slot == NULL || s->nslots == 0)
		return true;
	h = key_head(s, &row->key);
	for (int i = s->heads[h]; i >= 0; i = s->next[i])
	{
		dsa_pointer bound = s->slots[i].entry;

		if (DsaPointerIsValid(bound) && bound != row->entry)
			continue;			/* bound to an entry a reset removed */
		if (!r->slot(r, row, &s->slots[i]))
			return false;
	}
	return true;
}

/*
 * entry_prefetch
 *		Ask the CPU for the parts of an entry a read touches, some entries
 *		ahead: the entries of a partition are scattered over DSA memory, and
 *		waiting for each one's cache lines in turn is most of a read's time.
 *		Only a hint (no fault, no effect on what is read).
 */
static inline void
entry_prefetch(const NgSharedEntry *entry)
{
#if defined(__GNUC__) || defined(__clang__)
	for (Size off = 0; off < sizeof(NgSharedEntry); off += 64)
		__builtin_prefetch((const char *) entry + off);
#endif
}

/*
 * read_entries
 *		Hand every entry of part, with its slots' counts, to the row
 *		callback.  Under the partition lock.  False if the callback ran out
 *		of room.
 */
static bool
read_entries(NgSharedPartition *part, NgReader *r)
{
	dsa_pointer *buckets;
	NgReadRow	row;

	if (part->nbuckets == 0)
		return true;
	buckets = dsa_get_address(ng_area, part->buckets);
	for (uint32 b = 0; b < part->nbuckets; b++)
	{
		if (b + NG_READ_PREFETCH < part->nbuckets &&
			DsaPointerIsValid(buckets[b + NG_READ_PREFETCH]))
			entry_prefetch(dsa_get_address(ng_area,
										   buckets[b + NG_READ_PREFETCH]));
		for (dsa_pointer cur = buckets[b]; DsaPointerIsValid(cur);)
		{
			NgSharedEntry *entry = dsa_get_address(ng_area, cur);

			/* the next of the chain, while this one is handed over */
			if (DsaPointerIsValid(entry->next))
				entry_prefetch(dsa_get_address(ng_area, entry->next));
			row.key = entry->key;
			row.entry = cur;
			row.minmax_generation = entry->minmax_generation;
			row.usage = ng_evict_usage_for_dump(entry);
			row.counters = entry_counters(r->scratch, entry, cur, &row.hist);
			row.stats_since = entry->stats_since;
			row.minmax_stats_since = entry->minmax_stats_since;
			row.text_stored_at = ng_qtext_stored_at(entry->qtext);
			row.encoding = entry->encoding;
			row.qtext = NULL;
			row.qtext_len = 0;
			row.qtext_dp = entry->qtext;
			row.fingerprint = 0;
			if (r->showtext && DsaPointerIsValid(entry->qtext))
			{
				void	   *stored = dsa_get_address(ng_area, entry->qtext);

				row.qtext_len = entry->text_len;
				row.qtext = ng_qtext_text(stored);
				row.fingerprint =
					pg_atomic_read_u64(ng_qtext_fingerprint(stored));
			}
			if (!r->row(r, &row) || !hand_slots(r, &row))
				return false;
			cur = entry->next;
		}
	}
	return true;
}

/*
 * read_unbound
 *		Rows of their own for the keys that have unbound slots and no entry
 *		in the partition.  Under the partition lock.  False if the callback
 *		ran out of room.
 */
static bool
read_unbound(NgReader *r, TimestampTz now)
{
	NgReadScratch *s = r->scratch;
	NgReadRow	row;

	memset(&row, 0, sizeof(row));
	row.entry = InvalidDsaPointer;
	row.encoding = GetDatabaseEncoding();
	row.stats_since = now;
	row.minmax_stats_since = now;
	row.counters = &s->merged;
	for (uint32 h = 0; h <= s->mask && s->nslots > 0; h++)
	{
		bool		any = false;
		uint32		mask = 0;

		if (s->heads[h] < 0 || s->claimed[h])
			continue;
		memset(&s->merged, 0, sizeof(NgCounters));
		for (int i = s->heads[h]; i >= 0; i = s->next[i])
			if (!DsaPointerIsValid(s->slots[i].entry))
				mask |= ng_hist_cells_mask(SLOT_CELLS(s, i));
		memset(s->merged_hist, 0, ng_hist_groups_size(mask));
		for (int i = s->heads[h]; i >= 0; i = s->next[i])
		{
			if (DsaPointerIsValid(s->slots[i].entry))
				continue;		/* bound to an entry a reset removed */
			ng_counters_merge(&s->merged, &s->slots[i].counters);
			ng_hist_add_cells(s->merged_hist, mask, SLOT_CELLS(s, i));
			any = true;
		}
		if (!any)
			continue;
		row.hist.mask = mask;
		row.hist.groups = s->merged_hist;
		row.key = s->slots[s->heads[h]].key;
		if (!r->row(r, &row) || !hand_slots(r, &row))
			return false;
	}
	return true;
}

/*
 * read_partition_once
 *		One pass over partition p under its lock (shared), which it takes and
 *		releases.  NG_READ_BUSY when a slot could not be copied (unless
 *		skip_busy: then such slots are left out and counted in *skipped),
 *		or when r->locked asks for another pass.
 */
static NgReadResult
read_partition_once(int p, NgReader *r, bool skip_busy, int *skipped)
{
	NgSharedPartition *part = &ng_shared->partitions[p];
	TimestampTz now = GetCurrentTimestamp();
	NgReadResult res;

	LWLockAcquire(part->lock, LW_SHARED);
	res = copy_slots(p, part, r->scratch, skip_busy, skipped);
	if (res == NG_READ_DONE)
	{
		chain_slots(r->scratch);
		if (!read_entries(part, r) || !read_unbound(r, now))
			res = NG_READ_ROWS_FULL;
	}
	if (res == NG_READ_DONE && r->locked != NULL && !r->locked(r, p))
		res = NG_READ_BUSY;
	LWLockRelease(part->lock);
	return res;
}

/*
 * ng_read_partition_with
 *		Hand every row of partition p to r->row, under the partition lock,
 *		which it takes and releases; r->scratch is NULL the first time.
 *
 *		When a pass cannot finish, the lock is released, r->forget told to
 *		drop the rows it was given, and the partition read again: after
 *		growing the slot copies, or after r->grow (outside the lock) when
 *		r->row returned false.  A slot found in the middle of a write for
 *		longer than a spin (its writer descheduled or stopped) cannot be
 *		waited for under the lock, where interrupts are held: sleep 1 ms,
 *		check for interrupts, and read again.  After NG_READ_WAIT_MS of that,
 *		the read goes on without the slots still being written, and says so
 *		in a WARNING: exact but for them.
 */
void
ng_read_partition_with(int p, NgReader *r)
{
	TimestampTz wait_start = 0;
	bool		skip_busy = false;
	int			skipped = 0;
	NgReadResult res;

	if (r->scratch == NULL)
		scratch_alloc(r, NG_READ_FIRST_SLOTS);
	while ((res = read_partition_once(p, r, skip_busy, &skipped)) != NG_READ_DONE)
	{
		r->forget(r);
		skipped = 0;
		if (res == NG_READ_SLOTS_FULL)
		{
			scratch_alloc(r, r->scratch->maxslots * 2);
			continue;
		}
		if (res == NG_READ_ROWS_FULL)
		{
			r->grow(r);
			continue;
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
 * ng_read_reader_free
 *		Free what ng_read_partition_with allocated for r.
 */
void
ng_read_reader_free(NgReader *r)
{
	NgReadScratch *s = r->scratch;

	if (s == NULL)
		return;
	pfree(s->slots);
	pfree(s->next);
	pfree(s->heads);
	pfree(s->claimed);
	pfree(s->cell_at);
	pfree(s->cells);
	pfree(s);
	r->scratch = NULL;
}
