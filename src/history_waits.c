/*-------------------------------------------------------------------------
 *
 * history_waits.c
 *		The keeper's part of each window's wait samples: it takes the wait
 *		profile's new samples every time it wakes (waits_window.c), sums
 *		them per (user, database, queryid, wait event) while the window is
 *		open, and when the window closes, makes its wait rows.
 *
 * Why a file of its own: the history's statements (history_keeper.c) come
 * from the statistics' table; these come from the wait profile, with an
 * accounting of their own, off every backend's path.
 *
 * A window's wait rows: for each statement the window keeps (by userid,
 * dbid and queryid: waits are sampled for top-level statements, whatever
 * the kept row's toplevel), its samples per wait event; the samples of all
 * other statements, summed per wait event, in rows with queryid NULL.  So
 * a window's wait rows add up to every sample the sampler counted while it
 * was open (waits_window.c: resets do not take them; samples a full
 * handover lost are counted in history_counts_lost).
 *
 * Locking: the take holds the profile's window_lock (waits_window.c), no
 * lock of the history's; the sums are the keeper's own memory.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "history.h"
#include "waits.h"

/* a key's samples in the open window */
typedef struct WaitSum
{
	NgWaitKey	key;			/* hash key: must be first */
	uint64		samples;
	uint64		time_us;
} WaitSum;

static HTAB *waits_sums = NULL;

/* the take's callback: add to key's sum */
static void
waits_add(const NgWaitKey *key, uint64 samples, uint64 time_us, void *arg)
{
	bool		found;
	WaitSum    *s = hash_search(waits_sums, key, HASH_ENTER, &found);

	if (!found)
		s->samples = s->time_us = 0;
	s->samples += samples;
	s->time_us += time_us;
}

/*
 * ng_history_waits_open
 *		Keeper, opening its first window: start following the profile, with
 *		no sample in the window yet.
 */
void
ng_history_waits_open(void)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(NgWaitKey);
	ctl.entrysize = sizeof(WaitSum);
	ctl.hcxt = TopMemoryContext;
	waits_sums = hash_create("pg_stat_statements_ng history waits", 256, &ctl,
							 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	ng_waits_window_open();
}

/*
 * ng_history_waits_stop
 *		Keeper, exiting: stop following the profile.
 */
void
ng_history_waits_stop(void)
{
	ng_waits_window_stop();
}

/*
 * ng_history_waits_take
 *		Keeper, each time it wakes and when it closes a window: add the
 *		profile's new samples to the open window's sums.  Samples lost (the
 *		handover was full) are added to history_counts_lost.
 */
void
ng_history_waits_take(void)
{
	uint64		lost;

	if (waits_sums == NULL || ng_waits == NULL)
		return;
	lost = ng_waits_window_take(waits_add, NULL);
	if (lost > 0)
	{
		LWLockAcquire(ng_history->lock, LW_EXCLUSIVE);
		ng_history->counts_lost += (int64) lost;
		LWLockRelease(ng_history->lock);
	}
}

/* is key's statement one of the window's nkeep kept rows */
static bool
waits_kept(const NgWaitKey *key, const NgKey *kept, int nkeep)
{
	for (int i = 0; i < nkeep; i++)
		if (kept[i].queryid == key->queryid &&
			kept[i].userid == key->userid && kept[i].dbid == key->dbid)
			return true;
	return false;
}

/* the kept statements' rows first, by key; then the others' */
static int
wait_row_cmp(const void *a, const void *b)
{
	const NgHistoryWaitRow *x = a;
	const NgHistoryWaitRow *y = b;

	if (x->others != y->others)
		return x->others ? 1 : -1;
	return memcmp(&x->key, &y->key, sizeof(NgWaitKey));
}

/*
 * ng_history_waits_rows
 *		Keeper, closing a window that keeps the nkeep statements of kept
 *		(the caller took the profile's samples just before): the window's
 *		wait rows, palloc'd, their number in *nwaits; the sums start again
 *		from nothing.
 */
NgHistoryWaitRow *
ng_history_waits_rows(const NgKey *kept, int nkeep, int *nwaits)
{
	long		n = waits_sums ? hash_get_num_entries(waits_sums) : 0;
	NgHistoryWaitRow *out = palloc_extended(sizeof(NgHistoryWaitRow) *
											(Size) Max(n, 1), MCXT_ALLOC_HUGE);
	HASH_SEQ_STATUS seq;
	WaitSum    *s;
	int			nw = 0;

	*nwaits = 0;
	if (n == 0)
		return out;
	hash_seq_init(&seq, waits_sums);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		NgHistoryWaitRow row;
		int			i;

		memset(&row, 0, sizeof(row));
		row.key = s->key;
		row.others = !waits_kept(&s->key, kept, nkeep);
		if (row.others)
			row.key.userid = row.key.dbid = row.key.queryid = 0;
		/* the others of one wait event share a row */
		for (i = 0; row.others && i < nw; i++)
			if (out[i].others &&
				out[i].key.wait_event_info == row.key.wait_event_info)
				break;
		if (!row.others)
			i = nw;
		if (i == nw)
			out[nw++] = row;
		out[i].samples += s->samples;
		out[i].time_us += s->time_us;
		(void) hash_search(waits_sums, &s->key, HASH_REMOVE, NULL);
	}
	qsort(out, nw, sizeof(NgHistoryWaitRow), wait_row_cmp);
	*nwaits = nw;
	return out;
}
