/*-------------------------------------------------------------------------
 *
 * store.c
 *		The shared store: main shared memory, the DSA area, and the
 *		partitioned hash table of shared entries.
 *
 * Why a file of its own: everything that creates, finds or removes a shared
 * entry is here, with the rules for doing so; the per-backend slots, the
 * eviction policy and the SQL functions build on these primitives.
 *
 * Memory.  The postmaster creates, in main shared memory, the fixed state
 * (NgSharedState), the first segment of a DSA area (created in place and
 * pinned, so it lives as long as the server), and the slot areas of every
 * backend (slots.c).  Backends attach to the DSA area lazily, on first use.
 * Entries and query texts are DSA allocations; entry memory is bounded by
 * the max setting, text memory by query_text_memory.
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
 *   by more than the entries in flight, whatever the partitions do.
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
 * Growing the DSA area.  DSA_ALLOC_NO_OOM covers only DSA's own limits:
 * when dsa.c must create a segment and dsm_create fails (a full /dev/shm,
 * too many segments), it raises ERROR while holding the area's LWLocks.
 * ng_dsa_allocate contains that error (see there), blocks further growth
 * with dsa_set_size_limit(area, 0) so that other backends fail without an
 * error, counts the refusal in dsa_failures, logs it once, and after
 * NG_DSA_RETRY_MS lets one allocation try to grow the area again.
 *
 * No ERROR is raised here while a partition lock is held except by
 * can't-happen checks; allocations in the DSA area are made outside
 * partition locks, and the callers degrade when they fail.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "alloc.h"
#include "counters.h"
#include "guc.h"
#include "persist.h"
#include "qtext.h"
#include "reset.h"
#include "setup.h"
#include "shmem.h"
#include "slots.h"
#include "store.h"

NgSharedState *ng_shared = NULL;
dsa_area   *ng_area = NULL;

#define NG_INITIAL_BUCKETS		64

static Size
store_fixed_size(void)
{
	return MAXALIGN(sizeof(NgSharedState));
}

static Size
store_total_size(void)
{
	Size		size = store_fixed_size();

	size = add_size(size, MAXALIGN(NG_DSA_INITIAL_SIZE));
	size = add_size(size, ng_slots_shmem_size());
	return size;
}

static void *
store_dsa_place(void)
{
	return (char *) ng_shared + store_fixed_size();
}

/*
 * ng_store_slot_area_base
 *		Start of the slot areas in main shared memory.
 */
char *
ng_store_slot_area_base(void)
{
	return (char *) store_dsa_place() + MAXALIGN(NG_DSA_INITIAL_SIZE);
}

/*
 * ng_store_num_slot_procs
 *		How many processes have a slot area: every process that can run
 *		queries (PGPROC numbers below MaxBackends).
 */
int
ng_store_num_slot_procs(void)
{
	return MaxBackends;
}

/*
 * ng_store_request_shmem
 *		shmem_request_hook part: reserve main shared memory and the
 *		partition locks.
 */
void
ng_store_request_shmem(void)
{
	RequestAddinShmemSpace(store_total_size());
	RequestNamedLWLockTranche(NG_NAME, NG_NUM_PARTITIONS);
}

/*
 * ng_store_init_shmem
 *		shmem_startup_hook part: create or find the shared state.  The
 *		process that creates it (the postmaster, or a standalone backend)
 *		also creates the DSA area in place and pins it.
 */
void
ng_store_init_shmem(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ng_shared = ShmemInitStruct(NG_NAME, store_total_size(), &found);
	if (!found)
	{
		LWLockPadded *locks = GetNamedLWLockTranche(NG_NAME);
		dsa_area   *area;

		memset(ng_shared, 0, store_fixed_size());
		pg_atomic_init_u32(&ng_shared->entry_count, 0);
		pg_atomic_init_u64(&ng_shared->text_bytes, 0);
		pg_atomic_init_u32(&ng_shared->clock_partition, 0);
		pg_atomic_init_u32(&ng_shared->losses_logged, 0);
		pg_atomic_init_u64(&ng_shared->change_generation, 1);
		pg_atomic_init_u64(&ng_shared->folds, 0);
		pg_atomic_init_u32(&ng_shared->dsa_capped, 0);
		pg_atomic_init_u64(&ng_shared->dsa_retry_at, 0);
		SpinLockInit(&ng_shared->mutex);
		ng_shared->stats.stats_reset = GetCurrentTimestamp();
		for (int i = 0; i < NG_NUM_PARTITIONS; i++)
		{
			NgSharedPartition *part = &ng_shared->partitions[i];

			part->lock = &locks[i].lock;
			part->buckets = InvalidDsaPointer;
		}

		ng_shared->dsa_tranche = ng_new_tranche_id_compat(NG_NAME "_dsa");
		area = dsa_create_in_place(store_dsa_place(), NG_DSA_INITIAL_SIZE,
								   ng_shared->dsa_tranche, NULL);
		dsa_pin(area);
		dsa_detach(area);

		ng_slots_init_shmem(ng_store_slot_area_base());
		ng_persist_startup();
	}
	LWLockRelease(AddinShmemInitLock);
}

static void
store_detach_callback(int code, Datum arg)
{
	if (ng_area != NULL)
	{
		dsa_detach(ng_area);
		dsa_release_in_place(store_dsa_place());
		ng_area = NULL;
	}
}

/*
 * ng_store_attach
 *		Attach this backend to the DSA area, once.  Returns false when the
 *		library was not preloaded (no shared state exists).
 */
bool
ng_store_attach(void)
{
	MemoryContext oldcxt;

	if (ng_area != NULL)
		return true;
	if (ng_shared == NULL)
		return false;

	ng_register_tranche_compat(ng_shared->dsa_tranche, NG_NAME "_dsa");
	oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	ng_area = dsa_attach_in_place(store_dsa_place(), NULL);
	dsa_pin_mapping(ng_area);
	MemoryContextSwitchTo(oldcxt);
	before_shmem_exit(store_detach_callback, (Datum) 0);
	return true;
}

/*
 * ng_key_hash
 *		Hash of a key; its low bits choose the partition, the next ones
 *		the bucket.  queryid is already a good hash; one round of mixing
 *		spreads the user, database and level over every bit.  Cheap, since
 *		the hot path computes it for every statement.
 */
uint32
ng_key_hash(const NgKey *key)
{
	uint64		h = key->queryid ^
		(((uint64) key->userid << 32) | (uint64) key->dbid);

	/* a 64-bit finalizer (xor-shift-multiply) */
	h ^= key->toplevel ? UINT64CONST(0x9e3779b97f4a7c15) : 0;
	h ^= h >> 33;
	h *= UINT64CONST(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64CONST(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return (uint32) (h ^ (h >> 32));
}

NgSharedPartition *
ng_partition(uint32 hash)
{
	return &ng_shared->partitions[ng_partition_of_hash(hash)];
}

static inline uint32
store_bucket_of(const NgSharedPartition *part, uint32 hash)
{
	return (hash / NG_NUM_PARTITIONS) & (part->nbuckets - 1);
}

static inline dsa_pointer *
store_buckets(const NgSharedPartition *part)
{
	return (dsa_pointer *) dsa_get_address(ng_area, part->buckets);
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

	cur = store_buckets(part)[store_bucket_of(part, hash)];
	while (DsaPointerIsValid(cur))
	{
		NgSharedEntry *entry = dsa_get_address(ng_area, cur);

		if (entry->hash == hash && memcmp(&entry->key, key, sizeof(NgKey)) == 0)
		{
			*dp = cur;
			return entry;
		}
		cur = entry->next;
	}
	return NULL;
}

/*
 * DSA memory.
 *
 * ng_dsa_allocate is the only way this extension allocates in the DSA area.
 * dsa_allocate_extended(DSA_ALLOC_NO_OOM) returns InvalidDsaPointer when
 * the area is at its size limit, but when it must create a segment and
 * dsm_create fails (ENOSPC from a full /dev/shm, "too many dynamic shared
 * memory segments"), dsm_impl.c and dsm.c raise ERROR, and dsa.c is then
 * holding its area LWLock, and, for a small allocation, the LWLock of the
 * size class.  Catching that error is safe here, because:
 *
 * - dsa.c changes no shared state before dsm_create returns (make_new_segment
 *   only reads the control struct before it), and dsm_impl_posix backs out
 *   what it did (closes the fd, releases the external-fd reservation,
 *   unlinks the file, restores the signal mask) before raising; for "too many
 *   segments" dsm_create destroys the new segment before raising.  What is
 *   left behind is the unfinished segment's descriptor in backend memory
 *   (freed at exit) and, for a small allocation, a span descriptor in the
 *   area (dsa.c leaks it the same way when growth fails without error).
 * - The LWLocks dsa.c holds are released with LWLockReleaseAll.  That
 *   releases every LWLock this backend holds, which is correct because the
 *   caller holds none: not ours (asserted), and none of the core's, since
 *   we run from the hooks, the maintenance and the keeper, where core holds
 *   no LWLock across calls into code that can raise an error.  It is what
 *   AbortSubTransaction does when a PL/pgSQL exception block catches an
 *   error.  LWLockRelease resumes interrupts once per lock, balanced by
 *   LWLockReleaseAll's HOLD_INTERRUPTS.
 * - dsa.c makes the area's resource owner current around dsm_create (NULL
 *   for our area, whose mapping is pinned) and restores it only on success:
 *   the caller's CurrentResourceOwner is restored here, or the next
 *   resource the backend tracks (a buffer pin, a cache reference) would
 *   find no owner.
 * - errfinish reset InterruptHoldoffCount and QueryCancelHoldoffCount to 0
 *   before it jumped here (the holdoffs of those LWLockAcquire calls and any
 *   of the caller's): both are restored to the values saved on entry.
 *   CritSectionCount is 0 (asserted: we never allocate in a critical
 *   section), and PG_TRY restored error_context_stack.
 *
 * An error cannot be caught where ERROR is promoted to FATAL (while the
 * process exits, proc_exit_inprogress) or to PANIC (in a critical section):
 * there nothing is allocated and the caller degrades as for any refusal (a
 * statement counts in an unbound slot).  While a (sub)transaction aborts
 * (failures.c records failed statements from the abort callbacks), the
 * error that caused the abort may still be on the error stack, and our
 * FlushErrorState discards it too.  In a client backend that is harmless:
 * every core path that aborts with an error pending has already reported
 * it and only flushes it afterwards (PostgresMain: EmitErrorReport, then
 * AbortCurrentTransaction, then FlushErrorState), or copied and flushed it
 * before aborting (PL/pgSQL and the other PLs' exception blocks, SPI's
 * commit and rollback).  Background workers are not so uniform (the
 * logical replication workers abort and then re-throw the pending error),
 * so in any other process nothing is allocated while a transaction aborts.
 *
 * After a failure, growth is blocked for everyone with
 * dsa_set_size_limit(area, 0) (dsa.c then refuses to create a segment, with
 * no error, but still allocates from the free space of existing segments),
 * so that backends do not each try dsm_create again.  Once NG_DSA_RETRY_MS
 * has passed, the next allocation lifts the limit and tries; one that fails
 * blocks growth again.  Every refused allocation is counted in dsa_failures.
 */
#define NG_DSA_RETRY_MS		1000

/* the message of the last dsm_create error caught, for the log */
static char dsa_error[256];

/*
 * store_holds_partition_lock
 *		Whether this backend holds any partition lock (for assertions).
 */
static bool
store_holds_partition_lock(void)
{
	for (int i = 0; i < NG_NUM_PARTITIONS; i++)
		if (LWLockHeldByMe(ng_shared->partitions[i].lock))
			return true;
	return false;
}

/*
 * store_dsa_block_growth / store_dsa_maybe_allow_growth
 *		Block the area's growth after a failure; lift the block, once the
 *		retry time has come, in exactly one backend.  Caller holds no lock
 *		of ours (dsa_set_size_limit takes the area's LWLock).
 */
static void
store_dsa_block_growth(void)
{
	pg_atomic_write_u64(&ng_shared->dsa_retry_at,
						(uint64) TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
															 NG_DSA_RETRY_MS));
	pg_atomic_write_u32(&ng_shared->dsa_capped, 1);
	dsa_set_size_limit(ng_area, 0);
}

static void
store_dsa_maybe_allow_growth(void)
{
	uint32		capped = 1;

	if (likely(pg_atomic_read_u32(&ng_shared->dsa_capped) == 0))
		return;
	if ((TimestampTz) pg_atomic_read_u64(&ng_shared->dsa_retry_at) >
		GetCurrentTimestamp())
		return;
	if (pg_atomic_compare_exchange_u32(&ng_shared->dsa_capped, &capped, 0))
		dsa_set_size_limit(ng_area, SIZE_MAX);
}

/*
 * ng_dsa_can_allocate
 *		Whether ng_dsa_allocate may try here (see above): false while the
 *		process exits, in a critical section, and, except in a client
 *		backend, while a (sub)transaction aborts.  Callers that can wait for
 *		a better moment check it first.
 */
bool
ng_dsa_can_allocate(void)
{
	if (proc_exit_inprogress || CritSectionCount > 0)
		return false;
	if (IsTransactionOrTransactionBlock() && !IsTransactionState())
		return MyBackendType == B_BACKEND;
	return true;
}

/*
 * ng_dsa_allocate
 *		Allocate in the DSA area, never raising an error: returns
 *		InvalidDsaPointer (counted in dsa_failures) when the area has no room
 *		and cannot grow.  flags as for dsa_allocate_extended; DSA_ALLOC_NO_OOM
 *		is implied.  Caller holds no partition lock (nor any other LWLock).
 */
dsa_pointer
ng_dsa_allocate(size_t size, int flags)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	uint32		holdoff = InterruptHoldoffCount;
	uint32		cancel_holdoff = QueryCancelHoldoffCount;
	volatile dsa_pointer dp = InvalidDsaPointer;
	volatile bool failed = false;

	Assert(!store_holds_partition_lock());
	if (!ng_dsa_can_allocate())
	{
		ng_note_loss(NG_LOSS_DSA, 1);
		return InvalidDsaPointer;
	}
	store_dsa_maybe_allow_growth();

	PG_TRY();
	{
		dp = dsa_allocate_extended(ng_area, size, flags | DSA_ALLOC_NO_OOM);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		/* dsa.c switched to the area's owner around dsm_create */
		CurrentResourceOwner = oldowner;
		edata = CopyErrorData();
		FlushErrorState();
		LWLockReleaseAll();
		pgstat_report_wait_end();
		InterruptHoldoffCount = holdoff;
		QueryCancelHoldoffCount = cancel_holdoff;
		strlcpy(dsa_error, edata->message ? edata->message : "", sizeof(dsa_error));
		FreeErrorData(edata);
		dp = InvalidDsaPointer;
		failed = true;
	}
	PG_END_TRY();

	if (failed)
		store_dsa_block_growth();
	if (!DsaPointerIsValid(dp))
		ng_note_loss(NG_LOSS_DSA, 1);
	return dp;
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
		dsa_pointer *oldb = store_buckets(part);

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
	part->clock_bucket = 0;
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

void
ng_entry_unreserve(void)
{
	pg_atomic_fetch_sub_u32(&ng_shared->entry_count, 1);
}

/*
 * ng_entry_insert
 *		Insert an entry for key, with the given text (which it then owns),
 *		or find the one that is already there (*found = true; the text is
 *		then not used, and the caller frees it).  Caller holds the partition
 *		lock exclusively, has reserved room with ng_entry_reserve, and has
 *		allocated the memory with ng_entry_prepare (it calls
 *		ng_entry_prepared_release after releasing the lock); the reservation
 *		is consumed only if a new entry was inserted.  Returns
 *		InvalidDsaPointer if no memory was prepared.
 */
dsa_pointer
ng_entry_insert(NgSharedPartition *part, const NgKey *key, uint32 hash,
				dsa_pointer qtext, int text_len, int encoding, bool *found)
{
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
	entry->hash = hash;
	pg_atomic_init_u32(&entry->pins, 0);
	entry->dead = false;
	entry->usage = 1;
	entry->qtext = qtext;
	entry->text_len = DsaPointerIsValid(qtext) ? text_len : 0;
	entry->text_stored_at = DsaPointerIsValid(qtext) ? GetCurrentTimestamp() : 0;
	entry->encoding = encoding;
	now = GetCurrentTimestamp();
	entry->stats_since = now;
	entry->minmax_stats_since = now;

	buckets = store_buckets(part);
	b = store_bucket_of(part, hash);
	entry->next = buckets[b];
	buckets[b] = dp;
	part->nentries++;
	return dp;
}

/*
 * ng_entry_unlink
 *		Take an entry out of its partition's hash table and the entry count.
 *		Its memory is not touched.  Caller holds the partition lock
 *		exclusively.
 */
void
ng_entry_unlink(NgSharedPartition *part, NgSharedEntry *entry, dsa_pointer dp)
{
	dsa_pointer *link;

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	link = &store_buckets(part)[store_bucket_of(part, entry->hash)];
	while (*link != dp)
	{
		NgSharedEntry *cur = dsa_get_address(ng_area, *link);

		Assert(DsaPointerIsValid(*link));
		link = &cur->next;
	}
	*link = entry->next;
	entry->next = InvalidDsaPointer;
	part->nentries--;
	pg_atomic_fetch_sub_u32(&ng_shared->entry_count, 1);
}

/*
 * ng_entry_release_memory
 *		Free an unlinked entry and its text.  Caller holds the partition
 *		lock exclusively and knows no slot is bound to the entry.
 */
void
ng_entry_release_memory(NgSharedEntry *entry, dsa_pointer dp)
{
	Assert(pg_atomic_read_u32(&entry->pins) == 0);
	if (DsaPointerIsValid(entry->qtext))
		ng_qtext_free(entry->qtext, entry->text_len);
	dsa_free(ng_area, dp);
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
		entry->text_stored_at = 0;
	}
	if (pg_atomic_read_u32(&entry->pins) == 0)
		ng_entry_release_memory(entry, dp);
	else
		entry->dead = true;
}

/*
 * ng_count_stat
 *		Add n to one of the info view's figures.
 */
void
ng_count_stat(int64 *field, int64 n)
{
	SpinLockAcquire(&ng_shared->mutex);
	*field += n;
	SpinLockRelease(&ng_shared->mutex);
}

/* losses this backend noted and has not yet logged (bit per NgLoss) */
static uint32 pending_loss_logs = 0;

/*
 * ng_note_loss
 *		Count a degradation in the info figures, and remember to log it.
 *		Safe under a partition lock: it only takes the spinlock and sets a
 *		backend-local bit; ng_log_losses does the logging later.
 */
void
ng_note_loss(NgLoss loss, int64 n)
{
	int64	   *field;

	switch (loss)
	{
		case NG_LOSS_TEXT_MEMORY:
			field = &ng_shared->stats.texts_dropped;
			break;
		case NG_LOSS_TABLE_FULL:
			field = &ng_shared->stats.entries_refused;
			break;
		case NG_LOSS_DSA:
			field = &ng_shared->stats.dsa_failures;
			break;
		default:
			field = &ng_shared->stats.counts_discarded;
			break;
	}
	ng_count_stat(field, n);
	if ((pg_atomic_read_u32(&ng_shared->losses_logged) & (1U << loss)) == 0)
		pending_loss_logs |= (1U << loss);
}

/*
 * ng_log_losses
 *		Log each kind of loss once per server (until a full reset), from
 *		whichever backend noted it first.  Caller holds no lock of ours.
 */
void
ng_log_losses(void)
{
	static const char *const messages[NG_NUM_LOSSES] = {
		"pg_stat_statements_ng: query text memory is full; new statements are tracked without text",
		"pg_stat_statements_ng: the statement table is full and nothing can be evicted now; new statements are counted in backend slots until there is room",
		"pg_stat_statements_ng: counts of statements that could get no entry were discarded",
		"pg_stat_statements_ng: its shared memory area could not grow; statements that need new memory are counted without entry or text until it can",
	};
	static const char *const hints[NG_NUM_LOSSES] = {
		"Raise pg_stat_statements_ng.query_text_memory.",
		"Raise pg_stat_statements_ng.max.",
		"Raise pg_stat_statements_ng.max or pg_stat_statements_ng.slots_per_backend.",
		"Make room for dynamic shared memory (the size of /dev/shm, or dynamic_shared_memory_type and max_connections).",
	};

	if (likely(pending_loss_logs == 0))
		return;
	for (int loss = 0; loss < NG_NUM_LOSSES; loss++)
	{
		uint32		bit = 1U << loss;

		if ((pending_loss_logs & bit) == 0)
			continue;
		if ((pg_atomic_fetch_or_u32(&ng_shared->losses_logged, bit) & bit) != 0)
			continue;
		if (loss == NG_LOSS_DSA && dsa_error[0] != '\0')
			ereport(LOG,
					(errmsg("%s", messages[loss]),
					 errdetail("The last error was: %s.  This is logged once; pg_stat_statements_ng_info counts every occurrence.",
							   dsa_error),
					 errhint("%s", hints[loss])));
		else
			ereport(LOG,
					(errmsg("%s", messages[loss]),
					 errdetail("This is logged once; pg_stat_statements_ng_info counts every occurrence."),
					 errhint("%s", hints[loss])));
	}
	pending_loss_logs = 0;
}

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
	int			nprocs = ng_store_num_slot_procs();
	NgSlot		copy;

	for (int proc = 0; proc < nprocs; proc++)
	{
		NgBackendSlots *area = ng_slots_of_proc(proc);

		for (int i = 0; i < ng_slots_per_backend; i++)
		{
			if (area->partition_of[i] != p)
				continue;
			if (!ng_slot_try_read(ng_slot_at(area, i), &copy))
				memcpy(&copy, ng_slot_at(area, i), sizeof(NgSlot));
			if (copy.in_use && copy.partition == p &&
				!DsaPointerIsValid(copy.entry) &&
				reset_matches(&copy.key, userid, dbid, queryid))
				return true;
		}
	}
	return false;
}

/*
 * reset_partition
 *		Apply a reset to one partition.  Caller holds its lock exclusively.
 *		A full reset voids every unbound slot of the partition; a partial one
 *		only if one of them counts for a key it matches (then all of them).
 */
static void
reset_partition(NgSharedPartition *part, Oid userid, Oid dbid, uint64 queryid,
				bool minmax_only, TimestampTz now)
{
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

	buckets = store_buckets(part);
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
					entry->minmax_generation++;
					entry->minmax_stats_since = now;
				}
				else
				{
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

/*
 * ng_store_reset
 *		pg_stat_statements_reset semantics: remove the entries matching the
 *		filter (0 matches anything), or with minmax_only reset their min and
 *		max.  With no filter and not minmax_only, everything is removed and
 *		the info figures start afresh.  Returns the reset time.
 *
 * Only the full reset holds every partition at once, so that no reader or
 * backend sees a half-reset table.  Counts that backends hold in slots bound
 * to removed entries are void (the entries are dead); counts in unbound
 * slots are void through the partition generation, which a partial reset
 * moves only when it matches one of them (reset_partition).
 */
TimestampTz
ng_store_reset(Oid userid, Oid dbid, uint64 queryid, bool minmax_only)
{
	TimestampTz now = GetCurrentTimestamp();
	bool		full = (userid == InvalidOid && dbid == InvalidOid &&
						queryid == 0 && !minmax_only);

	if (full)
	{
		for (int i = 0; i < NG_NUM_PARTITIONS; i++)
			LWLockAcquire(ng_shared->partitions[i].lock, LW_EXCLUSIVE);
		for (int i = 0; i < NG_NUM_PARTITIONS; i++)
			reset_partition(&ng_shared->partitions[i], userid, dbid, queryid,
							false, now);
		SpinLockAcquire(&ng_shared->mutex);
		memset(&ng_shared->stats, 0, sizeof(NgSharedStats));
		ng_shared->stats.stats_reset = now;
		SpinLockRelease(&ng_shared->mutex);
		pg_atomic_write_u32(&ng_shared->losses_logged, 0);
		for (int i = NG_NUM_PARTITIONS - 1; i >= 0; i--)
			LWLockRelease(ng_shared->partitions[i].lock);
	}
	else
	{
		for (int i = 0; i < NG_NUM_PARTITIONS; i++)
		{
			NgSharedPartition *part = &ng_shared->partitions[i];

			LWLockAcquire(part->lock, LW_EXCLUSIVE);
			reset_partition(part, userid, dbid, queryid, minmax_only, now);
			LWLockRelease(part->lock);
		}
	}
	return now;
}
