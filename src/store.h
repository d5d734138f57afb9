/*-------------------------------------------------------------------------
 *
 * store.h
 *		The partitioned hash table of shared entries (store.c), for the
 *		modules that find, create or remove entries: store, evict, slots,
 *		reader, persist, reset.
 *
 * Owns: NgSharedEntry, the bucket arrays and chains, entry_count.
 * Promises: at most one partition lock is held at a time, except by a full
 * reset (all of them, in index order); every DSA allocation is made with no
 * partition lock held (ng_entry_prepare allocates before the lock).
 *
 * Locks, per function:
 *   ng_key_hash, ng_partition, ng_entry_reserve/_past_max/unreserve: none
 *     needed.
 *   ng_entry_lookup: the partition lock, any mode.
 *   ng_entry_prepare, ng_entry_prepared_release: no partition lock.
 *   ng_entry_insert, ng_entry_unlink, ng_entry_drop: the partition lock,
 *     exclusive.
 *   ng_entry_release_memory, ng_entry_recycle_memory: an unlinked entry no
 *     slot is bound to (pins 0); the partition lock, exclusive.
 *   ng_store_buckets, ng_store_bucket_of: the partition lock, any mode.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_STORE_H
#define NG_STORE_H

#include "counters.h"
#include "hist.h"
#include "shmem.h"

#pragma GCC visibility push(hidden)

/* Largest usage an entry can earn; halved by each pass of the clock */
#define NG_USAGE_MAX			(1U << 30)

/*
 * A shared entry, allocated in the DSA area and chained in its partition's
 * hash table.
 *
 * Layout.  A statement counted straight into its entry (slots_count.c, a
 * statement its backend runs less often than its slots turn over) is a
 * cache miss on each line of the entry it touches, so what a lookup and a
 * plain sample touch comes first and together: the head (the key, the
 * chain, usage, the histogram's mask), then the counters, whose time, rows
 * and shared block counts end within the first three lines (local and
 * temporary block counts are added only when not zero: counters_record.h),
 * and whose last_executed_at and changed_generation share a line with the
 * start of the entry's own histogram group.  What only inserts, texts,
 * resets and readers touch comes last.  The whole fits DSA's 640-byte size
 * class (dsa.c), so that each entry starts on a cache line of its own and
 * no allocation is wasted.
 */
typedef struct NgSharedEntry
{
	/* ---- what a lookup and a count touch ---- */
	NgKey		key;			/* immutable */
	uint32		hash;			/* immutable: hash of key */

	/*
	 * Number of backend slots bound to this entry.  Changed with the
	 * partition lock held in at least shared mode; read under the partition
	 * lock in exclusive mode by eviction and reset, so it cannot change while
	 * they look.
	 */
	pg_atomic_uint32 pins;
	dsa_pointer next;			/* partition lock: next in bucket chain */
	/* partition lock; read without lock by bound slots */
	uint32		minmax_generation;
	uint32		usage;			/* partition lock, exclusive to write */
	/* partition lock: its histogram groups (entry_hist.h) */
	uint32		hist_mask;		/* which there are */
	uint8		hist_first_group;	/* the one held here: 1 + its number, or 0
									 * (ng_entry_hist_first_bit) */

	/*
	 * Set, with the partition lock held exclusively, when a reset removes an
	 * entry that slots are still bound to: the entry is out of the hash and
	 * its memory is freed by whoever drops the last pin.  Bound slots read it
	 * without a lock.
	 */
	bool		dead;

	/*
	 * Partition lock: a text was dropped for this entry (text memory full)
	 * and counted in texts_dropped; cleared when a text is stored, so each
	 * statement kept without text is counted once.
	 */
	bool		text_dropped;
	/* partition lock: it has a block of failures by SQLSTATE (entry_errors.h) */
	bool		errors_kept;
	NgCounters	counters;		/* partition lock: the folded counts */
	uint64		hist_first[NG_HIST_GROUP_SIZE]; /* partition lock */

	/* ---- what inserts, texts, resets and readers touch ---- */
	dsa_pointer hist_groups;	/* partition lock: the other groups' chain */
	dsa_pointer qtext;			/* partition lock; InvalidDsaPointer: none */
	int			text_len;		/* partition lock */
	int			encoding;		/* partition lock */
	TimestampTz stats_since;	/* partition lock */
	TimestampTz minmax_stats_since; /* partition lock */
	/* partition lock; read as a hint without it: its plans (plans.h) */
	dsa_pointer plans;
} NgSharedEntry;

StaticAssertDecl(sizeof(NgSharedEntry) <= 640,
				 "an entry fits DSA's 640-byte size class");

/* the layout is planned for 64-bit platforms; elsewhere only its size holds */
#if SIZEOF_VOID_P == 8 && MAXIMUM_ALIGNOF == 8
StaticAssertDecl(offsetof(NgSharedEntry, counters) +
				 offsetof(NgCounters, local_blks_hit) <= 3 * PG_CACHE_LINE_SIZE,
				 "a count's counters end in the entry's first three lines");
StaticAssertDecl((offsetof(NgSharedEntry, counters) +
				  offsetof(NgCounters, last_executed_at)) / PG_CACHE_LINE_SIZE ==
				 offsetof(NgSharedEntry, hist_first) / PG_CACHE_LINE_SIZE,
				 "last_executed_at shares a line with the entry's histogram group");
#endif

/*
 * ng_entry_hist_first_bit
 *		The group bit (hist.h) of the histogram group held in entry itself,
 *		or 0 if it holds none.  Caller holds the partition lock, any mode,
 *		or reads it as a hint.
 */
static inline uint32
ng_entry_hist_first_bit(const NgSharedEntry *entry)
{
	return entry->hist_first_group == 0 ? 0 :
		(uint32) 1 << (entry->hist_first_group - 1);
}

extern uint32 ng_key_hash(const NgKey *key);

/*
 * ng_key_mix64
 *		The 64 bits ng_key_hash folds to 32.  queryid is already a good hash;
 *		one round of a 64-bit finalizer (xor-shift-multiply) spreads the
 *		user, database and level over every bit.  Inline: the admission
 *		filter (slots_entry.c) takes its cell and fingerprint from it.
 */
static inline uint64
ng_key_mix64(const NgKey *key)
{
	uint64		h = key->queryid ^
		(((uint64) key->userid << 32) | (uint64) key->dbid);

	h ^= key->toplevel ? UINT64CONST(0x9e3779b97f4a7c15) : 0;
	h ^= h >> 33;
	h *= UINT64CONST(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64CONST(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}
#define ng_partition_of_hash(h)	((h) & (NG_NUM_PARTITIONS - 1))
/* the partition of a key's hash */
static inline NgSharedPartition *
ng_partition(uint32 hash)
{
	return &ng_shared->partitions[ng_partition_of_hash(hash)];
}
extern NgSharedEntry *ng_entry_lookup(NgSharedPartition *part,
									  const NgKey *key, uint32 hash,
									  dsa_pointer *dp);
extern bool ng_entry_prepare(NgSharedPartition *part);
extern void ng_entry_prepared_release(void);
extern dsa_pointer ng_entry_insert(NgSharedPartition *part, const NgKey *key,
								   uint32 hash, dsa_pointer qtext, int text_len,
								   int encoding, bool *found);
extern void ng_entry_unlink(NgSharedPartition *part, NgSharedEntry *entry,
							dsa_pointer dp);
extern void ng_entry_release_memory(NgSharedEntry *entry, dsa_pointer dp);
extern void ng_entry_recycle_memory(NgSharedEntry *entry, dsa_pointer dp);
extern void ng_entry_drop(NgSharedPartition *part, NgSharedEntry *entry,
						  dsa_pointer dp);
extern bool ng_entry_reserve(void);
extern void ng_entry_reserve_past_max(void);
extern void ng_entry_unreserve(void);

/* the bucket of a hash in a partition whose bucket array exists */
static inline uint32
ng_store_bucket_of(const NgSharedPartition *part, uint32 hash)
{
	return (hash / NG_NUM_PARTITIONS) & (part->nbuckets - 1);
}

/* the partition's bucket array */
static inline dsa_pointer *
ng_store_buckets(const NgSharedPartition *part)
{
	return (dsa_pointer *) dsa_get_address(ng_area, part->buckets);
}

#pragma GCC visibility pop

#endif							/* NG_STORE_H */
