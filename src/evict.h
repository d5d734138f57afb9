/*-------------------------------------------------------------------------
 *
 * evict.h
 *		Eviction (evict.c): the clock sweep over entries, and over texts;
 *		and the state it keeps, which no other file reads or writes but
 *		through the functions below.
 *
 * Owns:
 *   - each entry's usage (NgSharedEntry, entry.h): earned by folds and
 *     the restore, halved by the sweep, 1 for a new entry; its part of
 *     the dump is the usage (ng_evict_usage_for_dump, ng_evict_usage_valid,
 *     ng_evict_usage_restore, ng_evict_usage_from_contrib);
 *   - the clock hands: clock_partition (NgSharedState, atomic) over the
 *     partitions, and each partition's clock_bucket and clock_nbuckets
 *     (NgSharedPartition, its lock, exclusive) over its buckets;
 *   - the admission filter's state (slots/admit.h has its policy): the cells
 *     admit_seen (atomic loads and stores, no lock) and the flag
 *     admit_after_eviction (atomic: set by the first eviction on a full
 *     table, cleared by a full reset).
 *
 * Promises: never waits for a partition lock (tries them conditionally),
 * never evicts an entry a slot is bound to (pins > 0).
 *
 * Locks, per function:
 *   ng_evict_make_room, ng_evict_to_limit, ng_evict_texts_to_limit,
 *     ng_evict_count_removed: caller holds no partition lock.
 *   ng_evict_earn_usage, ng_evict_usage_init, ng_evict_usage_restore: the
 *     entry's partition lock, exclusive.
 *   ng_evict_usage_for_dump: the entry's partition lock, any mode.
 *   ng_evict_usage_valid, ng_evict_usage_from_contrib: none (values).
 *   ng_evict_made_room, ng_evict_admit_cell: none (atomics); callers may
 *     hold any lock of ours.
 *   ng_evict_init_shmem: the postmaster, creating the shared state.
 *   ng_evict_forget_room: a full reset, holding every partition lock.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_EVICT_H
#define NG_EVICT_H

#include "entry.h"
#include "guc.h"
#include "shmem.h"

#pragma GCC visibility push(hidden)

/* Largest usage an entry can earn; halved by each pass of the clock */
#define NG_USAGE_MAX			(1U << 30)

/*
 * ng_evict_batch
 *		How many entries one eviction frees on a full table: 1% of max, at
 *		least one.  The admission filter (slots/admit.h) keeps that room for
 *		statements that recur.
 */
static inline uint32
ng_evict_batch(void)
{
	return Max((uint32) ng_max / 100, 1);
}

/* a new entry's usage (it ran, or is about to) */
static inline void
ng_evict_usage_init(NgSharedEntry *entry)
{
	entry->usage = 1;
}

/* entry's usage, as a reader copies it for the dump */
static inline uint32
ng_evict_usage_for_dump(const NgSharedEntry *entry)
{
	return entry->usage;
}

/* is a usage read from a dump one an entry can have? */
static inline bool
ng_evict_usage_valid(uint32 usage)
{
	return usage <= NG_USAGE_MAX;
}

/* a restored entry's usage, from the dump (checked valid) */
static inline void
ng_evict_usage_restore(NgSharedEntry *entry, uint32 usage)
{
	entry->usage = usage;
}

/* the usage of a statement read from contrib's file (a double there) */
static inline uint32
ng_evict_usage_from_contrib(double usage)
{
	return (uint32) Max(1.0, Min(usage, (double) NG_USAGE_MAX));
}

/*
 * ng_evict_made_room
 *		Has an eviction made room since the table was last empty (a full
 *		reset)?  Then the admission filter works a batch below max.
 */
static inline bool
ng_evict_made_room(void)
{
	return pg_atomic_read_u32(&ng_shared->admit_after_eviction) != 0;
}

/* the admission filter's cell of a key's 64-bit mix (ng_key_mix64) */
static inline pg_atomic_uint32 *
ng_evict_admit_cell(uint64 h)
{
	return &ng_shared->admit_seen[h & (NG_ADMIT_CELLS - 1)];
}

extern bool ng_evict_make_room(void);
extern void ng_evict_to_limit(void);
extern void ng_evict_count_removed(int64 calls, double exec_time);
extern void ng_evict_texts_to_limit(void);
extern void ng_evict_earn_usage(NgSharedEntry *entry, int64 calls);
extern void ng_evict_init_shmem(void);
extern void ng_evict_forget_room(void);

#pragma GCC visibility pop

#endif							/* NG_EVICT_H */
