/*-------------------------------------------------------------------------
 *
 * cells.c
 *		A slot's histogram cells, past the hot path's inline hit
 *		(slot_hist_count, count.c): finding a bucket's cell without
 *		the index, taking a new cell from the backend's pool, and noting the
 *		spare histogram group a fold will need for it.
 *
 * Why a file of its own: count.c is the hot path, and these run
 * once per new bucket of a slot.  Same rules as there: called inside the
 * slot's write section (my own slot, no lock); no allocation, no error.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "entry_hist.h"
#include "hist.h"
#include "slots_int.h"

/* does slot have a cell in bucket's group (hist.h)?  By the index. */
static inline bool
slot_has_group(const uint16 *index, int kind, int bucket)
{
	const uint16 *group = index + kind * NG_HIST_BUCKETS +
		bucket / NG_HIST_GROUP_SIZE * NG_HIST_GROUP_SIZE;

	for (int b = 0; b < NG_HIST_GROUP_SIZE; b++)
		if (group[b] != NG_NO_CELL)
			return true;
	return false;
}

/*
 * slot_hist_find
 *		slot's cell of (kind, bucket) with room for one more, or NG_NO_CELL;
 *		*group_seen: whether slot has a cell in the bucket's group.
 */
static inline uint16
slot_hist_find(NgSlot *slot, const uint16 *index, int kind, int bucket,
			   bool *group_seen)
{
	NgHistCell *pool = ngs_pool;
	uint16		at;

	if (likely(index != NULL))
	{
		at = index[kind * NG_HIST_BUCKETS + bucket];
		if (likely(at != NG_NO_CELL) && likely(pool[at].count < PG_UINT32_MAX))
			return at;
		*group_seen = at != NG_NO_CELL || slot_has_group(index, kind, bucket);
		return NG_NO_CELL;
	}
	*group_seen = false;
	for (at = slot->hist_head; at != NG_NO_CELL; at = pool[at].next)
	{
		NgHistCell *cell = &pool[at];

		if (cell->kind != kind)
			continue;
		if (cell->bucket == bucket && cell->count < PG_UINT32_MAX)
			return at;
		*group_seen |= (cell->bucket / NG_HIST_GROUP_SIZE ==
						bucket / NG_HIST_GROUP_SIZE);
	}
	return NG_NO_CELL;
}

/*
 * ng_slot_hist_count_new
 *		slot_hist_count (count.c) when the index has no cell of the
 *		sample's bucket with room, or there is no index: count one sample of
 *		kind in bucket in slot's (my slot i's) cells, in that bucket's cell
 *		found by walking the slot's chain, or in a new one from my pool,
 *		which the caller made sure has one (ngs_cells_free > 0).  Returns
 *		true if the cell is the slot's first in its histogram group
 *		(hist.h).  Inside the slot's write section.
 */
bool
ng_slot_hist_count_new(NgSlot *slot, int i, int kind, int bucket)
{
	NgHistCell *pool = ngs_pool;
	uint16	   *index = slot_cell_index(i);
	bool		group_seen;
	uint16		at = slot_hist_find(slot, index, kind, bucket, &group_seen);

	if (likely(at != NG_NO_CELL))
	{
		pool[at].count++;
		return false;
	}
	if (unlikely(ngs_free_cell == NG_NO_CELL))
	{
		/*
		 * Not reached: the caller reclaimed cells (ng_slots_reclaim_cells
		 * frees at least one, except while the backend exits, when nothing is
		 * counted).  Were it reached, the sample would be left out of the
		 * histogram only.
		 */
		Assert(false);
		return false;
	}
	at = ngs_free_cell;
	ngs_free_cell = pool[at].next;
	ngs_cells_free--;
	pool[at].kind = kind;
	pool[at].bucket = bucket;
	pool[at].count = 1;
	pool[at].next = slot->hist_head;
	slot->hist_head = at;
	slot->hist_cells++;
	if (index != NULL)
		index[kind * NG_HIST_BUCKETS + bucket] = at;
	return !group_seen;
}

/*
 * ng_slot_owe_group
 *		ls's slot has its first cell in the group of (kind, bucket): if its
 *		entry lacks that group, and it is not the one the entry will hold in
 *		itself (the entry has none yet, and this is the slot's only cell),
 *		the fold will need a spare group (entry_hist.c).
 *		Reads the entry's mask without a lock: a hint, which at worst makes
 *		a spare too many, or leaves a fold at exit to the next backend
 *		(fold.c).  An unbound slot may need one.
 */
void
ng_slot_owe_group(const NgSlot *slot, NgLocalSlot *ls, int kind, int bucket)
{
	NgSharedEntry *entry = ls->entry;

	if (entry != NULL &&
		((entry->hist_first_group == 0 && slot->hist_cells == 1) ||
		 ng_entry_hist_lacks(entry, ng_hist_group_bit(kind, bucket)) == 0))
		return;
	ls->spares_owed++;
	ngs_spares_owed++;
}
