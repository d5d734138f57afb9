/*-------------------------------------------------------------------------
 *
 * errors_sql.c
 *		The SQL function behind pg_stat_statements_ng_errors: failed
 *		executions by SQLSTATE, one row per (user, database, queryid,
 *		level, SQLSTATE), the SQLSTATEs past a statement's first
 *		NG_ERROR_SQLSTATES in one row whose sqlstate is NULL.
 *
 * Why a file of its own: the SQL layer of the SQLSTATE counts
 * (entry_errors.c is below the store, and calls nothing above it).
 *
 * Locking: each partition's blocks are copied by ng_entry_errors_copy
 * (the partition lock, shared, one partition at a time); tuples are formed
 * after it returns, with no lock held.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "entry_errors.h"
#include "funcs.h"

NG_FUNCTION_INFO(pg_stat_statements_ng_errors_1_2);

#define NG_ERRORS_COLS	7

/* put the rows of block e into rsinfo's tuplestore */
static void
errors_put(ReturnSetInfo *rsinfo, const NgEntryErrors *e, bool allowed)
{
	for (int i = 0; i <= NG_ERROR_SQLSTATES; i++)
	{
		const NgErrorCount *c = &e->counts[i];
		Datum		values[NG_ERRORS_COLS];
		bool		nulls[NG_ERRORS_COLS] = {0};

		if (c->errors == 0)
			continue;
		values[0] = ObjectIdGetDatum(e->key.userid);
		values[1] = ObjectIdGetDatum(e->key.dbid);
		if (allowed || e->key.userid == GetUserId())
			values[2] = Int64GetDatum((int64) e->key.queryid);
		else
			nulls[2] = true;
		values[3] = BoolGetDatum(e->key.toplevel);
		if (c->sqlstate != 0)
			values[4] = CStringGetTextDatum(unpack_sql_state(c->sqlstate));
		else
			nulls[4] = true;
		values[5] = Int64GetDatum(c->errors);
		values[6] = TimestampTzGetDatum(c->last_error_at);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * pg_stat_statements_ng_errors()
 *		Every statement's failed executions by SQLSTATE.  A user without
 *		pg_read_all_stats sees the queryid of its own rows only (as the
 *		statements view shows it).
 */
Datum
pg_stat_statements_ng_errors_1_2(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		allowed = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	int			room = 64;
	NgEntryErrors *buf;

	ng_check_loaded();
	InitMaterializedSRF(fcinfo, 0);
	buf = palloc(sizeof(NgEntryErrors) * room);
	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		int			n = ng_entry_errors_copy(p, buf, room);

		if (n > room)
		{
			/* more than there was room for: grow, and copy again */
			room = n * 2;
			buf = repalloc(buf, sizeof(NgEntryErrors) * room);
			p--;
			continue;
		}
		for (int i = 0; i < n; i++)
			errors_put(rsinfo, &buf[i], allowed);
	}
	pfree(buf);
	return (Datum) 0;
}
