/*-------------------------------------------------------------------------
 *
 * history_keeper.c
 *		The keeper's part of the history: it opens a window, closes it every
 *		history_interval (or when pg_stat_statements_ng_take_window asks),
 *		and keeps each closed window's per-statement deltas in the DSA area.
 *
 * Why a file of its own: it runs in the keeper alone, with state of its
 * own (backend-local), off every backend's path.
 *
 * The deltas.  For each statement it has seen, the keeper keeps acc =
 * (what departed with the key since the window opened, history_capture.c)
 * minus (what the table held for it when the window opened).  Closing a
 * window reads every partition through the exact reader: for each row,
 * the window's delta is acc plus the row; acc becomes minus the row.  A
 * statement no longer in the table has acc as its delta, and is forgotten.
 * The lists of what departed from a partition are taken in the same
 * partition lock section as its rows (the reader's locked callback), and
 * between closes every second, so an evicted entry or a reset's totals
 * count in the window whose read did not see them in the table.  What a
 * window keeps: the history_statements statements with the most exec
 * time, and one row (queryid NULL) summing the others, so its rows add up
 * to every count in it.  Percentiles come from the delta of the exec
 * histograms.  Each window also keeps the wait samples counted while it
 * was open (history_waits.c), taken with the lists of what departed, and
 * the per-plan deltas of the statements it keeps (history_plans.c), read
 * with the rows (the entries' plan records, and the reader's slot copies)
 * and taken from what departed by the same arithmetic.
 *
 * Locking: the reader takes each partition lock shared (the keeper writes
 * the partition's history lists there: no other shared holder touches
 * them, and writers of them hold the lock exclusively); the window is
 * built in backend memory and the DSA area without any lock, then linked
 * under the history lock.  No backend waits for a close beyond one
 * partition lock's shared section, as for any read.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "storage/ipc.h"
#include "storage/proc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "alloc.h"
#include "entry_hist.h"
#include "history.h"
#include "reader.h"
#include "slots/slots.h"
#include "store.h"

/* how many 1 ms rereads a close waits for a reset to hand over (1 s) */
#define HISTORY_PENDING_WAITS	1000

/* a statement the keeper follows */
typedef struct KeeperKey
{
	NgKey		key;			/* hash key: must be first */
	uint64		seen;			/* the read that last saw it */
	NgHistoryTotals acc;
} KeeperKey;

/* a statement's totals: a row read, or a window's delta */
typedef struct KeyTotals
{
	NgKey		key;
	NgHistoryTotals t;
} KeyTotals;

/* what departed from a partition, as the keeper takes it */
typedef struct NgHistoryTaken
{
	dsa_pointer evicted;
	dsa_pointer departed;
	NgHistoryUnboundList unbound;
} NgHistoryTaken;

/* a growing array of statements' totals */
typedef struct KeyTotalsList
{
	KeyTotals  *v;
	int			n;
	int			max;
} KeyTotalsList;

/*
 * the read of one partition, and the lists taken with it; its plans
 * (plans[i] of statement pkeys[i], history_plans.c)
 */
typedef struct KeeperRead
{
	KeyTotals  *rows;
	int			nrows;
	int			maxrows;
	NgKey	   *pkeys;
	NgHistoryPlan *plans;
	int			nplans;
	int			maxplans;
	bool		plans_full;		/* grow the plans, not the rows */
	int			waits;
	NgHistoryTaken taken;
} KeeperRead;

static bool keeper_started = false;

/* per partition: a history_pending the keeper waited for in vain */
static uint32 keeper_stale_pending[NG_NUM_PARTITIONS];
static MemoryContext keeper_cxt = NULL;
static HTAB *keeper_keys = NULL;
static uint64 keeper_reads = 0;

static KeeperKey *
keeper_key(const NgKey *key)
{
	bool		found;
	KeeperKey  *k = hash_search(keeper_keys, key, HASH_ENTER, &found);

	if (!found)
	{
		memset(&k->acc, 0, sizeof(k->acc));
		k->seen = 0;
	}
	return k;
}

/*
 * keeper_absorb
 *		Add what departed from a partition (taken with keeper_take) to acc,
 *		unless discard (what departed before the window opened), and free
 *		it.  Called without lock: the keeper owns what it took.
 */
static void
keeper_absorb(NgHistoryTaken *taken, bool discard)
{
	static uint64 buf[NG_HIST_BUCKETS * NG_NUM_KINDS];
	dsa_pointer evicted = taken->evicted;
	dsa_pointer departed = taken->departed;

	while (DsaPointerIsValid(evicted))
	{
		NgSharedEntry *e = dsa_get_address(ng_area, evicted);
		dsa_pointer next = e->next;

		if (!discard)
		{
			KeeperKey  *k = keeper_key(&e->key);

			ng_history_totals_add_counters(&k->acc, &e->counters, 1);
			ng_history_totals_add_hist(&k->acc, ng_entry_hist_copy(e, buf), 1);
			ng_history_plans_evicted(e);
		}
		ng_entry_release_memory(e, evicted);
		evicted = next;
	}
	while (DsaPointerIsValid(departed))
	{
		NgHistoryDeparted *d = dsa_get_address(ng_area, departed);
		dsa_pointer next = d->next;

		if (!discard)
		{
			ng_history_totals_add(&keeper_key(&d->key)->acc, &d->t, 1);
			ng_history_plans_departed(&d->key, d->plans, d->nplans);
		}
		dsa_free(ng_area, departed);
		departed = next;
	}
	for (int i = 0; i < taken->unbound.n && !discard; i++)
	{
		NgHistoryUnbound *u = &taken->unbound.v[i];

		ng_history_counts_add(&keeper_key(&u->key)->acc.c, &u->c);
		ng_history_plans_departed(&u->key, u->plans, u->nplans);
	}
	if (taken->unbound.lost > 0 && !discard)
	{
		LWLockAcquire(ng_history->lock, LW_EXCLUSIVE);
		ng_history->counts_lost += taken->unbound.lost;
		LWLockRelease(ng_history->lock);
	}
}

/*
 * keeper_take
 *		Take what departed from partition p: its history lists and the
 *		counts of its unbound folds.  Caller holds its lock, any mode (only
 *		the keeper changes these under a shared lock).
 */
static void
keeper_take(int p, NgHistoryTaken *taken)
{
	NgSharedPartition *part = &ng_shared->partitions[p];
	NgHistoryUnboundList *list = &ng_history->unbound[p];

	taken->evicted = part->history_evicted;
	taken->departed = part->history_departed;
	part->history_evicted = InvalidDsaPointer;
	part->history_departed = InvalidDsaPointer;
	taken->unbound.n = list->n;
	taken->unbound.lost = list->lost;
	memcpy(taken->unbound.v, list->v, sizeof(NgHistoryUnbound) * list->n);
	list->n = 0;
	list->lost = 0;
}

/*
 * keeper_drain
 *		Between closes: take what departed from every partition and add it
 *		to acc, so that evicted entries do not wait in shared memory for the
 *		close.
 */
static void
keeper_drain(void)
{
	NgHistoryTaken taken;

	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		NgSharedPartition *part = &ng_shared->partitions[p];

		/* a hint, read without the lock */
		if (!DsaPointerIsValid(part->history_evicted) &&
			!DsaPointerIsValid(part->history_departed) &&
			ng_history->unbound[p].n == 0 && ng_history->unbound[p].lost == 0)
			continue;
		LWLockAcquire(part->lock, LW_SHARED);
		keeper_take(p, &taken);
		LWLockRelease(part->lock);
		keeper_absorb(&taken, false);
	}
}

/* ---- reading the table: the reader's callbacks ---- */

/*
 * keeper_row
 *		A statement's row, and its entry's plan records (history_plans.c).
 */
static bool
keeper_row(NgReader *r, const NgReadRow *row)
{
	KeeperRead *kr = r->arg;
	KeyTotals  *kt;

	if (kr->nrows == kr->maxrows)
		return false;			/* grown outside the lock */
	if (DsaPointerIsValid(row->entry))
	{
		int			n;

		n = ng_history_plans_of_entry(dsa_get_address(ng_area, row->entry),
									  &kr->plans[kr->nplans],
									  kr->maxplans - kr->nplans);
		if (n < 0)
		{
			kr->plans_full = true;
			return false;		/* grown outside the lock */
		}
		for (int i = 0; i < n; i++)
			kr->pkeys[kr->nplans + i] = row->key;
		kr->nplans += n;
	}
	kt = &kr->rows[kr->nrows++];
	memset(kt, 0, sizeof(KeyTotals));
	kt->key = row->key;
	ng_history_totals_add_counters(&kt->t, row->counters, 1);
	ng_history_totals_add_hist(&kt->t, row->hist, 1);
	return true;
}

/*
 * keeper_slot
 *		The plan of a slot whose counts row includes (history_plans.c).
 */
static bool
keeper_slot(NgReader *r, const NgReadRow *row, const NgSlot *copy)
{
	KeeperRead *kr = r->arg;
	NgSharedEntry *entry = NULL;

	if (kr->nplans == kr->maxplans)
	{
		kr->plans_full = true;
		return false;			/* grown outside the lock */
	}
	if (DsaPointerIsValid(row->entry))
		entry = dsa_get_address(ng_area, row->entry);
	if (ng_history_plan_of_slot(entry, copy, &kr->plans[kr->nplans]))
		kr->pkeys[kr->nplans++] = row->key;
	return true;
}

static void
keeper_forget(NgReader *r)
{
	((KeeperRead *) r->arg)->nrows = 0;
	((KeeperRead *) r->arg)->nplans = 0;
}

static void
keeper_grow(NgReader *r)
{
	KeeperRead *kr = r->arg;

	if (kr->plans_full)
	{
		kr->plans_full = false;
		kr->maxplans *= 2;
		kr->plans = repalloc_huge(kr->plans,
								  sizeof(NgHistoryPlan) * (Size) kr->maxplans);
		kr->pkeys = repalloc_huge(kr->pkeys,
								  sizeof(NgKey) * (Size) kr->maxplans);
		return;
	}
	kr->maxrows *= 2;
	kr->rows = repalloc_huge(kr->rows, sizeof(KeyTotals) * (Size) kr->maxrows);
}

/*
 * keeper_locked
 *		Under the partition lock, the rows read: unless a reset has yet to
 *		hand over what it took from this partition (then read again, for a
 *		second at most: a mark still there after that is left by a reset
 *		that failed, and is not waited for again), take what departed from
 *		it with the rows.
 */
static bool
keeper_locked(NgReader *r, int p)
{
	KeeperRead *kr = r->arg;
	NgSharedPartition *part = &ng_shared->partitions[p];

	if (part->history_pending > keeper_stale_pending[p])
	{
		if (kr->waits++ < HISTORY_PENDING_WAITS)
			return false;
		/* a reset that failed between its two sections: wait no more */
		keeper_stale_pending[p] = part->history_pending;
	}
	else
		keeper_stale_pending[p] = part->history_pending;
	keeper_take(p, &kr->taken);
	return true;
}

/* append a statement's delta to list */
static void
keeper_append(KeyTotalsList *list, const NgKey *key, const NgHistoryTotals *t)
{
	if (list->n == list->max)
	{
		list->max *= 2;
		list->v = repalloc_huge(list->v, sizeof(KeyTotals) * (Size) list->max);
	}
	list->v[list->n].key = *key;
	list->v[list->n].t = *t;
	list->n++;
}

/*
 * keeper_read_all
 *		Read every partition.  Unless opening (the first window), append each
 *		statement's delta since the window opened to deltas; then make the
 *		rows read the new start.
 */
static void
keeper_read_all(bool opening, KeyTotalsList *deltas)
{
	KeeperRead	kr;
	NgReader	r;
	HASH_SEQ_STATUS seq;
	KeeperKey  *k;

	memset(&kr, 0, sizeof(kr));
	kr.maxrows = 256;
	kr.rows = palloc_extended(sizeof(KeyTotals) * (Size) kr.maxrows,
							  MCXT_ALLOC_HUGE);
	/* room for an entry's records, whatever plans_per_statement */
	kr.maxplans = 2048;
	kr.plans = palloc_extended(sizeof(NgHistoryPlan) * (Size) kr.maxplans,
							   MCXT_ALLOC_HUGE);
	kr.pkeys = palloc_extended(sizeof(NgKey) * (Size) kr.maxplans,
							   MCXT_ALLOC_HUGE);
	memset(&r, 0, sizeof(r));
	r.row = keeper_row;
	r.slot = keeper_slot;
	r.forget = keeper_forget;
	r.grow = keeper_grow;
	r.locked = keeper_locked;
	r.arg = &kr;
	keeper_reads++;
	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		kr.nrows = 0;
		kr.nplans = 0;
		kr.waits = 0;
		ng_read_partition_with(p, &r);
		keeper_absorb(&kr.taken, opening);
		ng_history_plans_read(kr.pkeys, kr.plans, kr.nplans, keeper_reads);
		for (int i = 0; i < kr.nrows; i++)
		{
			k = keeper_key(&kr.rows[i].key);
			if (!opening)
			{
				ng_history_totals_add(&k->acc, &kr.rows[i].t, 1);
				keeper_append(deltas, &k->key, &k->acc);
			}
			memset(&k->acc, 0, sizeof(k->acc));
			ng_history_totals_add(&k->acc, &kr.rows[i].t, -1);
			k->seen = keeper_reads;
		}
	}
	ng_read_reader_free(&r);
	pfree(kr.rows);
	pfree(kr.plans);
	pfree(kr.pkeys);

	/* statements gone from the table: what departed, less the start */
	hash_seq_init(&seq, keeper_keys);
	while ((k = hash_seq_search(&seq)) != NULL)
	{
		if (k->seen == keeper_reads)
			continue;
		if (!opening)
			keeper_append(deltas, &k->key, &k->acc);
		(void) hash_search(keeper_keys, &k->key, HASH_REMOVE, NULL);
	}
}

/* most exec time first; then by key, so that windows are deterministic */
static int
delta_cmp(const void *a, const void *b)
{
	const KeyTotals *x = a;
	const KeyTotals *y = b;

	if (x->t.c.total_exec_time != y->t.c.total_exec_time)
		return x->t.c.total_exec_time > y->t.c.total_exec_time ? -1 : 1;
	if (x->key.queryid != y->key.queryid)
		return x->key.queryid < y->key.queryid ? -1 : 1;
	if (x->key.userid != y->key.userid)
		return x->key.userid < y->key.userid ? -1 : 1;
	if (x->key.dbid != y->key.dbid)
		return x->key.dbid < y->key.dbid ? -1 : 1;
	return (int) x->key.toplevel - (int) y->key.toplevel;
}

/* a window row from a statement's delta */
static void
window_row(NgHistoryRow *row, const NgKey *key, const NgHistoryTotals *t)
{
	memset(row, 0, sizeof(NgHistoryRow));
	if (key != NULL)
		row->key = *key;
	row->others = (key == NULL);
	row->c = t->c;
	ng_history_percentiles(t, row->pct);
}

/* link a window (see ng_history_link) and open the next at end */
static void
keeper_link(dsa_pointer dp, Size size, TimestampTz end)
{
	LWLockAcquire(ng_history->lock, LW_EXCLUSIVE);
	ng_history_link(dp, size);
	ng_history->open_since = end;
	LWLockRelease(ng_history->lock);
}

/*
 * keeper_fill_rows
 *		w's statement rows: the deltas of the nkeep statements kept, the
 *		first of the n in d, and a row summing the rest if any.
 */
static void
keeper_fill_rows(NgHistoryWindow *w, const KeyTotalsList *d, int n, int nkeep)
{
	NgHistoryTotals others;

	for (int i = 0; i < nkeep; i++)
		window_row(&w->rows[i], &d->v[i].key, &d->v[i].t);
	if (n > nkeep)
	{
		memset(&others, 0, sizeof(others));
		for (int i = nkeep; i < n; i++)
			ng_history_totals_add(&others, &d->v[i].t, 1);
		window_row(&w->rows[nkeep], NULL, &others);
	}
}

/*
 * keeper_close
 *		Close the open window at end: keep its statements' deltas (the most
 *		exec time first, the rest summed in one row), its wait samples and
 *		the plan deltas of the statements it keeps, as a new window.
 */
static void
keeper_close(TimestampTz end)
{
	MemoryContext old = MemoryContextSwitchTo(keeper_cxt);
	KeyTotalsList d;
	NgKey	   *kept;
	NgHistoryWaitRow *waits;
	NgHistoryPlanRow *plans;
	int			n = 0,
				nkeep,
				nrows,
				nwaits,
				nplans;
	Size		size;
	dsa_pointer dp = InvalidDsaPointer;
	NgHistoryWindow *w;

	d.max = 256;
	d.n = 0;
	d.v = palloc_extended(sizeof(KeyTotals) * (Size) d.max, MCXT_ALLOC_HUGE);
	ng_history_waits_take();
	keeper_read_all(false, &d);
	for (int i = 0; i < d.n; i++)
		if (ng_history_totals_any(&d.v[i].t))
			d.v[n++] = d.v[i];
	qsort(d.v, n, sizeof(KeyTotals), delta_cmp);
	nkeep = Min(n, ng_history_statements);
	nrows = nkeep + (n > nkeep ? 1 : 0);
	kept = palloc(sizeof(NgKey) * (Size) Max(nkeep, 1));
	for (int i = 0; i < nkeep; i++)
		kept[i] = d.v[i].key;
	waits = ng_history_waits_rows(kept, nkeep, &nwaits);
	plans = ng_history_plans_close(keeper_reads, false, kept, nkeep, &nplans);
	size = NG_HISTORY_WINDOW_SIZE(nrows, nwaits, nplans);

	/* a window larger than history_memory allows is skipped, not kept */
	if (size <= (Size) ng_history_memory_kb * 1024)
		dp = ng_dsa_allocate(size, DSA_ALLOC_HUGE);
	if (DsaPointerIsValid(dp))
	{
		w = dsa_get_address(ng_area, dp);
		w->next = InvalidDsaPointer;
		w->start = ng_history->open_since;	/* written by the keeper only */
		w->end = end;
		w->nrows = nrows;
		w->nwaits = nwaits;
		w->nplans = nplans;
		keeper_fill_rows(w, &d, n, nkeep);
		memcpy(NG_HISTORY_WINDOW_WAITS(w), waits,
			   sizeof(NgHistoryWaitRow) * (Size) nwaits);
		memcpy(NG_HISTORY_WINDOW_PLANS(w), plans,
			   sizeof(NgHistoryPlanRow) * (Size) nplans);
	}
	keeper_link(dp, size, end);
	MemoryContextSwitchTo(old);
	pfree(d.v);
	pfree(kept);
	pfree(waits);
	pfree(plans);

	/* what an immediate stop would lose: the open window only */
	ng_history_trim();
	ng_history_save();
}

/* when the open window is due to close: the next multiple of the interval */
static TimestampTz
keeper_due(void)
{
	int64		iv = (int64) ng_history_interval_s * USECS_PER_SEC;

	return (ng_history->open_since / iv + 1) * iv;
}

/*
 * keeper_exit
 *		The keeper's exit: stop keeping what departs (what the lists hold
 *		then is freed by the next keeper when it opens its window), and let
 *		take_window wait for the next keeper.
 */
static void
keeper_exit(int code, Datum arg)
{
	pg_atomic_write_u32(&ng_history->capturing, 0);
	ng_history_waits_stop();
	pg_atomic_write_u32(&ng_history->keeper_procno, UINT32_MAX);
}

/*
 * ng_history_keeper_start
 *		Keeper, at start, before any saved statistics are restored.  The
 *		first keeper since shared memory was made restores the saved windows
 *		and keeps the window open since then (everything the table holds was
 *		counted in it; ng_history_keeper_restored takes out what the restore
 *		adds); a later one (the keeper was killed) opens a window now.
 */
void
ng_history_keeper_start(void)
{
	HASHCTL		ctl;
	KeyTotalsList unused = {0};
	int			nplans;
	bool		first = !ng_history->loaded;

	keeper_cxt = AllocSetContextCreate(TopMemoryContext,
									   "pg_stat_statements_ng history",
									   ALLOCSET_DEFAULT_SIZES);
	ctl.keysize = sizeof(NgKey);
	ctl.entrysize = sizeof(KeeperKey);
	ctl.hash = ng_key_htab_hash;
	ctl.match = ng_key_htab_match;
	ctl.hcxt = keeper_cxt;
	keeper_keys = hash_create("pg_stat_statements_ng history keys", 256, &ctl,
							  HASH_ELEM | HASH_FUNCTION | HASH_COMPARE |
							  HASH_CONTEXT);
	ng_history_plans_start(keeper_cxt);
	if (first)
		ng_history_load();
	ng_history->loaded = true;
	before_shmem_exit(keeper_exit, 0);
	pg_atomic_write_u32(&ng_history->capturing, 1);
	if (!first)
	{
		keeper_read_all(true, &unused);
		pfree(ng_history_plans_close(keeper_reads, true, NULL, 0, &nplans));
		LWLockAcquire(ng_history->lock, LW_EXCLUSIVE);
		ng_history->open_since = GetCurrentTimestamp();
		LWLockRelease(ng_history->lock);
	}
	ng_history_waits_open();
	/* requests made before this keeper ran are served by the first tick */
	keeper_started = true;
	pg_atomic_write_u32(&ng_history->keeper_procno, NG_MY_PROC_NUMBER());
}

/*
 * ng_history_keeper_restored
 *		Keeper, restoring the saved statistics: the table holds a saved row
 *		of key now (counters c, exec histogram h), counted before this run:
 *		take it out of the open window.
 */
void
ng_history_keeper_restored(const NgKey *key, const NgCounters *c,
						   NgHistView h)
{
	NgHistoryTotals *acc;

	if (keeper_keys == NULL)
		return;
	acc = &keeper_key(key)->acc;
	ng_history_totals_add_counters(acc, c, -1);
	ng_history_totals_add_hist(acc, h, -1);
}

/*
 * ng_history_keeper_tick
 *		Keeper, each time it wakes (at least every second): take what
 *		departed and the wait profile's new samples, close the window when
 *		it is due or asked for, drop the windows past retention or memory.
 */
void
ng_history_keeper_tick(void)
{
	uint64		requested;

	if (!keeper_started)
		return;
	keeper_drain();
	ng_history_waits_take();
	requested = pg_atomic_read_u64(&ng_history->requested);
	if (requested != pg_atomic_read_u64(&ng_history->closed) ||
		GetCurrentTimestamp() >= keeper_due())
	{
		keeper_close(GetCurrentTimestamp());
		pg_atomic_write_u64(&ng_history->closed, requested);
		ConditionVariableBroadcast(&ng_history->cv);
	}
	ng_history_trim();
}

/*
 * ng_history_keeper_shutdown
 *		Keeper, at a clean shutdown, once backends have folded: close the
 *		open window, so that a restart loses none of it (closing saves the
 *		windows).
 */
void
ng_history_keeper_shutdown(void)
{
	if (!keeper_started)
		return;
	keeper_close(GetCurrentTimestamp());
}
