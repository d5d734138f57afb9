/*-------------------------------------------------------------------------
 *
 * store.c
 *		The partitioned hash table of shared entries, in the DSA area.
 *
 * Why a file of its own: everything that creates, finds or removes a shared
 * entry is here, with the rules for doing so; the per-backend slots, the
 * eviction policy, resets and the SQL functions build on these primitives.
 * The shared state itself is in shmem.c, DSA allocation in alloc.c, resets
 * in reset.c.
 *
 * Locking protocol.
 *
 * - The table has NG_NUM_PARTITIONS partitions, chosen by the key's hash.
 *   Each has an LWLock guarding its bucket array, its chains and the
 *   mutable fields of its entries (counters, qtext, usage, timestamps).
 * - Shared mode: look up an entry, copy it (readers), pin it (bind a slot).
 * - Exclusive mode: insert, unlink, fold slot counts into an entry, change
 *   its qtext, usage or min/max generation.
 * - At most one partition lock is held at a time, except by a full reset,
 *   which takes all of them in index order.  Code that holds one partition
 *   lock and wants another (eviction looking for room) only ever tries
 *   LWLockConditionalAcquire, so no lock order is needed beyond that.
 * - An entry's pins count the backend slots bound to it.  Pins change only
 *   under the partition lock (shared mode suffices, hence the atomic), and
 *   eviction and reset inspect them under the exclusive lock, when they
 *   cannot change.  Eviction skips pinned entries.  A reset unlinks a pinned
 *   entry and marks it dead; the backend that drops the last pin frees it.
 * - entry_count is an atomic "reservation" counter: a backend reserves room
 *   before it inserts (ng_entry_reserve), so the table never exceeds max
 *   by more than the entries in flight, whatever the partitions do; but
 *   for the restore of a dump (ng_entry_reserve_past_max), which the keeper
 *   follows with an eviction down to max, and a lowered max, likewise.
 * - The info figures (NgSharedStats) are under the spinlock mutex, held
 *   only to add to them or copy them.
 *
 * - Every DSA allocation goes through ng_dsa_allocate, called with no
 *   partition lock held: new entries and bucket arrays are allocated before
 *   the exclusive lock is taken (ng_entry_prepare) and freed after it is
 *   released if they were not used.  dsa_free, and dsa_get_address mapping
 *   a segment for the first time, may still run under a partition lock:
 *   both take DSA's own LWLocks (short sections inside dsa.c, blocking).
 *
 * Growing the DSA area, and what happens when it cannot grow: alloc.c.
 *
 * No ERROR is raised here while a partition lock is held except by
 * can't-happen checks; allocations in the DSA area are made outside
 * partition locks, and the callers degrade when they fail.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "alloc.h"
#include "entry_errors.h"
#include "entry_hist.h"
#include "guc.h"
#include "plans.h"
#include "qtext.h"
#include "shmem.h"
#include "store.h"

#define NG_INITIAL_BUCKETS		64

/*
 * ng_key_hash
 *		Hash of a key: ng_key_mix64 folded to 32 bits; its low bits choose
 *		the partition, the next ones the bucket.  Cheap, since the hot path
 *		computes it for every statement.
 */
uint32
ng_key_hash(const NgKey *key)
{
	uint64		h = ng_key_mix64(key);

	return (uint32) (h ^ (h >> 32));
}

/*
 * ng_key_htab_hash, ng_key_htab_match
 *		An HTAB's hash and match for entries keyed by an NgKey first: field
 *		by field, never as bytes (NgKey has padding).  No lock.
 */
uint32
ng_key_htab_hash(const void *key, Size keysize)
{
	return ng_key_hash((const NgKey *) key);
}

int
ng_key_htab_match(const void *key1, const void *key2, Size keysize)
{
	return ng_key_equal((const NgKey *) key1, (const NgKey *) key2) ? 0 : 1;
}

/*
 * ng_entry_lookup
 *		Find the live entry of key in its partition.  Caller holds the
 *		partition lock in any mode.  Returns NULL if there is none; else the
 *		entry, with its DSA pointer in *dp.
 */
NgSharedEntry *
ng_entry_lookup(NgSharedPartition *part, const NgKey *key, uint32 hash,
				dsa_pointer *dp)
{
	dsa_pointer cur;

	Assert(LWLockHeldByMe(part->lock));
	if (part->nbuckets == 0)
		return NULL;

	cur = ng_store_buckets(part)[ng_store_bucket_of(part, hash)];
	while (DsaPointerIsValid(cur))
	{
		NgSharedEntry *entry = dsa_get_address(ng_area, cur);

		if (entry->hash == hash && ng_key_equal(&entry->key, key))
		{
			*dp = cur;
			return entry;
		}
		cur = entry->next;
	}
	return NULL;
}

/*
 * Memory for one insert, allocated before the partition lock is taken
 * (ng_entry_prepare), consumed under it by ng_entry_insert, and what was
 * not consumed, or was replaced, freed after it is released
 * (ng_entry_prepared_release).  Backend-local.
 */
static dsa_pointer prepared_entry = InvalidDsaPointer;
static dsa_pointer prepared_buckets = InvalidDsaPointer;
static uint32 prepared_nbuckets = 0;
static dsa_pointer retired_buckets = InvalidDsaPointer;

/*
 * ng_entry_prepare
 *		Allocate what inserting one entry into part may need: the entry, and
 *		the doubled bucket array if the partition looks due to grow (read
 *		without the lock: a hint; ng_entry_insert checks under the lock).
 *		Returns false if there is no memory for the entry.  Caller holds no
 *		partition lock, and calls ng_entry_prepared_release after its insert
 *		(or instead of it), once it holds none again.
 */
bool
ng_entry_prepare(NgSharedPartition *part)
{
	uint32		nbuckets = part->nbuckets;
	uint32		nentries = part->nentries;

	if (!DsaPointerIsValid(prepared_entry))
		prepared_entry = ng_dsa_allocate(sizeof(NgSharedEntry), 0);
	if (DsaPointerIsValid(prepared_entry) && nentries >= nbuckets)
	{
		uint32		want = nbuckets == 0 ? NG_INITIAL_BUCKETS : nbuckets * 2;

		prepared_buckets = ng_dsa_allocate(sizeof(dsa_pointer) * want,
										   DSA_ALLOC_HUGE);
		prepared_nbuckets = DsaPointerIsValid(prepared_buckets) ? want : 0;
	}
	return DsaPointerIsValid(prepared_entry);
}

/*
 * ng_entry_prepared_release
 *		Free what ng_entry_prepare allocated and ng_entry_insert did not use,
 *		and a bucket array that an insert replaced.  Caller holds no
 *		partition lock.
 */
void
ng_entry_prepared_release(void)
{
	if (DsaPointerIsValid(prepared_entry))
		dsa_free(ng_area, prepared_entry);
	if (DsaPointerIsValid(prepared_buckets))
		dsa_free(ng_area, prepared_buckets);
	if (DsaPointerIsValid(retired_buckets))
		dsa_free(ng_area, retired_buckets);
	prepared_entry = InvalidDsaPointer;
	prepared_buckets = InvalidDsaPointer;
	prepared_nbuckets = 0;
	retired_buckets = InvalidDsaPointer;
}

/*
 * store_grow_buckets
 *		Double the bucket array of a partition (or create it), with the array
 *		ng_entry_prepare allocated.  Caller holds the partition lock
 *		exclusively.  Without a prepared array of the right size the array
 *		stays as it is: chains get longer, nothing fails.  The old array is
 *		freed by ng_entry_prepared_release, after the lock is released.
 */
static void
store_grow_buckets(NgSharedPartition *part)
{
	uint32		newsize = part->nbuckets == 0 ? NG_INITIAL_BUCKETS : part->nbuckets * 2;
	dsa_pointer newdp;
	dsa_pointer *newb;

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	if (!DsaPointerIsValid(prepared_buckets) || prepared_nbuckets != newsize ||
		DsaPointerIsValid(retired_buckets))
		return;
	newdp = prepared_buckets;
	prepared_buckets = InvalidDsaPointer;
	prepared_nbuckets = 0;
	newb = dsa_get_address(ng_area, newdp);
	for (uint32 i = 0; i < newsize; i++)
		newb[i] = InvalidDsaPointer;

	if (part->nbuckets > 0)
	{
		dsa_pointer *oldb = ng_store_buckets(part);

		for (uint32 i = 0; i < part->nbuckets; i++)
		{
			dsa_pointer cur = oldb[i];

			while (DsaPointerIsValid(cur))
			{
				NgSharedEntry *entry = dsa_get_address(ng_area, cur);
				dsa_pointer next = entry->next;
				uint32		b = (entry->hash / NG_NUM_PARTITIONS) & (newsize - 1);

				entry->next = newb[b];
				newb[b] = cur;
				cur = next;
			}
		}
		retired_buckets = part->buckets;
	}
	part->buckets = newdp;
	part->nbuckets = newsize;
}

/*
 * ng_entry_reserve
 *		Reserve room for one more entry in the table.  Returns false if the
 *		table already holds max entries.  A successful reservation is either
 *		consumed by ng_entry_insert or returned with ng_entry_unreserve.
 */
bool
ng_entry_reserve(void)
{
	uint32		cur = pg_atomic_read_u32(&ng_shared->entry_count);

	while (cur < (uint32) ng_max)
	{
		if (pg_atomic_compare_exchange_u32(&ng_shared->entry_count, &cur, cur + 1))
			return true;
	}
	return false;
}

/*
 * ng_entry_reserve_past_max
 *		Reserve room for one more entry even if the table holds max: for the
 *		restore of a dump, whose entries are all put back and then brought
 *		down to max by eviction (by usage, counted as evictions are), rather
 *		than kept or refused by their order in the file.
 */
void
ng_entry_reserve_past_max(void)
{
	pg_atomic_fetch_add_u32(&ng_shared->entry_count, 1);
}

void
ng_entry_unreserve(void)
{
	pg_atomic_fetch_sub_u32(&ng_shared->entry_count, 1);
}

/*
 * ng_entry_insert
 *		Insert an entry for ins->key (NgEntryInsert), with the text ins
 *		gives (which it then owns), or find the one that is already there
 *		(*found = true; the text is then not used, and the caller frees
 *		it).  Caller holds the partition lock exclusively, has reserved room
 *		with ng_entry_reserve, and has allocated the memory with
 *		ng_entry_prepare (it calls ng_entry_prepared_release after releasing
 *		the lock); the reservation is consumed only if a new entry was
 *		inserted.  Returns InvalidDsaPointer if no memory was prepared.
 */
dsa_pointer
ng_entry_insert(NgSharedPartition *part, const NgEntryInsert *ins, bool *found)
{
	const NgKey *key = ins->key;
	uint32		hash = ins->hash;
	dsa_pointer qtext = ins->qtext;
	NgSharedEntry *entry;
	dsa_pointer dp;
	dsa_pointer *buckets;
	uint32		b;
	TimestampTz now;

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	entry = ng_entry_lookup(part, key, hash, &dp);
	if (entry != NULL)
	{
		*found = true;
		return dp;
	}
	*found = false;

	if (!DsaPointerIsValid(prepared_entry))
		return InvalidDsaPointer;
	if (part->nentries >= part->nbuckets)
		store_grow_buckets(part);
	if (part->nbuckets == 0)
		return InvalidDsaPointer;

	dp = prepared_entry;
	prepared_entry = InvalidDsaPointer;
	entry = dsa_get_address(ng_area, dp);
	memset(entry, 0, sizeof(NgSharedEntry));
	entry->key = *key;
	ng_key_poison_padding(&entry->key);
	entry->hash = hash;
	pg_atomic_init_u32(&entry->pins, 0);
	entry->dead = false;
	entry->qtext = qtext;
	entry->text_len = DsaPointerIsValid(qtext) ? ins->text_len : 0;
	if (DsaPointerIsValid(qtext))
		ng_qtext_set_stored_at(qtext, ng_qtext_stamp());
	entry->encoding = ins->encoding;
	now = GetCurrentTimestamp();
	entry->stats_since = now;
	entry->minmax_stats_since = now;

	buckets = ng_store_buckets(part);
	b = ng_store_bucket_of(part, hash);
	entry->next = buckets[b];
	buckets[b] = dp;
	part->nentries++;
	return dp;
}

/*
 * ng_entry_unlink
 *		Take an entry out of its partition's hash table and the entry count,
 *		and free its failures by SQLSTATE (they leave with it).  Its own
 *		memory is not touched.  Caller holds the partition lock
 *		exclusively.
 */
void
ng_entry_unlink(NgSharedPartition *part, NgSharedEntry *entry, dsa_pointer dp)
{
	dsa_pointer *link;

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	link = &ng_store_buckets(part)[ng_store_bucket_of(part, entry->hash)];
	while (*link != dp)
	{
		NgSharedEntry *cur = dsa_get_address(ng_area, *link);

		Assert(DsaPointerIsValid(*link));
		link = &cur->next;
	}
	*link = entry->next;
	entry->next = InvalidDsaPointer;
	ng_entry_errors_free(part, entry, dp);
	part->nentries--;
	pg_atomic_fetch_sub_u32(&ng_shared->entry_count, 1);
}

/*
 * ng_entry_release_memory
 *		Free an unlinked entry, its text, its histograms and its plans.  Caller holds the partition
 *		lock exclusively, or owns the unlinked entry (the keeper, which takes
 *		evicted entries from the history's lists), and knows no slot is
 *		bound to the entry.
 */
void
ng_entry_release_memory(NgSharedEntry *entry, dsa_pointer dp)
{
	Assert(pg_atomic_read_u32(&entry->pins) == 0);
	if (DsaPointerIsValid(entry->qtext))
		ng_qtext_free(entry->qtext, entry->text_len);
	ng_entry_hist_free(entry);
	ng_plans_free(entry);
	dsa_free(ng_area, dp);
}

/*
 * ng_entry_recycle_memory
 *		As ng_entry_release_memory, for an entry evicted to make room for an
 *		insert of this backend: its text and histogram groups are freed, and
 *		its own memory (every entry has the same size) is
 *		kept as the prepared entry, if there is none yet, instead of being
 *		freed and allocated again; ng_entry_prepare then finds it, and
 *		ng_entry_prepared_release frees it if the insert does not use it.
 */
void
ng_entry_recycle_memory(NgSharedEntry *entry, dsa_pointer dp)
{
	if (DsaPointerIsValid(prepared_entry))
	{
		ng_entry_release_memory(entry, dp);
		return;
	}
	Assert(pg_atomic_read_u32(&entry->pins) == 0);
	if (DsaPointerIsValid(entry->qtext))
		ng_qtext_free(entry->qtext, entry->text_len);
	ng_entry_hist_free(entry);
	ng_plans_free(entry);
	prepared_entry = dp;
}

/*
 * ng_entry_drop
 *		Remove an entry, as a reset does: unlink it, free its qtext, and free
 *		it unless slots are bound to it, in which case it is marked dead and
 *		the last of them frees it.  Caller holds the partition lock
 *		exclusively.
 */
void
ng_entry_drop(NgSharedPartition *part, NgSharedEntry *entry, dsa_pointer dp)
{
	ng_entry_unlink(part, entry, dp);
	if (DsaPointerIsValid(entry->qtext))
	{
		ng_qtext_free(entry->qtext, entry->text_len);
		entry->qtext = InvalidDsaPointer;
		entry->text_len = 0;
	}
	if (pg_atomic_read_u32(&entry->pins) == 0)
		ng_entry_release_memory(entry, dp);
	else
	{
		entry->dead = true;
		/* bound slots' owners look at dead when the epoch moves */
		pg_write_barrier();
		part->reset_epoch++;
	}
}
