/*-------------------------------------------------------------------------
 *
 * evict.h
 *		Eviction (evict.c): the clock sweep over entries, and over texts.
 *
 * Promises: never waits for a partition lock (tries them conditionally),
 * never evicts an entry a slot is bound to (pins > 0).
 * Locks: ng_evict_make_room, ng_evict_to_limit, ng_evict_texts_to_limit,
 * ng_evict_count_removed: caller holds no partition lock.  ng_evict_earn_usage: the entry's
 * partition lock, exclusive.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_EVICT_H
#define NG_EVICT_H

#include "guc.h"
#include "store.h"

#pragma GCC visibility push(hidden)

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

extern bool ng_evict_make_room(void);
extern void ng_evict_to_limit(void);
extern void ng_evict_count_removed(int64 calls, double exec_time);
extern void ng_evict_texts_to_limit(void);
extern void ng_evict_earn_usage(NgSharedEntry *entry, int64 calls);

#pragma GCC visibility pop

#endif							/* NG_EVICT_H */
