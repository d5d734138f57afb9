/*-------------------------------------------------------------------------
 *
 * waits_sql.c
 *		The SQL functions behind pg_stat_statements_ng_waits, the wait
 *		profile, one row per (user, database, queryid, wait event), and
 *		pg_stat_statements_ng_activity, what each process runs now.
 *
 * Why a file of its own: the SQL layer of the wait profile (waits.c is
 * below the resets that call it, and calls nothing above).
 *
 * Locking: the rows are copied by ng_waits_snapshot (reset_lock shared,
 * rows by their change count); tuples are formed after it returns.  What
 * each process published (NgWaitCurrent) is copied by its change count,
 * its PgBackendStatus as core's readers do: no lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"
#include "utils/wait_event.h"

#include "funcs.h"
#include "waits.h"

NG_FUNCTION_INFO(pg_stat_statements_ng_waits_1_2);
NG_FUNCTION_INFO(pg_stat_statements_ng_activity_1_2);

#define NG_WAITS_COLS	7
#define NG_ACTIVITY_COLS	5
/* tries at a consistent copy of what a process published */
#define NG_ACTIVITY_TRIES	8

/*
 * pg_stat_statements_ng_waits()
 *		Every row with samples.  A user without pg_read_all_stats sees the
 *		queryid of its own rows only (as the statements view shows it).
 *		A process that waited on nothing shows as wait event type and name
 *		CPU.  est_time_ms: the samples' summed weights (waits_sampler.c).
 */
Datum
pg_stat_statements_ng_waits_1_2(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		allowed = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	NgWaitRow  *rows;
	int			n;

	ng_check_loaded();
	InitMaterializedSRF(fcinfo, 0);
	if (ng_waits == NULL)
		return (Datum) 0;
	rows = palloc(sizeof(NgWaitRow) * ng_waits->max);
	n = ng_waits_snapshot(rows);
	for (int i = 0; i < n; i++)
	{
		NgWaitRow  *r = &rows[i];
		Datum		values[NG_WAITS_COLS];
		bool		nulls[NG_WAITS_COLS] = {0};
		uint32		info = r->key.wait_event_info;
		const char *type = info == 0 ? "CPU" : pgstat_get_wait_event_type(info);
		const char *event = info == 0 ? "CPU" : pgstat_get_wait_event(info);

		values[0] = ObjectIdGetDatum(r->key.userid);
		values[1] = ObjectIdGetDatum(r->key.dbid);
		if (allowed || r->key.userid == GetUserId())
			values[2] = Int64GetDatum((int64) r->key.queryid);
		else
			nulls[2] = true;
		values[3] = type ? CStringGetTextDatum(type) : (Datum) 0;
		nulls[3] = (type == NULL);
		values[4] = event ? CStringGetTextDatum(event) : (Datum) 0;
		nulls[4] = (event == NULL);
		values[5] = Int64GetDatum((int64) r->samples);
		values[6] = Float8GetDatum((double) r->time_us / 1000.0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(rows);
	return (Datum) 0;
}

/*
 * pg_stat_statements_ng_activity()
 *		One row per process running a counted top-level statement now: as
 *		the wait sampler sees it, the statement it published while its
 *		PgBackendStatus says it is active in it.  planid is NULL while none
 *		is known (being planned, a utility statement, track_plans off).  A
 *		user without pg_read_all_stats sees the queryid and planid of its
 *		own statements only.
 */
Datum
pg_stat_statements_ng_activity_1_2(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		allowed = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);

	ng_check_loaded();
	InitMaterializedSRF(fcinfo, 0);
	if (ng_waits == NULL)
		return (Datum) 0;
	for (int p = 0; p < ng_waits->nprocs; p++)
	{
		volatile PGPROC *proc = &ProcGlobal->allProcs[p];
		NgWaitCurrent cur;
		Datum		values[NG_ACTIVITY_COLS];
		bool		nulls[NG_ACTIVITY_COLS] = {0};
		bool		mine;

		if (!ng_waits_read_current(p, &cur, NG_ACTIVITY_TRIES) ||
			proc->pid != cur.pid ||
			!ng_waits_statement_runs(&cur, NG_ACTIVITY_TRIES))
			continue;
		mine = allowed || cur.userid == GetUserId();
		values[0] = Int32GetDatum(cur.pid);
		values[1] = ObjectIdGetDatum(cur.userid);
		values[2] = ObjectIdGetDatum(cur.dbid);
		values[3] = Int64GetDatum((int64) cur.queryid);
		nulls[3] = !mine;
		values[4] = Int64GetDatum((int64) cur.planid);
		nulls[4] = !mine || cur.planid == 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
