/*-------------------------------------------------------------------------
 *
 * history.c
 *		The history's settings, its shared state, the arithmetic of its
 *		counts, and the list of closed windows (dropping the oldest).
 *
 * Why a file of its own: what the keeper (history_keeper.c), the capture
 * of what leaves the table (eviction, through ng_history_keep_evicted here;
 * resets, history_capture.c), the SQL functions and the file all share;
 * it calls nothing above the store, so eviction can call it.
 *
 * Locking: the windows' list (NgHistoryShared.first/last and the figures
 * beside them) is under NgHistoryShared.lock: exclusive to link, unlink or
 * count, shared to read.  A window is written whole before it is linked
 * and never changed after, so a reader holding the lock shared reads it in
 * place.  No partition lock is taken here; ng_history_keep_evicted runs
 * under one its caller holds.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "storage/shmem.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "history.h"
#include "qtext.h"
#include "store.h"

int			ng_history_interval_s = 600;
int			ng_history_memory_kb = 32 * 1024;
int			ng_history_retention_s = 7 * 24 * 3600;
int			ng_history_statements = 50;

NgHistoryShared *ng_history = NULL;

#define NG_HISTORY_SHMEM_NAME	NG_NAME " history"

/*
 * ng_history_define_gucs
 *		Define the history's settings (all reloadable).  Called from
 *		ng_define_gucs.
 */
void
ng_history_define_gucs(void)
{
	DefineCustomIntVariable("pg_stat_statements_ng.history_interval",
							"Sets the length of the history's time windows.",
							NULL,
							&ng_history_interval_s, 600, 10, 3600,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_stat_statements_ng.history_memory",
							"Sets the shared memory the history's windows may use.",
							"The oldest windows are dropped to stay within it; 0 keeps none.",
							&ng_history_memory_kb, 32 * 1024, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_stat_statements_ng.history_retention",
							"Sets how long the history keeps a window.",
							NULL,
							&ng_history_retention_s, 7 * 24 * 3600, 60,
							366 * 24 * 3600,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_stat_statements_ng.history_statements",
							"Sets how many statements each window keeps, by exec time.",
							"The others are summed in one row with queryid NULL.",
							&ng_history_statements, 50, 1, NG_HISTORY_STATEMENTS_MAX,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
}

Size
ng_history_shmem_size(void)
{
	return MAXALIGN(sizeof(NgHistoryShared));
}

/*
 * ng_history_request_shmem
 *		shmem_request_hook part: the shared state and its lock.
 */
void
ng_history_request_shmem(void)
{
	RequestAddinShmemSpace(ng_history_shmem_size());
	RequestNamedLWLockTranche(NG_HISTORY_SHMEM_NAME, 1);
}

/*
 * ng_history_init_shmem
 *		shmem_startup_hook part: create or find the shared state.  Caller
 *		holds AddinShmemInitLock.
 */
void
ng_history_init_shmem(void)
{
	bool		found;

	ng_history = ShmemInitStruct(NG_HISTORY_SHMEM_NAME,
								 ng_history_shmem_size(), &found);
	if (found)
		return;
	memset(ng_history, 0, sizeof(NgHistoryShared));
	ng_history->lock = &GetNamedLWLockTranche(NG_HISTORY_SHMEM_NAME)->lock;
	ng_history->first = ng_history->last = InvalidDsaPointer;

	/*
	 * The first window opens with shared memory (history_keeper.c): what
	 * departs is kept from now, unless no keeper is to run to take it.
	 */
	ng_history->open_since = GetCurrentTimestamp();
	pg_atomic_init_u32(&ng_history->capturing,
					   IsPostmasterEnvironment &&
					   pg_atomic_read_u32(&ng_shared->keeper_missing) == 0);
	pg_atomic_init_u32(&ng_history->keeper_procno, UINT32_MAX);
	pg_atomic_init_u64(&ng_history->requested, 0);
	pg_atomic_init_u64(&ng_history->closed, 0);
	ConditionVariableInit(&ng_history->cv);
}

/* ---- the arithmetic of counts ---- */

/*
 * ng_history_totals_add_counters
 *		t += sign * c, for the counters a window keeps.
 */
void
ng_history_totals_add_counters(NgHistoryTotals *t, const NgCounters *c,
							   int sign)
{
#define ADD_I(name, src) t->c.name += sign * (int64) c->src;
#define ADD_D(name, src) t->c.name += sign * c->src;
	NG_HISTORY_COUNTERS(ADD_I, ADD_D);
#undef ADD_I
#undef ADD_D
}

/*
 * ng_history_totals_add_hist
 *		t's exec histogram += sign * h's (sparse).
 */
void
ng_history_totals_add_hist(NgHistoryTotals *t, NgHistView h, int sign)
{
	for (int b = 0; b < NG_HIST_BUCKETS; b++)
	{
		if ((h.mask & ng_hist_group_bit(NG_EXEC, b)) == 0)
		{
			b += NG_HIST_GROUP_SIZE - 1 - b % NG_HIST_GROUP_SIZE;
			continue;
		}
		t->hist[b] += sign * (int64) ng_hist_count(h, NG_EXEC, b);
	}
}

/* dst += sign * src */
void
ng_history_totals_add(NgHistoryTotals *dst, const NgHistoryTotals *src,
					  int sign)
{
#define ADD_I(name, src_) dst->c.name += sign * src->c.name;
#define ADD_D(name, src_) dst->c.name += sign * src->c.name;
	NG_HISTORY_COUNTERS(ADD_I, ADD_D);
#undef ADD_I
#undef ADD_D
	for (int b = 0; b < NG_HIST_BUCKETS; b++)
		dst->hist[b] += sign * src->hist[b];
}

/* dst += src */
void
ng_history_counts_add(NgHistoryCounts *dst, const NgHistoryCounts *src)
{
#define ADD_I(name, src_) dst->name += src->name;
	NG_HISTORY_COUNTERS(ADD_I, ADD_I);
#undef ADD_I
}

/* does t hold anything */
bool
ng_history_totals_any(const NgHistoryTotals *t)
{
#define NONZERO(name, src) if (t->c.name != 0) return true;
	NG_HISTORY_COUNTERS(NONZERO, NONZERO);
#undef NONZERO
	for (int b = 0; b < NG_HIST_BUCKETS; b++)
		if (t->hist[b] != 0)
			return true;
	return false;
}

/*
 * ng_history_percentiles
 *		The exec p50, p95 and p99 of t's histogram (a window's deltas), NaN
 *		when it holds no sample.  A bucket that came out below zero (counts
 *		that left the table untracked) counts as empty.
 */
void
ng_history_percentiles(const NgHistoryTotals *t, double *pct)
{
	static const double fractions[NG_HISTORY_NPCT] = {0.5, 0.95, 0.99};
	uint64		groups[NG_HIST_BUCKETS];
	NgHistView	h;

	for (int b = 0; b < NG_HIST_BUCKETS; b++)
		groups[b] = (uint64) Max(t->hist[b], 0);
	h.mask = 0;
	for (int g = 0; g < NG_HIST_GROUPS; g++)
		h.mask |= ng_hist_group_bit(NG_EXEC, g * NG_HIST_GROUP_SIZE);
	h.groups = groups;
	if (!ng_hist_percentiles(h, NG_EXEC, fractions, NG_HISTORY_NPCT, pct))
		for (int i = 0; i < NG_HISTORY_NPCT; i++)
			pct[i] = get_float8_nan();
}

/*
 * ng_history_keep_evicted
 *		Eviction of an unlinked entry: while the keeper keeps what departs,
 *		free its text and keep the entry (counters and histograms) in the
 *		partition's history_evicted list for the keeper, which frees it;
 *		returns true.  Returns false (the caller frees the entry) when the
 *		keeper does not.  Caller holds the partition lock exclusively.
 */
bool
ng_history_keep_evicted(NgSharedPartition *part, NgSharedEntry *entry,
						dsa_pointer dp)
{
	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	if (ng_history == NULL || pg_atomic_read_u32(&ng_history->capturing) == 0)
		return false;
	if (DsaPointerIsValid(entry->qtext))
		ng_qtext_free(entry->qtext, entry->text_len);
	entry->qtext = InvalidDsaPointer;
	entry->text_len = 0;
	entry->next = part->history_evicted;
	part->history_evicted = dp;
	return true;
}

/*
 * history_unbound_plan
 *		Add an unbound fold's calls, all of plan planid, to the plans of its
 *		key's place u; false if u keeps NG_HISTORY_UNBOUND_PLANS others.
 */
static bool
history_unbound_plan(NgHistoryUnbound *u, uint64 planid,
					 const NgCounters *counts)
{
	NgHistoryPlanCounts add = {
		.calls = counts->calls[NG_EXEC],
		.total_exec_time = counts->total_time[NG_EXEC],
		.rows = counts->rows,
	};
	int			j;

	for (j = 0; j < u->nplans; j++)
		if (u->plans[j].planid == planid)
			break;
	if (j == NG_HISTORY_UNBOUND_PLANS)
		return false;
	if (j == u->nplans)
	{
		memset(&u->plans[j], 0, sizeof(NgHistoryPlan));
		u->plans[j].planid = planid;
		u->nplans++;
	}
	ng_history_plan_add(&u->plans[j].c, &add, 1);
	return true;
}

/*
 * ng_history_keep_unbound
 *		The fold of an unbound slot of partition p whose statement has no
 *		entry: while the keeper keeps what departs, keep its counts (key,
 *		counts; not their durations) for the keeper, in the partition's
 *		fixed list, added to the key's place if it has one, with its calls
 *		counted for their plan (planid; 0: none); counted as lost when the
 *		list, or the place's plans, are full.  Caller holds the partition
 *		lock exclusively.
 */
void
ng_history_keep_unbound(int p, const NgKey *key, const NgCounters *counts,
						uint64 planid)
{
	NgHistoryUnboundList *list;
	NgHistoryTotals t;
	int			i;

	Assert(LWLockHeldByMeInMode(ng_shared->partitions[p].lock, LW_EXCLUSIVE));
	if (ng_history == NULL || pg_atomic_read_u32(&ng_history->capturing) == 0)
		return;
	list = &ng_history->unbound[p];
	for (i = 0; i < list->n; i++)
		if (ng_key_equal(&list->v[i].key, key))
			break;
	if (i == NG_HISTORY_UNBOUND_KEPT)
	{
		list->lost++;
		return;
	}
	if (i == list->n)
	{
		memset(&list->v[i], 0, sizeof(NgHistoryUnbound));
		list->v[i].key = *key;
		list->n++;
	}
	memset(&t.c, 0, sizeof(t.c));
	ng_history_totals_add_counters(&t, counts, 1);
	ng_history_counts_add(&list->v[i].c, &t.c);
	if (planid != 0 && counts->calls[NG_EXEC] > 0 &&
		!history_unbound_plan(&list->v[i], planid, counts))
		list->lost++;
}

/* ---- the list of windows ---- */

/* unlink and free the oldest window; caller holds the lock exclusively */
static void
history_drop_oldest(void)
{
	dsa_pointer dp = ng_history->first;
	NgHistoryWindow *w = dsa_get_address(ng_area, dp);

	ng_history->first = w->next;
	if (!DsaPointerIsValid(ng_history->first))
		ng_history->last = InvalidDsaPointer;
	ng_history->nwindows--;
	ng_history->bytes -= NG_HISTORY_WINDOW_SIZE(w->nrows, w->nwaits, w->nplans);
	dsa_free(ng_area, dp);
}

/*
 * ng_history_link
 *		Link a window (dp, of size bytes; InvalidDsaPointer: there was no
 *		memory for it, counted as skipped) as the newest.  Caller holds the
 *		history lock exclusively.
 */
void
ng_history_link(dsa_pointer dp, Size size)
{
	Assert(LWLockHeldByMeInMode(ng_history->lock, LW_EXCLUSIVE));
	if (!DsaPointerIsValid(dp))
	{
		ng_history->windows_skipped++;
		return;
	}
	if (DsaPointerIsValid(ng_history->last))
		((NgHistoryWindow *) dsa_get_address(ng_area, ng_history->last))->next = dp;
	else
		ng_history->first = dp;
	ng_history->last = dp;
	ng_history->nwindows++;
	ng_history->bytes += size;
}

/*
 * ng_history_trim
 *		Drop the oldest windows while they are older than the retention or
 *		the windows use more than history_memory, counting them.  Takes the
 *		lock.
 */
void
ng_history_trim(void)
{
	TimestampTz horizon = GetCurrentTimestamp() -
		(TimestampTz) ng_history_retention_s * USECS_PER_SEC;

	LWLockAcquire(ng_history->lock, LW_EXCLUSIVE);
	while (DsaPointerIsValid(ng_history->first))
	{
		NgHistoryWindow *w = dsa_get_address(ng_area, ng_history->first);

		if (w->end >= horizon &&
			ng_history->bytes <= (int64) ng_history_memory_kb * 1024)
			break;
		history_drop_oldest();
		ng_history->windows_dropped++;
	}
	LWLockRelease(ng_history->lock);
}

/*
 * ng_history_free_all
 *		pg_stat_statements_ng_history_reset: drop every window, uncounted.
 *		Takes the lock.
 */
void
ng_history_free_all(void)
{
	LWLockAcquire(ng_history->lock, LW_EXCLUSIVE);
	while (DsaPointerIsValid(ng_history->first))
		history_drop_oldest();
	LWLockRelease(ng_history->lock);
}
