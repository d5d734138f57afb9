/*-------------------------------------------------------------------------
 *
 * history_funcs.c
 *		The history's SQL functions: its windows' rows, wait rows and plan
 *		rows, closing the open window now (take_window), clearing the windows, and
 *		its figures for the info view.
 *
 * Why a file of its own: the history's SQL interface, apart from the
 * statements' (funcs.c), and of one API version (1.2).
 *
 * Locks: the windows are copied under the history lock, shared, and their
 * tuples formed after it is released; take_window waits for the keeper on
 * a condition variable, holding nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/wait_event.h"

#include "funcs.h"
#include "history.h"

/* how long take_window waits for the keeper */
#define NG_TAKE_WINDOW_WAIT_MS	60000

/* window_start, window_end, userid, dbid, queryid, toplevel; the counters;
 * the percentiles */
#define NG_HISTORY_COLS	(6 + NG_HISTORY_NCOUNTERS + NG_HISTORY_NPCT)
#define NG_HISTORY_INFO_COLS	6
/* window_start, window_end, userid, dbid, queryid, wait_event_type,
 * wait_event, samples, est_time_ms */
#define NG_HISTORY_WAITS_COLS	9
/* window_start, window_end, userid, dbid, queryid, toplevel, planid,
 * calls, total_exec_time, rows */
#define NG_HISTORY_PLANS_COLS	10

NG_FUNCTION_INFO(pg_stat_statements_ng_history_1_2);
NG_FUNCTION_INFO(pg_stat_statements_ng_take_window_1_2);
NG_FUNCTION_INFO(pg_stat_statements_ng_history_reset_1_2);
NG_FUNCTION_INFO(pg_stat_statements_ng_history_info_1_2);
NG_FUNCTION_INFO(pg_stat_statements_ng_history_waits_1_2);
NG_FUNCTION_INFO(pg_stat_statements_ng_history_plans_1_2);

/* copy every window into backend memory, under the history lock */
static List *
history_copy_windows(void)
{
	List	   *windows = NIL;

	LWLockAcquire(ng_history->lock, LW_SHARED);
	for (dsa_pointer dp = ng_history->first; DsaPointerIsValid(dp);)
	{
		NgHistoryWindow *w = dsa_get_address(ng_area, dp);
		Size		size = NG_HISTORY_WINDOW_SIZE(w->nrows, w->nwaits,
												  w->nplans);
		NgHistoryWindow *copy = palloc_extended(size, MCXT_ALLOC_HUGE);

		memcpy(copy, w, size);
		windows = lappend(windows, copy);
		dp = w->next;
	}
	LWLockRelease(ng_history->lock);
	return windows;
}

/* one row's values */
static void
history_row_values(const NgHistoryWindow *w, const NgHistoryRow *row,
				   Datum *values, bool *nulls)
{
	int			i = 0;

	memset(nulls, 0, sizeof(bool) * NG_HISTORY_COLS);
	values[i++] = TimestampTzGetDatum(w->start);
	values[i++] = TimestampTzGetDatum(w->end);
	values[i] = ObjectIdGetDatum(row->key.userid);
	nulls[i++] = row->others;
	values[i] = ObjectIdGetDatum(row->key.dbid);
	nulls[i++] = row->others;
	values[i] = Int64GetDatum((int64) row->key.queryid);
	nulls[i++] = row->others;
	values[i] = BoolGetDatum(row->key.toplevel);
	nulls[i++] = row->others;
#define COL_I(name, src) values[i++] = Int64GetDatum(row->c.name);
#define COL_D(name, src) values[i++] = Float8GetDatum(row->c.name);
	NG_HISTORY_COUNTERS(COL_I, COL_D);
#undef COL_I
#undef COL_D
	for (int p = 0; p < NG_HISTORY_NPCT; p++)
	{
		values[i] = Float8GetDatum(row->pct[p]);
		nulls[i++] = isnan(row->pct[p]);
	}
	Assert(i == NG_HISTORY_COLS);
}

/*
 * pg_stat_statements_ng_history()
 *		Every row of every closed window, oldest window first.
 */
Datum
pg_stat_statements_ng_history_1_2(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *windows;
	ListCell   *lc;
	Datum		values[NG_HISTORY_COLS];
	bool		nulls[NG_HISTORY_COLS];

	ng_check_loaded();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != NG_HISTORY_COLS)
		elog(ERROR, "incorrect number of output arguments");
	windows = history_copy_windows();
	foreach(lc, windows)
	{
		NgHistoryWindow *w = lfirst(lc);

		for (int r = 0; r < w->nrows; r++)
		{
			history_row_values(w, &w->rows[r], values, nulls);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
		}
	}
	list_free_deep(windows);
	return (Datum) 0;
}

/* one wait row's values */
static void
history_wait_values(const NgHistoryWindow *w, const NgHistoryWaitRow *row,
					Datum *values, bool *nulls)
{
	uint32		info = row->key.wait_event_info;
	const char *type = info == 0 ? "CPU" : pgstat_get_wait_event_type(info);
	const char *event = info == 0 ? "CPU" : pgstat_get_wait_event(info);

	memset(nulls, 0, sizeof(bool) * NG_HISTORY_WAITS_COLS);
	values[0] = TimestampTzGetDatum(w->start);
	values[1] = TimestampTzGetDatum(w->end);
	values[2] = ObjectIdGetDatum(row->key.userid);
	values[3] = ObjectIdGetDatum(row->key.dbid);
	values[4] = Int64GetDatum((int64) row->key.queryid);
	nulls[2] = nulls[3] = nulls[4] = row->others;
	values[5] = type ? CStringGetTextDatum(type) : (Datum) 0;
	nulls[5] = (type == NULL);
	values[6] = event ? CStringGetTextDatum(event) : (Datum) 0;
	nulls[6] = (event == NULL);
	values[7] = Int64GetDatum((int64) row->samples);
	values[8] = Float8GetDatum((double) row->time_us / 1000.0);
}

/*
 * pg_stat_statements_ng_history_waits()
 *		Every wait row of every closed window, oldest window first: per
 *		statement the window keeps and wait event, its samples and their
 *		estimated time (as pg_stat_statements_ng_waits); the others'
 *		samples per wait event with userid, dbid and queryid NULL.
 */
Datum
pg_stat_statements_ng_history_waits_1_2(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *windows;
	ListCell   *lc;
	Datum		values[NG_HISTORY_WAITS_COLS];
	bool		nulls[NG_HISTORY_WAITS_COLS];

	ng_check_loaded();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != NG_HISTORY_WAITS_COLS)
		elog(ERROR, "incorrect number of output arguments");
	windows = history_copy_windows();
	foreach(lc, windows)
	{
		NgHistoryWindow *w = lfirst(lc);
		NgHistoryWaitRow *waits = NG_HISTORY_WINDOW_WAITS(w);

		for (int r = 0; r < w->nwaits; r++)
		{
			history_wait_values(w, &waits[r], values, nulls);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
		}
	}
	list_free_deep(windows);
	return (Datum) 0;
}

/*
 * history_plan_values
 *		One plan row's values; its queryid and planid only to a reader
 *		allowed to see them (its user, or pg_read_all_stats), as in
 *		pg_stat_statements_ng_plans.
 */
static void
history_plan_values(const NgHistoryWindow *w, const NgHistoryPlanRow *row,
					bool allowed, Datum *values, bool *nulls)
{
	bool		shown = allowed || row->key.userid == GetUserId();

	memset(nulls, 0, sizeof(bool) * NG_HISTORY_PLANS_COLS);
	values[0] = TimestampTzGetDatum(w->start);
	values[1] = TimestampTzGetDatum(w->end);
	values[2] = ObjectIdGetDatum(row->key.userid);
	values[3] = ObjectIdGetDatum(row->key.dbid);
	values[4] = Int64GetDatum((int64) row->key.queryid);
	nulls[4] = !shown;
	values[5] = BoolGetDatum(row->key.toplevel);
	values[6] = Int64GetDatum((int64) row->p.planid);
	nulls[6] = row->p.other || !shown;
	values[7] = Int64GetDatum(row->p.c.calls);
	values[8] = Float8GetDatum(row->p.c.total_exec_time);
	values[9] = Int64GetDatum(row->p.c.rows);
}

/*
 * pg_stat_statements_ng_history_plans()
 *		Every plan row of every closed window, oldest window first: per
 *		statement the window keeps (as its rows in the history) and plan
 *		executed in the window, the plan's calls, exec time and rows in it;
 *		planid NULL for the plans counted together ("other").  Rows of
 *		other users show NULL queryid and planid unless the reader has
 *		pg_read_all_stats.
 */
Datum
pg_stat_statements_ng_history_plans_1_2(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *windows;
	ListCell   *lc;
	Datum		values[NG_HISTORY_PLANS_COLS];
	bool		nulls[NG_HISTORY_PLANS_COLS];
	bool		allowed;

	ng_check_loaded();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != NG_HISTORY_PLANS_COLS)
		elog(ERROR, "incorrect number of output arguments");
	allowed = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	windows = history_copy_windows();
	foreach(lc, windows)
	{
		NgHistoryWindow *w = lfirst(lc);
		NgHistoryPlanRow *plans = NG_HISTORY_WINDOW_PLANS(w);

		for (int r = 0; r < w->nplans; r++)
		{
			history_plan_values(w, &plans[r], allowed, values, nulls);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
		}
	}
	list_free_deep(windows);
	return (Datum) 0;
}

/*
 * pg_stat_statements_ng_take_window()
 *		Ask the keeper to close the open window now, and wait until it has
 *		(a minute at most: a keeper starting or restarting is waited for).
 *		Superuser only (also revoked from PUBLIC in SQL).
 */
Datum
pg_stat_statements_ng_take_window_1_2(PG_FUNCTION_ARGS)
{
	uint64		want;
	uint32		procno;
	TimestampTz start = GetCurrentTimestamp();

	ng_check_loaded();
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to take a history window"),
				 errhint("Only superusers can close the history's window.")));
	want = pg_atomic_add_fetch_u64(&ng_history->requested, 1);
	ConditionVariablePrepareToSleep(&ng_history->cv);
	while (pg_atomic_read_u64(&ng_history->closed) < want)
	{
		/* wake the keeper; none (starting, restarting): wait for one */
		procno = pg_atomic_read_u32(&ng_history->keeper_procno);
		if (procno != UINT32_MAX)
			SetLatch(&GetPGProcByNumber(procno)->procLatch);
		if (TimestampDifferenceExceeds(start, GetCurrentTimestamp(),
									   NG_TAKE_WINDOW_WAIT_MS))
		{
			ConditionVariableCancelSleep();
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the pg_stat_statements_ng keeper did not close the window within %d s",
							NG_TAKE_WINDOW_WAIT_MS / 1000),
					 errhint("The keeper is a background worker started with the server: see the server log.")));
		}
		(void) ConditionVariableTimedSleep(&ng_history->cv, 100,
										   PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	PG_RETURN_VOID();
}

/*
 * pg_stat_statements_ng_history_reset()
 *		Drop every closed window; returns the time.  The open window, the
 *		statements' statistics and the figures are left alone.
 */
Datum
pg_stat_statements_ng_history_reset_1_2(PG_FUNCTION_ARGS)
{
	ng_check_loaded();
	ng_history_free_all();
	PG_RETURN_TIMESTAMPTZ(GetCurrentTimestamp());
}

/*
 * pg_stat_statements_ng_history_info()
 *		The history's figures, for the info view: windows kept, their
 *		memory, windows dropped and skipped, departed counts lost, and the
 *		start of the open window.
 */
Datum
pg_stat_statements_ng_history_info_1_2(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[NG_HISTORY_INFO_COLS];
	bool		nulls[NG_HISTORY_INFO_COLS];
	TimestampTz open_since;

	ng_check_loaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != NG_HISTORY_INFO_COLS)
		elog(ERROR, "incorrect number of output arguments");
	memset(nulls, 0, sizeof(nulls));
	LWLockAcquire(ng_history->lock, LW_SHARED);
	values[0] = Int64GetDatum(ng_history->nwindows);
	values[1] = Int64GetDatum(ng_history->bytes);
	values[2] = Int64GetDatum(ng_history->windows_dropped);
	values[3] = Int64GetDatum(ng_history->windows_skipped);
	values[4] = Int64GetDatum(ng_history->counts_lost);
	open_since = ng_history->open_since;
	LWLockRelease(ng_history->lock);
	values[5] = TimestampTzGetDatum(open_since);
	nulls[5] = (open_since == 0);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
