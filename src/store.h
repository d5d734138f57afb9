/*-------------------------------------------------------------------------
 *
 * store.h
 *		The partitioned hash table of shared entries (store.c), for the
 *		modules that find, create or remove entries: store, evict, slots,
 *		reader, persist, reset.
 *
 * Owns: the bucket arrays and chains, entry_count; of each entry
 * (NgSharedEntry, entry.h) its key, hash, chain link, pins and dead flag.
 * Layers: store.c calls entry_hist.h and entry_errors.h to free what an
 * entry holds (histogram groups, block of failures) as it leaves; those
 * two include entry.h, not this header, and call nothing of the store;
 * eviction (evict.h) calls the store and is not called by it.
 * Promises: at most one partition lock is held at a time, except by a full
 * reset (all of them, in index order); every DSA allocation is made with no
 * partition lock held (ng_entry_prepare allocates before the lock).
 *
 * Locks, per function:
 *   ng_key_hash, ng_key_htab_hash/_match, ng_entry_reserve/_past_max/unreserve:
 *   none
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

#include "entry.h"
#include "shmem.h"

#pragma GCC visibility push(hidden)

extern uint32 ng_key_hash(const NgKey *key);
extern uint32 ng_key_htab_hash(const void *key, Size keysize);
extern int	ng_key_htab_match(const void *key1, const void *key2, Size keysize);

/*
 * ng_key_mix64
 *		The 64 bits ng_key_hash folds to 32.  queryid is already a good hash;
 *		one round of a 64-bit finalizer (xor-shift-multiply) spreads the
 *		user, database and level over every bit.  Inline: the admission
 *		filter (slots/admit.h) takes its cell and fingerprint from it.
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
extern NgSharedEntry *ng_entry_lookup(NgSharedPartition *part,
									  const NgKey *key, uint32 hash,
									  dsa_pointer *dp);
extern bool ng_entry_prepare(NgSharedPartition *part);
extern void ng_entry_prepared_release(void);

/* What ng_entry_insert makes a new entry of */
typedef struct NgEntryInsert
{
	const NgKey *key;
	uint32		hash;			/* ng_key_hash(key) */
	dsa_pointer qtext;			/* its text (ng_qtext_store), owned by the
								 * entry once inserted; or InvalidDsaPointer */
	int			text_len;		/* the text's length in bytes */
	int			encoding;		/* the text's encoding */
} NgEntryInsert;

extern dsa_pointer ng_entry_insert(NgSharedPartition *part,
								   const NgEntryInsert *ins, bool *found);
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
