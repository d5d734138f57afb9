/*-------------------------------------------------------------------------
 *
 * admit.h
 *		The admission filter: which statement may have a new entry when the
 *		table is (nearly) full.  Inline, for entry.c, refusal.c and bind.c.
 *
 * Locks: none.  The filter's cells and flag are eviction's state (evict.h,
 * ng_evict_admit_cell, ng_evict_made_room), read and written with plain
 * atomic 32-bit loads and stores; callers may hold any lock of ours or
 * none.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_ADMIT_H
#define NG_ADMIT_H

#include "evict.h"
#include "guc.h"
#include "shmem.h"
#include "slots_int.h"
#include "store.h"

#pragma GCC visibility push(hidden)

/*
 * The admission filter (a "doorkeeper").  When the table is full, a new
 * entry costs an eviction, and a statement that runs once would evict one
 * that runs often for nothing.  So, with admission = recurring, a statement
 * that needs a new entry while the table is full gets one only if its key
 * was seen before: its first execution is refused, leaves its key's
 * fingerprint in the filter, and is counted straight in unadmitted_calls
 * and evicted_calls, taking no slot (ng_slot_bind); its next execution, in
 * any backend, finds the fingerprint and is admitted (the table then
 * evicts, as always).  A refusal costs a lookup under the shared lock, a
 * hash, a load and the spinlock: no eviction, DSA, text, slot or
 * exclusive lock.
 *
 * The filter is NG_ADMIT_CELLS 32-bit cells in main shared memory: a key's
 * 64-bit mix picks a cell and a fingerprint (design.md has the figures).
 * Plain atomic loads and stores, no lock: a race can only overwrite a
 * fingerprint, which delays a key's admission.  A key is forgotten once
 * another refused key takes its cell.
 *
 * Who asks (NgAdmitAsk, slots_int.h): an execution notes its key when
 * refused, a parse or a planning only asks, an unbound slot's fold that
 * recurred and a process without slots are admitted.
 */

/*
 * is the filter in force: admission = recurring and the table full, or,
 * once an eviction has made room, within a batch of full?  Without the
 * second, each statement that recurs and evicts would free room for a
 * batch of one-offs after it, unfiltered, whose entries the next eviction
 * takes again.
 */
static inline bool
admit_filtering(void)
{
	uint32		count;

	if (ng_admission != NG_ADMIT_RECURRING)
		return false;
	count = pg_atomic_read_u32(&ng_shared->entry_count);
	if (count >= (uint32) ng_max)
		return true;
	return count + ng_evict_batch() >= (uint32) ng_max &&
		ng_evict_made_room();
}

/* key's cell of the filter, and its fingerprint there (odd, never 0) */
static inline pg_atomic_uint32 *
admit_cell(const NgKey *key, uint32 *fingerprint)
{
	uint64		h = ng_key_mix64(key);

	*fingerprint = (uint32) (h >> 32) | 1;
	return ng_evict_admit_cell(h);
}

/*
 * admit_key
 *		May key have a new entry, the table being full?  With NG_ADMIT_NOTE,
 *		a refused key is noted.  No lock; a load, and a store if noted.
 */
static inline bool
admit_key(const NgKey *key, NgAdmitAsk ask)
{
	uint32		fingerprint;
	pg_atomic_uint32 *cell;

	if (ask == NG_ADMIT_GRANT || ng_admission != NG_ADMIT_RECURRING)
		return true;
	cell = admit_cell(key, &fingerprint);
	if (pg_atomic_read_u32(cell) == fingerprint)
		return true;
	if (ask == NG_ADMIT_NOTE)
		pg_atomic_write_u32(cell, fingerprint);
	return false;
}

/*
 * admit_refuses
 *		Would the filter refuse key a new entry now?  (No note.)  Lets a
 *		parse or an execution skip making a text it would not use.  No lock.
 */
static inline bool
admit_refuses(const NgKey *key)
{
	uint32		fingerprint;

	if (!admit_filtering())
		return false;
	return pg_atomic_read_u32(admit_cell(key, &fingerprint)) != fingerprint;
}

#pragma GCC visibility pop

#endif							/* NG_ADMIT_H */
