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
 * the totals of what departed with its key in between (an evicted entry
 * holds all its counts: it is never pinned, so no slot holds any for it;
 * a reset removes an entry and voids the slots counting for it, so the
 * reset hands over the whole row an exact read gives for each key it
 * removes, entry plus slots).
 *
 * Locking: an evicted entry is linked into its partition's
 * history_evicted list under the partition lock, exclusive, which the
 * eviction already holds: no allocation, no wait (history.c's
 * ng_history_keep_evicted, which eviction calls).  A reset reads the rows
 * it removes under the partition lock it holds exclusively (reader.c's
 * ng_read_partition_held), marks the partition history_pending, and after
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
#include "history.h"
#include "reader.h"
#include "store.h"

/* a row a reset removes, until it can be handed over */
typedef struct CaptureRow
{
	int			p;
	NgKey		key;
	NgHistoryTotals t;
} CaptureRow;

typedef struct HistoryCapture
{
	Oid			userid;			/* the reset's filter; 0: any */
	Oid			dbid;
	uint64		queryid;
	int			p;				/* the partition being read */
	int			nrows;
	int			maxrows;
	int			partition_start;	/* first row of the partition */
	int64		lost;			/* slots left out, rows not handed over */
	CaptureRow *rows;
	bool		pending[NG_NUM_PARTITIONS];
} HistoryCapture;

static bool
capture_matches(const HistoryCapture *cap, const NgKey *key)
{
	return (cap->userid == InvalidOid || key->userid == cap->userid) &&
		(cap->dbid == InvalidOid || key->dbid == cap->dbid) &&
		(cap->queryid == 0 || key->queryid == cap->queryid);
}

/* row callback: keep the totals of a row the reset will remove */
static bool
capture_row(NgReader *r, const NgReadRow *row)
{
	HistoryCapture *cap = r->arg;
	CaptureRow *cr;

	if (!capture_matches(cap, &row->key))
		return true;
	if (cap->nrows == cap->maxrows)
	{
		/* under the partition lock: see ng_history_capture_begin */
		cap->maxrows *= 2;
		cap->rows = repalloc_huge(cap->rows,
								  sizeof(CaptureRow) * (Size) cap->maxrows);
	}
	cr = &cap->rows[cap->nrows++];
	memset(cr, 0, sizeof(CaptureRow));
	cr->p = cap->p;
	cr->key = row->key;
	ng_history_totals_add_counters(&cr->t, row->counters, 1);
	ng_history_totals_add_hist(&cr->t, row->hist, 1);
	return true;
}

static void
capture_forget(NgReader *r)
{
	HistoryCapture *cap = r->arg;

	cap->nrows = cap->partition_start;
}

static void
capture_grow(NgReader *r)
{
}

/*
 * ng_history_capture_begin
 *		Before a reset that removes entries (filter: userid, dbid, queryid,
 *		0 for any): a capture, or NULL when the keeper keeps nothing.
 *		Caller holds no lock of ours.  The capture allocates backend memory
 *		under partition locks, as reads do (an out-of-memory ERROR there
 *		ends the reset's own query, and error recovery releases the locks;
 *		a partition left marked is waited for by the keeper for a second at
 *		most).
 */
void *
ng_history_capture_begin(Oid userid, Oid dbid, uint64 queryid)
{
	HistoryCapture *cap;

	if (ng_history == NULL || pg_atomic_read_u32(&ng_history->capturing) == 0)
		return NULL;
	cap = palloc0(sizeof(HistoryCapture));
	cap->userid = userid;
	cap->dbid = dbid;
	cap->queryid = queryid;
	cap->maxrows = 64;
	cap->rows = palloc_extended(sizeof(CaptureRow) * (Size) cap->maxrows,
								MCXT_ALLOC_HUGE);
	return cap;
}

/*
 * ng_history_capture_partition
 *		Keep the rows of partition p that the reset is about to remove, and
 *		mark the partition.  Caller holds p's lock exclusively, and resets
 *		the partition before releasing it.
 */
void
ng_history_capture_partition(void *arg, int p)
{
	HistoryCapture *cap = arg;
	NgSharedPartition *part = &ng_shared->partitions[p];
	NgReader	r;

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	if (cap == NULL)
		return;
	memset(&r, 0, sizeof(r));
	r.row = capture_row;
	r.forget = capture_forget;
	r.grow = capture_grow;
	r.arg = cap;
	cap->p = p;
	cap->partition_start = cap->nrows;
	cap->lost += ng_read_partition_held(p, &r);
	ng_read_reader_free(&r);
	part->history_pending++;
	cap->pending[p] = true;
}

/*
 * ng_history_capture_end
 *		After the reset released its locks: hand the rows over (allocated in
 *		the DSA area; a row that finds no memory is counted in the history's
 *		counts_lost) and clear the partitions' marks.  Takes each marked
 *		partition's lock exclusively, one at a time, then the history lock.
 */
void
ng_history_capture_end(void *arg)
{
	HistoryCapture *cap = arg;
	dsa_pointer *dps;

	if (cap == NULL)
		return;
	dps = palloc_extended(sizeof(dsa_pointer) * (Size) Max(cap->nrows, 1),
						  MCXT_ALLOC_HUGE);
	for (int i = 0; i < cap->nrows; i++)
	{
		NgHistoryDeparted *d;

		dps[i] = ng_dsa_allocate(sizeof(NgHistoryDeparted), 0);
		if (!DsaPointerIsValid(dps[i]))
		{
			cap->lost++;
			continue;
		}
		d = dsa_get_address(ng_area, dps[i]);
		d->key = cap->rows[i].key;
		d->t = cap->rows[i].t;
	}
	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		NgSharedPartition *part = &ng_shared->partitions[p];

		if (!cap->pending[p])
			continue;
		LWLockAcquire(part->lock, LW_EXCLUSIVE);
		for (int i = 0; i < cap->nrows; i++)
		{
			NgHistoryDeparted *d;

			if (cap->rows[i].p != p || !DsaPointerIsValid(dps[i]))
				continue;
			d = dsa_get_address(ng_area, dps[i]);
			d->next = part->history_departed;
			part->history_departed = dps[i];
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
	pfree(dps);
	pfree(cap->rows);
	pfree(cap);
}
