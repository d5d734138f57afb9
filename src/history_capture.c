/*-------------------------------------------------------------------------
 *
 * history_capture.c
 *		What a reset takes out of the table while a history window is open,
 *		handed to the keeper so that the window still counts it.
 *
 * Why a file of its own: this runs inside resets, in any backend, under
 * partition locks; the keeper side (history_keeper.c) runs in the keeper
 * alone.
 *
 * The keeper computes a window's delta for a statement as what the table
 * holds for it at the window's end, minus what it held at the start, plus
 * the totals of what departed with its key in between (history_keeper.c).
 * A reset removes entries and voids the slots counting for them (bound to
 * them, or unbound, through the partition generation, which a partial
 * reset may move for the unbound slots of other keys too).  So the reset
 * hands over each entry it removes, as it removes it, and then each slot
 * its reset voided, copied after the void under the same hold of the
 * partition lock.  A writer whose write section saw the void takes its
 * sample back (or writes nothing) and counts it again after the reset,
 * and it clears an unbound slot of an older generation only while it
 * holds the partition lock (slots/count.c), so after the copy: a slot's
 * pre-reset counts are in the copy, once, and a sample counted after the
 * void is not.  With a row go its plans' counts (history_plans.c): the
 * removed entry's plan records, and each voided slot's executions under
 * the plan its fold would have counted them in.
 *
 * Locking: an evicted entry is linked into its partition's
 * history_evicted list under the partition lock, exclusive, which the
 * eviction already holds: no allocation, no wait (history.c's
 * ng_history_keep_evicted, which eviction calls).  A reset copies what it
 * removes and voids under the partition lock it holds exclusively (a slot
 * in the middle of a write is waited for, briefly: its writer needs no
 * lock to finish), marks the partition history_pending, and after
 * releasing its locks allocates one NgHistoryDeparted per row, then takes
 * each such partition's lock exclusively again, briefly, to link them into
 * history_departed and clear its mark.  The keeper takes both lists under
 * the partition lock in any mode while it reads the partition, and waits
 * for a marked partition before it reads it, so that what a reset took out
 * is counted in the window that counted it, neither lost nor twice.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "alloc.h"
#include "entry_hist.h"
#include "history.h"
#include "plans.h"
#include "slots/slots.h"
#include "store.h"

/* how long a reset waits for a slot in the middle of a write (x 10 us) */
#define CAPTURE_SLOT_WAITS	1000

/* what a reset removes or voids for one key, until it can be handed over */
typedef struct CaptureRow
{
	int			p;
	NgKey		key;
	dsa_pointer entry;			/* the removed entry; invalid: unbound slots */
	dsa_pointer handed;			/* its NgHistoryDeparted (capture_end) */
	NgHistoryTotals t;
} CaptureRow;

/* a plan's counts removed or voided, for the row of index row */
typedef struct CapturePlan
{
	int			row;
	NgHistoryPlan p;
} CapturePlan;

typedef struct HistoryCapture
{
	int			nrows;
	int			maxrows;
	int			partition_start;	/* first row of the partition */
	int64		lost;			/* slots left out, rows not handed over */
	CaptureRow *rows;
	CapturePlan *plans;			/* in the order they were taken */
	int			nplans;
	int			maxplans;
	NgHistoryPlan *entry_plans; /* an entry's, as history_plans.c reads them */
	NgHistCell *cells;			/* a slot's cells, copied */
	int			maxcells;
	bool		pending[NG_NUM_PARTITIONS];
} HistoryCapture;

/*
 * ng_history_capture_begin
 *		Before a reset that removes entries: a capture, or NULL when the
 *		keeper keeps nothing.  Caller holds no lock of ours.  The capture
 *		allocates backend memory under partition locks, as reads do (an
 *		out-of-memory ERROR there ends the reset's own query, and error
 *		recovery releases the locks; a partition left marked is waited for
 *		by the keeper for a second at most).
 */
void *
ng_history_capture_begin(void)
{
	HistoryCapture *cap;

	if (ng_history == NULL || pg_atomic_read_u32(&ng_history->capturing) == 0)
		return NULL;
	cap = palloc0(sizeof(HistoryCapture));
	cap->maxrows = 64;
	cap->rows = palloc_extended(sizeof(CaptureRow) * (Size) cap->maxrows,
								MCXT_ALLOC_HUGE);
	cap->maxplans = 64;
	cap->plans = palloc_extended(sizeof(CapturePlan) * (Size) cap->maxplans,
								 MCXT_ALLOC_HUGE);
	/* an entry's records and "other" (plans_per_statement is fixed) */
	cap->entry_plans = palloc(sizeof(NgHistoryPlan) *
							  (Size) (ng_plans_per_statement + 1));
	return cap;
}

/* a new row of partition p for key (under the lock: see above) */
static CaptureRow *
capture_new_row(HistoryCapture *cap, int p, const NgKey *key, dsa_pointer dp)
{
	CaptureRow *cr;

	if (cap->nrows == cap->maxrows)
	{
		cap->maxrows *= 2;
		cap->rows = repalloc_huge(cap->rows,
								  sizeof(CaptureRow) * (Size) cap->maxrows);
	}
	cr = &cap->rows[cap->nrows++];
	memset(cr, 0, sizeof(CaptureRow));
	cr->p = p;
	cr->key = *key;
	cr->entry = dp;
	return cr;
}

/* keep plan p's counts for the row of index row (under the lock) */
static void
capture_plan(HistoryCapture *cap, int row, const NgHistoryPlan *p)
{
	if (cap->nplans == cap->maxplans)
	{
		cap->maxplans *= 2;
		cap->plans = repalloc_huge(cap->plans,
								   sizeof(CapturePlan) * (Size) cap->maxplans);
	}
	cap->plans[cap->nplans].row = row;
	cap->plans[cap->nplans].p = *p;
	cap->nplans++;
}

/*
 * ng_history_capture_entry
 *		A reset is about to remove entry (at dp) from partition p: keep its
 *		counts.  Caller holds p's lock exclusively.
 */
void
ng_history_capture_entry(void *arg, int p, const NgSharedEntry *entry,
						 dsa_pointer dp)
{
	static uint64 buf[NG_HIST_BUCKETS * NG_NUM_KINDS];
	HistoryCapture *cap = arg;
	CaptureRow *cr;
	int			nplans;

	if (cap == NULL)
		return;
	Assert(LWLockHeldByMeInMode(ng_shared->partitions[p].lock, LW_EXCLUSIVE));
	if (cap->nrows == 0 || cap->rows[cap->nrows - 1].p != p)
		cap->partition_start = cap->nrows;
	cr = capture_new_row(cap, p, &entry->key, dp);
	ng_history_totals_add_counters(&cr->t, &entry->counters, 1);
	ng_history_totals_add_hist(&cr->t, ng_entry_hist_copy(entry, buf), 1);
	nplans = ng_history_plans_of_entry(entry, cap->entry_plans,
									   ng_plans_per_statement + 1);
	for (int i = 0; i < nplans; i++)
		capture_plan(cap, cap->nrows - 1, &cap->entry_plans[i]);
}

/*
 * capture_add_slot
 *		Add a slot copy's counts and exec cells to the row of index row, and
 *		its executions to their plan, as the fold would count them into
 *		entry (NULL: none).
 */
static void
capture_add_slot(HistoryCapture *cap, int row, const NgSharedEntry *entry,
				 const NgSlot *copy)
{
	CaptureRow *cr = &cap->rows[row];
	NgHistoryPlan plan;

	ng_history_totals_add_counters(&cr->t, &copy->counters, 1);
	for (int c = 0; c < copy->hist_cells; c++)
		if (cap->cells[c].kind == NG_EXEC)
			cr->t.hist[cap->cells[c].bucket] += cap->cells[c].count;
	if (ng_history_plan_of_slot(entry, copy, &plan))
		capture_plan(cap, row, &plan);
}

/*
 * capture_copy_slot
 *		Copy slot i of area, waiting (briefly) for a write in progress; false
 *		(counted as lost) if it stays in the middle of one.
 */
static bool
capture_copy_slot(HistoryCapture *cap, NgBackendSlots *area, int i,
				  NgSlot *copy)
{
	if ((int) area->ncells > cap->maxcells)
	{
		cap->maxcells = area->ncells;
		cap->cells = cap->cells ?
			repalloc_huge(cap->cells, sizeof(NgHistCell) * cap->maxcells) :
			palloc_extended(sizeof(NgHistCell) * cap->maxcells, MCXT_ALLOC_HUGE);
	}
	for (int waits = 0;
		 !ng_slot_try_read(area, ng_slot_at(area, i), copy, cap->cells);
		 waits++)
	{
		if (waits == CAPTURE_SLOT_WAITS)
		{
			cap->lost++;
			return false;
		}
		pg_usleep(10);
	}
	return true;
}

/*
 * ng_history_capture_slots
 *		After a reset of partition p (whose generation was old_generation
 *		before it): keep the counts of every slot it voided, those bound to
 *		an entry it removed, and the unbound ones if it moved the generation;
 *		and mark the partition.  Caller holds p's lock exclusively, since
 *		before the reset.
 */
void
ng_history_capture_slots(void *arg, int p, uint32 old_generation)
{
	HistoryCapture *cap = arg;
	NgSharedPartition *part = &ng_shared->partitions[p];
	NgPartitionSlots it;
	NgBackendSlots *area;
	int			i;
	NgSlot		copy;

	if (cap == NULL)
		return;
	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	if (cap->nrows == 0 || cap->rows[cap->nrows - 1].p != p)
		cap->partition_start = cap->nrows;
	ng_partition_slots_begin(&it, p);
	while (ng_partition_slots_next(&it, &area, &i))
	{
		if (!capture_copy_slot(cap, area, i, &copy) ||
			!copy.in_use || copy.partition != p)
			continue;
		if (DsaPointerIsValid(copy.entry))
		{
			/* the entry, removed, stays in memory while bound */
			for (int r = cap->partition_start; r < cap->nrows; r++)
				if (cap->rows[r].entry == copy.entry)
				{
					capture_add_slot(cap, r,
									 dsa_get_address(ng_area, copy.entry),
									 &copy);
					break;
				}
		}
		else if (copy.partition_generation == old_generation &&
				 part->generation != old_generation &&
				 ng_counters_any(&copy.counters))
		{
			dsa_pointer dp;
			NgSharedEntry *entry = ng_entry_lookup(part, &copy.key,
												   ng_key_hash(&copy.key),
												   &dp);

			(void) capture_new_row(cap, p, &copy.key, InvalidDsaPointer);
			capture_add_slot(cap, cap->nrows - 1, entry, &copy);
		}
	}
	part->history_pending++;
	cap->pending[p] = true;
}

/* by row, then by plan (other last), so that a row's plans are together */
static int
capture_plan_cmp(const void *a, const void *b)
{
	const CapturePlan *x = a;
	const CapturePlan *y = b;

	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->p.other != y->p.other)
		return x->p.other ? 1 : -1;
	if (x->p.planid != y->p.planid)
		return x->p.planid < y->p.planid ? -1 : 1;
	return 0;
}

/*
 * capture_merge_plans
 *		Sort the plans taken and sum each row's plans of one pair, in place:
 *		each row's plans are then plans[first[r]] to plans[first[r + 1] - 1]
 *		(first: nrows + 1 entries).  No lock held.
 */
static void
capture_merge_plans(HistoryCapture *cap, int *first)
{
	int			n = 0;
	int			r = 0;

	qsort(cap->plans, cap->nplans, sizeof(CapturePlan), capture_plan_cmp);
	for (int i = 0; i < cap->nplans; i++)
	{
		CapturePlan *cp = &cap->plans[i];

		if (n > 0 && cap->plans[n - 1].row == cp->row &&
			cap->plans[n - 1].p.other == cp->p.other &&
			cap->plans[n - 1].p.planid == cp->p.planid)
		{
			ng_history_plan_add(&cap->plans[n - 1].p.c, &cp->p.c, 1);
			continue;
		}
		while (r <= cp->row)
			first[r++] = n;
		cap->plans[n++] = *cp;
	}
	while (r <= cap->nrows)
		first[r++] = n;
}

/*
 * ng_history_capture_end
 *		After the reset released its locks: hand the rows over (allocated in
 *		the DSA area; a row that finds no memory is counted in the history's
 *		counts_lost) and clear the partitions' marks.  Raises no error, so
 *		that a mark is cleared once made, but for an error in the reset
 *		itself (the keeper then stops waiting for that mark).  Takes each marked
 *		partition's lock exclusively, one at a time, then the history lock.
 */
void
ng_history_capture_end(void *arg)
{
	HistoryCapture *cap = arg;
	int		   *first;

	if (cap == NULL)
		return;
	first = palloc_extended(sizeof(int) * (Size) (cap->nrows + 1),
							MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (first != NULL)
		capture_merge_plans(cap, first);
	else
		cap->lost++;			/* the rows go without their plans */
	for (int i = 0; i < cap->nrows; i++)
	{
		CaptureRow *cr = &cap->rows[i];
		NgHistoryDeparted *d;
		int			np = first != NULL ? first[i + 1] - first[i] : 0;

		cr->handed = ng_dsa_allocate(NG_HISTORY_DEPARTED_SIZE(np), 0);
		if (!DsaPointerIsValid(cr->handed))
		{
			cap->lost++;
			continue;
		}
		d = dsa_get_address(ng_area, cr->handed);
		d->key = cr->key;
		d->t = cr->t;
		d->nplans = np;
		for (int j = 0; j < np; j++)
			d->plans[j] = cap->plans[first[i] + j].p;
	}
	if (first != NULL)
		pfree(first);
	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		NgSharedPartition *part = &ng_shared->partitions[p];

		if (!cap->pending[p])
			continue;
		LWLockAcquire(part->lock, LW_EXCLUSIVE);
		for (int i = 0; i < cap->nrows; i++)
		{
			NgHistoryDeparted *d;

			if (cap->rows[i].p != p || !DsaPointerIsValid(cap->rows[i].handed))
				continue;
			d = dsa_get_address(ng_area, cap->rows[i].handed);
			d->next = part->history_departed;
			part->history_departed = cap->rows[i].handed;
		}
		part->history_pending--;
		LWLockRelease(part->lock);
	}
	if (cap->lost > 0)
	{
		LWLockAcquire(ng_history->lock, LW_EXCLUSIVE);
		ng_history->counts_lost += cap->lost;
		LWLockRelease(ng_history->lock);
	}
	pfree(cap->rows);
	pfree(cap->plans);
	pfree(cap->entry_plans);
	if (cap->cells)
		pfree(cap->cells);
	pfree(cap);
}
