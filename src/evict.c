/*-------------------------------------------------------------------------
 *
 * evict.c
 *		Making room in the shared table: a clock sweep, one partition at a
 *		time, that never waits.
 *
 * Why a file of its own: the eviction policy and its loss accounting are
 * what the seeds' workloads stress; they should be readable in one place.
 *
 * Policy.  Entries earn usage when counts are folded into them (one per
 * call or planning, saturating at NG_USAGE_MAX).  The sweep visits one
 * partition at a time, chosen by an atomic clock hand over partitions, and
 * within it walks the buckets from the partition's own hand: an entry with
 * usage is passed over with its usage halved, an entry without usage is
 * evicted, an entry that slots are bound to (pinned) is never touched.  A
 * statement that runs often keeps enough usage to survive many passes; one
 * that ran once (usage 1 at creation, 2 after its fold) is gone on the
 * third.  The table is brought down to max minus a small batch, so that a
 * full table does not sweep for every new statement.
 *
 * Locking.  Only LWLockConditionalAcquire on partition locks: a partition
 * that is busy is skipped (and counted as a lock miss), so an eviction
 * never waits for a reader, for a folding backend, or for another
 * eviction.  Callers must not hold a partition lock.
 *
 * Accounting.  What eviction removes is added to the info figures: the
 * number of entries (dealloc), their calls and execution time, and the
 * time of the last eviction.  Every count an entry held is in the shared
 * entry when it is evicted, because pinned entries are never evicted; so
 * sum(calls) over the view plus evicted_calls is every execution counted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/pg_bitutils.h"
#include "utils/timestamp.h"

#include "alloc.h"
#include "evict.h"
#include "guc.h"
#include "history.h"
#include "qtext.h"
#include "shmem.h"
#include "store.h"

/* what one visit of a partition evicts at least, when there is that much */
#define NG_EVICT_PER_VISIT	8

typedef struct EvictTally
{
	int64		entries;
	int64		calls;
	double		exec_time;
} EvictTally;

/*
 * ng_evict_earn_usage
 *		Credit an entry with executions.  Caller holds its partition lock
 *		exclusively.
 */
void
ng_evict_earn_usage(NgSharedEntry *entry, int64 calls)
{
	uint64		usage = (uint64) entry->usage + (uint64) Max(calls, 0);

	entry->usage = (uint32) Min(usage, (uint64) NG_USAGE_MAX);
}

/*
 * evict_entry
 *		Evict an unpinned entry of a partition whose lock the caller holds
 *		exclusively, adding what it held to tally.
 */
static void
evict_entry(NgSharedPartition *part, NgSharedEntry *entry, dsa_pointer dp,
			bool recycle, EvictTally *tally)
{
	tally->entries++;
	tally->calls += entry->counters.calls[NG_EXEC];
	tally->exec_time += entry->counters.total_time[NG_EXEC];
	ng_entry_unlink(part, entry, dp);
	if (ng_history_keep_evicted(part, entry, dp))
		return;					/* the keeper frees it */
	if (recycle)
		ng_entry_recycle_memory(entry, dp);
	else
		ng_entry_release_memory(entry, dp);
}

/*
 * evict_hand_next
 *		The bucket the partition's clock hand is at, the hand moved on to
 *		the next.  A bucket array that grew (store.c doubles it, rehashing
 *		the chains) is walked from its first bucket.  Caller holds the
 *		partition lock exclusively; the partition has buckets.
 */
static uint32
evict_hand_next(NgSharedPartition *part)
{
	uint32		b;

	if (part->clock_nbuckets != part->nbuckets)
	{
		part->clock_bucket = 0;
		part->clock_nbuckets = part->nbuckets;
	}
	b = part->clock_bucket;
	part->clock_bucket = (b + 1) & (part->nbuckets - 1);
	return b;
}

/*
 * evict_sweep_partition
 *		Evict up to want entries from a partition whose lock the caller holds
 *		exclusively, walking at most one revolution of its buckets.  Adds to
 *		*unpinned the number of entries it found that could be evicted some
 *		day (not pinned).  recycle: keep the first one's memory for this
 *		backend's insert (ng_entry_recycle_memory).
 */
static void
evict_sweep_partition(NgSharedPartition *part, int64 want, bool recycle,
					  EvictTally *tally, int64 *unpinned)
{
	dsa_pointer *buckets;
	int64		evicted = 0;

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	if (part->nbuckets == 0 || part->nentries == 0)
		return;
	buckets = dsa_get_address(ng_area, part->buckets);

	for (uint32 step = 0; step < part->nbuckets && evicted < want; step++)
	{
		uint32		b = evict_hand_next(part);
		dsa_pointer cur = buckets[b];

		while (DsaPointerIsValid(cur))
		{
			NgSharedEntry *entry = dsa_get_address(ng_area, cur);
			dsa_pointer next = entry->next;

			if (pg_atomic_read_u32(&entry->pins) > 0)
				;				/* a backend counts for it: never evicted */
			else if (entry->usage > 0)
			{
				entry->usage /= 2;
				(*unpinned)++;
			}
			else
			{
				evict_entry(part, entry, cur, recycle, tally);
				evicted++;
				(*unpinned)++;
			}
			cur = next;
		}
	}
}

/*
 * evict_account
 *		Add what an eviction removed, and the partitions it found busy, to
 *		the info figures.
 */
static void
evict_account(const EvictTally *tally, int64 misses)
{
	TimestampTz now;

	if (tally->entries == 0 && misses == 0)
		return;
	now = tally->entries > 0 ? GetCurrentTimestamp() : 0;
	SpinLockAcquire(&ng_shared->mutex);
	ng_shared->stats.dealloc += tally->entries;
	ng_shared->stats.evicted_calls += tally->calls;
	ng_shared->stats.evicted_exec_time += tally->exec_time;
	ng_shared->stats.lock_misses += misses;
	if (tally->entries > 0)
		ng_shared->stats.last_eviction_time = now;
	SpinLockRelease(&ng_shared->mutex);
}

/*
 * evict_down_to
 *		Sweep partitions, skipping busy ones, until the table holds at most
 *		target entries.  Each revolution over all partitions halves the
 *		usage of every unpinned entry, so the sweep goes on while it finds
 *		unpinned entries, and at most as many revolutions as it takes to
 *		halve the largest usage to zero; it stops early when a revolution
 *		finds only pinned entries (or only busy partitions).  A partition
 *		visited gives its share of the work, or up to NG_EVICT_PER_VISIT of
 *		it if that is more: one lock for a small batch, not one per entry.
 */
static void
evict_down_to(uint32 target, bool recycle)
{
	EvictTally	tally = {0};
	int64		misses = 0;
	int			max_revolutions = 2 + pg_leftmost_one_pos32(NG_USAGE_MAX) + 1;

	for (int rev = 0; rev < max_revolutions; rev++)
	{
		int64		unpinned = 0;

		for (int visit = 0; visit < NG_NUM_PARTITIONS; visit++)
		{
			uint32		count = pg_atomic_read_u32(&ng_shared->entry_count);
			uint32		p;
			NgSharedPartition *part;

			if (count <= target)
				goto done;
			p = pg_atomic_fetch_add_u32(&ng_shared->clock_partition, 1) % NG_NUM_PARTITIONS;
			part = &ng_shared->partitions[p];
			if (!LWLockConditionalAcquire(part->lock, LW_EXCLUSIVE))
			{
				misses++;
				continue;
			}
			evict_sweep_partition(part,
								  Max((int64) (count - target) / NG_NUM_PARTITIONS,
									  Min((int64) (count - target), NG_EVICT_PER_VISIT)),
								  recycle, &tally, &unpinned);
			LWLockRelease(part->lock);
		}
		if (unpinned == 0)
			break;
	}
done:
	evict_account(&tally, misses);
}

/*
 * ng_evict_make_room
 *		The table is full and a backend wants a new entry: evict a batch.
 *		Returns true if there is room now.  Never waits for a lock.
 */
bool
ng_evict_make_room(void)
{
	uint32		max = (uint32) ng_max;

	evict_down_to(max - ng_evict_batch(), true);
	/* from now on the admission filter keeps the room made for recurrence */
	if (pg_atomic_read_u32(&ng_shared->admit_after_eviction) == 0)
		pg_atomic_write_u32(&ng_shared->admit_after_eviction, 1);
	return pg_atomic_read_u32(&ng_shared->entry_count) < max;
}

/*
 * ng_evict_init_shmem
 *		Set eviction's shared state for a new shared state (memory zeroed):
 *		the hand over partitions, the admission filter's cells and flag.
 *		The partitions' hands start at zero.  Called by the postmaster.
 */
void
ng_evict_init_shmem(void)
{
	pg_atomic_init_u32(&ng_shared->clock_partition, 0);
	pg_atomic_init_u32(&ng_shared->admit_after_eviction, 0);
	for (int i = 0; i < NG_ADMIT_CELLS; i++)
		pg_atomic_init_u32(&ng_shared->admit_seen[i], 0);
}

/*
 * ng_evict_forget_room
 *		The table is empty (a full reset): the admission filter waits for it
 *		to fill again.  Caller holds every partition lock.
 */
void
ng_evict_forget_room(void)
{
	pg_atomic_write_u32(&ng_shared->admit_after_eviction, 0);
}

/*
 * ng_evict_count_removed
 *		Count an entry that left the table other than by a sweep (the restore
 *		could not put it back) as an evicted one: dealloc, its calls and
 *		execution time, the time of the last eviction.
 */
void
ng_evict_count_removed(int64 calls, double exec_time)
{
	EvictTally	tally = {1, calls, exec_time};

	evict_account(&tally, 0);
}

/* usage classes: 0 for no usage, else 1 + floor(log2(usage)) */
#define NG_USAGE_CLASSES	32

static inline int
usage_class(uint32 usage)
{
	return usage == 0 ? 0 : 1 + pg_leftmost_one_pos32(usage);
}

/*
 * evict_coldest_in_partition
 *		In a partition whose lock the caller holds (shared suffices to
 *		count, eviction needs it exclusively): count its
 *		unpinned entries per usage class into classes (when classes is not
 *		NULL), or evict, while the table holds more than max entries (another
 *		backend may be evicting too), those of a class below cut, and those
 *		of class cut while *at_cut > 0.
 */
static void
evict_coldest_in_partition(NgSharedPartition *part, int64 *classes, int cut,
						   int64 *at_cut, EvictTally *tally)
{
	dsa_pointer *buckets;

	Assert(classes != NULL ? LWLockHeldByMe(part->lock) :
		   LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	if (part->nbuckets == 0 || part->nentries == 0)
		return;
	buckets = dsa_get_address(ng_area, part->buckets);
	for (uint32 b = 0; b < part->nbuckets; b++)
	{
		dsa_pointer cur = buckets[b];

		while (DsaPointerIsValid(cur))
		{
			NgSharedEntry *entry = dsa_get_address(ng_area, cur);
			dsa_pointer next = entry->next;
			int			c = usage_class(entry->usage);

			if (pg_atomic_read_u32(&entry->pins) > 0)
				;				/* never evicted */
			else if (classes != NULL)
				classes[c]++;
			else if (pg_atomic_read_u32(&ng_shared->entry_count) <= (uint32) ng_max)
				return;
			else if (c < cut || (c == cut && *at_cut > 0))
			{
				if (c == cut)
					(*at_cut)--;
				evict_entry(part, entry, cur, false, tally);
			}
			cur = next;
		}
	}
}

/*
 * ng_evict_to_limit
 *		Bring the table down to max after max was lowered, or after a
 *		restore put back more entries than max: the least used go, by usage
 *		over the whole table (a clock sweep asked for many entries at once
 *		would pass the most used ones again and again, halving their usage,
 *		while entries its hand did not reach stayed).  One pass counts the
 *		unpinned entries per usage class, a second evicts the classes below
 *		the cut and as many of the cut's class as needed.  Partitions are
 *		locked conditionally (shared to count, exclusively to evict); the
 *		keeper, and backends at maintenance, call this every interval while
 *		the table is over max, so a busy partition only delays it.
 */
void
ng_evict_to_limit(void)
{
	EvictTally	tally = {0};
	int64		misses = 0;
	int64		classes[NG_USAGE_CLASSES] = {0};
	int64		excess = (int64) pg_atomic_read_u32(&ng_shared->entry_count) - ng_max;
	int64		below = 0;
	int64		at_cut = 0;
	int			cut = 0;

	if (excess <= 0)
		return;
	for (int pass = 0; pass < 2; pass++)
	{
		for (int p = 0; p < NG_NUM_PARTITIONS; p++)
		{
			NgSharedPartition *part = &ng_shared->partitions[p];

			if (pass == 1 &&
				pg_atomic_read_u32(&ng_shared->entry_count) <= (uint32) ng_max)
				break;
			if (!LWLockConditionalAcquire(part->lock,
										  pass == 0 ? LW_SHARED : LW_EXCLUSIVE))
			{
				misses++;
				continue;
			}
			evict_coldest_in_partition(part, pass == 0 ? classes : NULL, cut,
									   &at_cut, &tally);
			LWLockRelease(part->lock);
		}
		if (pass == 0)
		{
			/* the cut: the lowest class where the count reaches the excess */
			while (cut < NG_USAGE_CLASSES - 1 && below + classes[cut] < excess)
				below += classes[cut++];
			at_cut = excess - below;
		}
	}
	evict_account(&tally, misses);
}

/*
 * evict_texts_in_partition
 *		Drop texts of entries of a partition whose lock the caller holds
 *		exclusively, walking its buckets from the first and preferring
 *		entries without usage, until text memory is within cap.  The entries
 *		and their counts stay; a later parse stores the text again if there
 *		is room.  Returns the number of texts dropped.
 */
static int64
evict_texts_in_partition(NgSharedPartition *part, uint64 cap)
{
	dsa_pointer *buckets;
	int64		dropped = 0;

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	if (part->nbuckets == 0)
		return 0;
	buckets = dsa_get_address(ng_area, part->buckets);
	for (int pass = 0; pass < 2; pass++)
	{
		for (uint32 b = 0; b < part->nbuckets; b++)
		{
			for (dsa_pointer cur = buckets[b]; DsaPointerIsValid(cur);)
			{
				NgSharedEntry *entry = dsa_get_address(ng_area, cur);

				if (pg_atomic_read_u64(&ng_shared->text_bytes) <= cap)
					goto done;
				/* first pass: cold entries only */
				if (DsaPointerIsValid(entry->qtext) &&
					(pass == 1 || entry->usage <= 1))
				{
					ng_qtext_free(entry->qtext, entry->text_len);
					entry->qtext = InvalidDsaPointer;
					entry->text_len = 0;
					entry->text_dropped = true;
					dropped++;
				}
				cur = entry->next;
			}
		}
	}
done:
	if (dropped > 0)
		part->text_epoch++;
	return dropped;
}

/*
 * ng_evict_texts_to_limit
 *		Bring text memory down to query_text_memory after it was lowered, by
 *		dropping texts (not entries), one partition at a time, skipping busy
 *		partitions.  Dropped texts are counted in texts_dropped.
 */
void
ng_evict_texts_to_limit(void)
{
	uint64		cap = (uint64) ng_query_text_memory_kb * 1024;
	int64		dropped = 0;

	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		NgSharedPartition *part = &ng_shared->partitions[p];

		if (pg_atomic_read_u64(&ng_shared->text_bytes) <= cap)
			break;
		if (!LWLockConditionalAcquire(part->lock, LW_EXCLUSIVE))
		{
			ng_count_stat(&ng_shared->stats.lock_misses, 1);
			continue;
		}
		dropped += evict_texts_in_partition(part, cap);
		LWLockRelease(part->lock);
	}
	if (dropped > 0)
		ng_note_loss(NG_LOSS_TEXT_MEMORY, dropped);
}
