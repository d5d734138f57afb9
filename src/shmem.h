/*-------------------------------------------------------------------------
 *
 * shmem.h
 *		The shared state (shmem.c): the fixed part in main shared memory,
 *		its partition headers and info figures, and each process's
 *		attachment to the DSA area.
 *
 * Owns: NgSharedState and what it holds; ng_shared (set in every process
 * by the shmem_startup hook, setup.c) and ng_area (this process's
 * attachment, made once by ng_store_attach).  The layout of main shared
 * memory: the fixed part, the DSA area's first segment, the slot areas.
 *
 * Locks: each field below names what protects it.  A partition's fields
 * are under its LWLock (partitions[i].lock); the info figures under the
 * spinlock mutex, held only to add to them or copy them (ng_count_stat,
 * alloc.h); the atomics need no lock.  Nothing declared here takes a lock.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_SHMEM_H
#define NG_SHMEM_H

#include "datatype/timestamp.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/dsa.h"

#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

/* Partitions of the shared table: a power of two */
#define NG_NUM_PARTITIONS		32

/* partition p's bit in a mask of partitions (slots.h: at most 32 of them) */
#define NG_PARTITION_BIT(p)		((uint32) 1 << (p))

/*
 * Cells of the admission filter (slots/admit.h): a power of two.  4 bytes
 * each, 64 kB in all, a whole number of cache lines.
 */
#define NG_ADMIT_CELLS			16384

/* Bytes of main shared memory given to the DSA area's first segment */
#define NG_DSA_INITIAL_SIZE		(1024 * 1024)

/*
 * One partition of the shared table: two cache lines.  The first holds what
 * tracked statements read unlocked at parse and execution, written only by
 * resets; the second what inserts and eviction write, so that they do not
 * invalidate the first in the caches of backends that run other statements.
 */
typedef struct NgSharedPartition
{
	/* ---- read-mostly: read without lock on the hot path ---- */
	LWLock	   *lock;			/* set at startup */

	/*
	 * Bumped (exclusive lock) by a full reset, and by a partial reset that
	 * matches the key of an unbound slot of this partition; read unlocked by
	 * backends.  Counts of slots not bound to an entry are void once this
	 * differs from what the slot saw.
	 */
	uint32		generation;

	/*
	 * Bumped (exclusive lock) whenever texts may have been removed from
	 * entries of this partition (resets that remove entries, text memory
	 * shrinking); read unlocked by backends, which then look again before
	 * trusting that an entry has its text.
	 */
	uint32		text_epoch;

	/*
	 * Bumped (exclusive lock), after a write barrier, whenever a reset marks
	 * an entry of this partition dead or moves its min/max generation; read
	 * unlocked by backends, which look at their bound entry's dead flag and
	 * min/max generation only when this moved since they last looked: the
	 * tracked path reads no entry.
	 */
	uint32		reset_epoch;
	char		pad_read[PG_CACHE_LINE_SIZE - sizeof(LWLock *) - 3 * sizeof(uint32)];

	/* ---- written by inserts and eviction, under the lock ---- */
	dsa_pointer buckets;		/* lock: array of nbuckets dsa_pointer */
	uint32		nbuckets;		/* lock: a power of two, or 0 */
	uint32		nentries;		/* lock: live entries */
	uint32		clock_bucket;	/* lock (exclusive): eviction's hand (evict.h) */
	uint32		history_pending;	/* lock (exclusive): see below */

	/*
	 * What left the table during the history's open window (history.h):
	 * evicted entries chained by next, and reset statements' totals
	 * (NgHistoryDeparted).  Linked under the lock, exclusive; taken by the
	 * keeper under the lock in any mode (no one else takes them).
	 * history_pending: resets that took totals out of this partition and have
	 * not linked them yet (lock, exclusive).
	 */
	dsa_pointer history_evicted;
	dsa_pointer history_departed;
	/* lock: the entries' blocks of failures by SQLSTATE (entry_errors.h) */
	dsa_pointer errors;
	uint32		clock_nbuckets; /* lock (exclusive): the nbuckets of
								 * clock_bucket (evict.h) */
	char		pad_write[PG_CACHE_LINE_SIZE - 4 * sizeof(dsa_pointer) - 5 * sizeof(uint32)];
} NgSharedPartition;

StaticAssertDecl(sizeof(NgSharedPartition) == 2 * PG_CACHE_LINE_SIZE,
				 "NgSharedPartition is two cache lines");

/*
 * Figures of the info view, under NgSharedState.mutex.  evicted_calls,
 * evicted_exec_time, unadmitted_calls, counts_discarded and
 * admissions_refused have a part in
 * every process's slot area too (NgRefusedCounts): read them with
 * ng_stats_read (slots.h).
 */
typedef struct NgSharedStats
{
	int64		dealloc;		/* entries evicted */
	int64		evicted_calls;	/* calls those entries had */
	double		evicted_exec_time;	/* their total_exec_time */
	TimestampTz last_eviction_time;
	int64		texts_dropped;	/* entries kept without text: memory full
								 * (once each: NgSharedEntry.text_dropped) */
	int64		entries_refused;	/* entries not created: table full */
	int64		counts_discarded;	/* executions lost (see design.md) */
	int64		unadmitted_calls;	/* calls of statements that got no entry */
	int64		lock_misses;	/* conditional lock attempts that failed */
	int64		dsa_failures;	/* DSA allocations refused: the area could not
								 * grow (alloc.c, ng_dsa_allocate) */
	int64		admissions_refused; /* new statements' executions the
									 * admission filter gave no entry */
	TimestampTz stats_reset;
} NgSharedStats;

/*
 * The fixed part in main shared memory, cache-line aligned (ShmemInitStruct).
 * Layout: the partitions first (each two cache lines, see
 * above), then change_generation on a line of its own (read by every tracked
 * execution, written only by changed_since calls), then the admission
 * filter's cells (written only for new statements on a full table), then
 * the fields that inserts, evictions, folds and text storage write.
 */
typedef struct NgSharedState
{
	NgSharedPartition partitions[NG_NUM_PARTITIONS];
	pg_atomic_uint64 change_generation; /* advanced by each changed_since */

	/*
	 * Bumped by a full reset, under mutex; read without lock by a backend
	 * counting a refused execution in its own area (slots.h,
	 * NgRefusedCounts), whose counts of an older generation are void.
	 */
	uint32		stats_generation;
	char		pad_change_generation[PG_CACHE_LINE_SIZE - sizeof(pg_atomic_uint64) - sizeof(uint32)];

	/*
	 * The admission filter (slots/admit.h; evict.h owns the state):
	 * fingerprints of keys refused an entry while the table was full, one per
	 * cell, 0 = empty.  Read and overwritten with plain (atomic, 32-bit)
	 * loads and stores, by any backend, without lock: two stores to one cell
	 * at once only make the filter forget one of the keys.  Only the
	 * new-statement path touches it, on cache lines of its own.
	 */
	pg_atomic_uint32 admit_seen[NG_ADMIT_CELLS];

	int			dsa_tranche;	/* set by postmaster */
	pg_atomic_uint32 entry_count;	/* live entries in all partitions */
	pg_atomic_uint32 admit_after_eviction;	/* evict.h: 1 once an eviction
											 * made room (0 after a full
											 * reset): the admission filter
											 * works a batch below max from
											 * then */
	pg_atomic_uint64 text_bytes;	/* DSA bytes held by texts */
	pg_atomic_uint64 text_stamp;	/* the last text_stored_at given (qtext.c,
									 * ng_qtext_stamp) */
	pg_atomic_uint32 clock_partition;	/* evict.h: the hand over partitions */
	pg_atomic_uint32 losses_logged; /* NgLoss bits already logged */
	pg_atomic_uint64 hist_bytes;	/* DSA bytes held by entries' histogram
									 * groups (entry_hist.c) */
	pg_atomic_uint64 folds;		/* slot folds, for the info view */
	pg_atomic_uint32 dsa_capped;	/* 1: growth of the DSA area is blocked
									 * (size limit 0) after a failure */
	pg_atomic_uint64 dsa_retry_at;	/* when capped: TimestampTz after which
									 * one backend lifts the cap and retries */
	bool		restore_pending;	/* set by postmaster, cleared by keeper */
	/* the keeper's presence (keeper_start.c) */
	pg_atomic_uint32 keeper_missing;	/* 1: none registered; backends retry */
	pg_atomic_uint32 keeper_ran;	/* 1: a keeper dealt with the saved file */
	pg_atomic_uint64 keeper_retry_at;	/* TimestampTz: next retry, at most */
	pg_atomic_uint64 keeper_start_failures; /* absences, for the info view */
	pg_atomic_uint64 sqlstates_lost;	/* failures whose SQLSTATE was not
										 * kept (entry_errors.c) */
	/* plan statistics (plans.c), for the info view */
	pg_atomic_uint64 plan_text_bytes;	/* DSA bytes held by plan texts */
	pg_atomic_uint64 plan_texts_dropped;	/* plan texts not kept */
	pg_atomic_uint64 plan_calls_lost;	/* calls no plan record took */
	slock_t		mutex;			/* protects stats */
	NgSharedStats stats;
	/* the DSA area's first segment follows, then the slot areas */
} NgSharedState;

StaticAssertDecl(offsetof(NgSharedState, change_generation) % PG_CACHE_LINE_SIZE == 0 &&
				 offsetof(NgSharedState, admit_seen) % PG_CACHE_LINE_SIZE == 0 &&
				 offsetof(NgSharedState, dsa_tranche) % PG_CACHE_LINE_SIZE == 0,
				 "change_generation has a cache line of its own");

extern NgSharedState *ng_shared;
extern dsa_area *ng_area;

/*
 * ng_store_attach: attach this process to the DSA area, once; false when
 * the library was not preloaded.  The others: where the parts of main
 * shared memory lie (no lock: the layout is fixed at startup).
 */
extern bool ng_store_attach(void);
extern int	ng_store_num_slot_procs(void);
extern char *ng_store_slot_area_base(void);
extern Size ng_shmem_fixed_size(void);
extern void *ng_shmem_dsa_place(void);

/* the partition of a key's hash (store.h's ng_key_hash) */
#define ng_partition_of_hash(h)	((h) & (NG_NUM_PARTITIONS - 1))
static inline NgSharedPartition *
ng_partition(uint32 hash)
{
	return &ng_shared->partitions[ng_partition_of_hash(hash)];
}

#pragma GCC visibility pop

#endif							/* NG_SHMEM_H */
