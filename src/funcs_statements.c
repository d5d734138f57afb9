/*-------------------------------------------------------------------------
 *
 * funcs_statements.c
 *		The statement rows: pg_stat_statements_ng(), changed_since(), and
 *		the drop-in's pg_stat_statements() in every API shape.
 *
 * Why a file of its own: the shape of each API version is a contract of its
 * own (a released shape never changes), apart from the other SQL functions
 * (funcs.c).
 *
 * Locks: none of its own.  Rows are collected partition by partition by
 * reader.c, which takes and releases each partition lock in shared mode;
 * they are emitted here, outside any lock, and texts converted to the
 * database encoding (textconv.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "pg_stat_statements_ng.h"

PG_FUNCTION_INFO_V1(pg_stat_statements_ng_1_0);
PG_FUNCTION_INFO_V1(pg_stat_statements_ng_changed_since_1_0);

static double
stddev_of(const NgCounters *c, int kind)
{
	if (c->calls[kind] > 1)
		return sqrt(c->sum_var_time[kind] / c->calls[kind]);
	return 0.0;
}

/* Output columns of each API version */
static int
api_columns(NgApi api)
{
	switch (api)
	{
		case NG_API_PGSS_1_0:
			return 14;
		case NG_API_PGSS_1_1:
			return 18;
		case NG_API_PGSS_1_2:
			return 19;
		case NG_API_PGSS_1_3:
			return 23;
		case NG_API_PGSS_1_8:
			return 32;
		case NG_API_PGSS_1_9:
			return 33;
		case NG_API_PGSS_1_10:
			return 43;
		case NG_API_PGSS_1_11:
			return 49;
		case NG_API_PGSS_1_12:
			return 52;
		case NG_API_NG_1_0:
			return 64;
	}
	return -1;					/* keep compiler quiet */
}

#define NG_MAX_COLS		65		/* changed_since: generation + 64 */

/*
 * emit_times
 *		The calls and times of each kind: planning from 1.8 on, and before
 *		1.3 calls and total time only.
 */
static void
emit_times(Datum *values, int *i, const NgCounters *c, NgApi api)
{
	for (int kind = 0; kind < NG_NUM_KINDS; kind++)
	{
		bool		have_minmax = c->minmax_calls[kind] > 0;

		/* before 1.8 there were no planning columns */
		if (kind == NG_PLAN && api < NG_API_PGSS_1_8)
			continue;
		values[(*i)++] = Int64GetDatumFast(c->calls[kind]);
		values[(*i)++] = Float8GetDatumFast(c->total_time[kind]);
		/* before 1.3, calls and total time only */
		if (api < NG_API_PGSS_1_3)
			continue;
		values[(*i)++] = Float8GetDatumFast(have_minmax ? c->min_time[kind] : 0.0);
		values[(*i)++] = Float8GetDatumFast(have_minmax ? c->max_time[kind] : 0.0);
		values[(*i)++] = Float8GetDatumFast(c->calls[kind] > 0 ? c->mean_time[kind] : 0.0);
		values[(*i)++] = Float8GetDatumFast(stddev_of(c, kind));
	}
}

/*
 * emit_blocks
 *		Rows, block counts and I/O times (1.1 added the dirtied blocks and
 *		I/O times; 1.11 renamed blk_*_time to shared_blk_*_time, same
 *		values, and added the local ones).
 */
static void
emit_blocks(Datum *values, bool *nulls, int *i, const NgCounters *c,
			NgApi api)
{
	values[(*i)++] = Int64GetDatumFast(c->rows);
	values[(*i)++] = Int64GetDatumFast(c->shared_blks_hit);
	values[(*i)++] = Int64GetDatumFast(c->shared_blks_read);
	if (api >= NG_API_PGSS_1_1)
		values[(*i)++] = Int64GetDatumFast(c->shared_blks_dirtied);
	values[(*i)++] = Int64GetDatumFast(c->shared_blks_written);
	values[(*i)++] = Int64GetDatumFast(c->local_blks_hit);
	values[(*i)++] = Int64GetDatumFast(c->local_blks_read);
	if (api >= NG_API_PGSS_1_1)
		values[(*i)++] = Int64GetDatumFast(c->local_blks_dirtied);
	values[(*i)++] = Int64GetDatumFast(c->local_blks_written);
	values[(*i)++] = Int64GetDatumFast(c->temp_blks_read);
	values[(*i)++] = Int64GetDatumFast(c->temp_blks_written);
	if (api >= NG_API_PGSS_1_1)
	{
		values[(*i)++] = Float8GetDatumFast(c->shared_blk_read_time);
		values[(*i)++] = Float8GetDatumFast(c->shared_blk_write_time);
	}
	if (api >= NG_API_PGSS_1_11)
	{
		values[*i] = Float8GetDatumFast(c->local_blk_read_time);
		nulls[(*i)++] = !NG_HAVE_LOCAL_BLK_TIME;
		values[*i] = Float8GetDatumFast(c->local_blk_write_time);
		nulls[(*i)++] = !NG_HAVE_LOCAL_BLK_TIME;
	}
	if (api >= NG_API_PGSS_1_10)
	{
		values[(*i)++] = Float8GetDatumFast(c->temp_blk_read_time);
		values[(*i)++] = Float8GetDatumFast(c->temp_blk_write_time);
	}
}

/*
 * emit_wal_jit
 *		WAL (1.8), wal_buffers_full (1.12), JIT (1.10, deform 1.11), parallel
 *		workers (1.12).
 */
static void
emit_wal_jit(Datum *values, bool *nulls, int *i, const NgCounters *c,
			 NgApi api)
{
	if (api >= NG_API_PGSS_1_8)
	{
		char		buf[32];

		values[(*i)++] = Int64GetDatumFast(c->wal_records);
		values[(*i)++] = Int64GetDatumFast(c->wal_fpi);
		snprintf(buf, sizeof(buf), UINT64_FORMAT, c->wal_bytes);
		values[(*i)++] = DirectFunctionCall3(numeric_in,
											 CStringGetDatum(buf),
											 ObjectIdGetDatum(0),
											 Int32GetDatum(-1));
	}
	if (api >= NG_API_PGSS_1_12)
	{
		values[*i] = Int64GetDatumFast(c->wal_buffers_full);
		nulls[(*i)++] = !NG_HAVE_WAL_BUFFERS_FULL;
	}
	if (api >= NG_API_PGSS_1_10)
	{
		values[(*i)++] = Int64GetDatumFast(c->jit_functions);
		values[(*i)++] = Float8GetDatumFast(c->jit_generation_time);
		values[(*i)++] = Int64GetDatumFast(c->jit_inlining_count);
		values[(*i)++] = Float8GetDatumFast(c->jit_inlining_time);
		values[(*i)++] = Int64GetDatumFast(c->jit_optimization_count);
		values[(*i)++] = Float8GetDatumFast(c->jit_optimization_time);
		values[(*i)++] = Int64GetDatumFast(c->jit_emission_count);
		values[(*i)++] = Float8GetDatumFast(c->jit_emission_time);
	}
	if (api >= NG_API_PGSS_1_11)
	{
		values[*i] = Int64GetDatumFast(c->jit_deform_count);
		nulls[(*i)++] = !NG_HAVE_JIT_DEFORM;
		values[*i] = Float8GetDatumFast(c->jit_deform_time);
		nulls[(*i)++] = !NG_HAVE_JIT_DEFORM;
	}
	if (api >= NG_API_PGSS_1_12)
	{
		values[*i] = Int64GetDatumFast(c->parallel_workers_to_launch);
		nulls[(*i)++] = !NG_HAVE_PARALLEL_WORKERS;
		values[*i] = Int64GetDatumFast(c->parallel_workers_launched);
		nulls[(*i)++] = !NG_HAVE_PARALLEL_WORKERS;
	}
}

/*
 * emit_ours
 *		The columns of our own API alone: failed executions, what collectors
 *		need, and tail latency from the histograms.
 */
static void
emit_ours(Datum *values, bool *nulls, int *i, const NgRow *row)
{
	const NgCounters *c = &row->counters;

	values[(*i)++] = Int64GetDatumFast(c->failed_errors);
	values[(*i)++] = Int64GetDatumFast(c->failed_cancels);
	values[(*i)++] = Int64GetDatumFast(c->failed_timeouts);
	values[(*i)++] = Float8GetDatumFast(c->failed_time);
	values[*i] = TimestampTzGetDatum(c->last_executed_at);
	nulls[(*i)++] = (c->last_executed_at == 0);
	values[*i] = TimestampTzGetDatum(row->text_stored_at);
	nulls[(*i)++] = (row->text_stored_at == 0);

	/* tail latency, from the histograms */
	for (int kind = NG_EXEC; kind >= NG_PLAN; kind--)
	{
		static const double fractions[] = {0.50, 0.95, 0.99};
		double		ms[lengthof(fractions)];
		bool		any = ng_hist_percentiles(c, kind, fractions,
											  lengthof(fractions), ms);

		for (int f = 0; f < lengthof(fractions); f++)
		{
			values[*i] = any ? Float8GetDatumFast(ms[f]) : (Datum) 0;
			nulls[(*i)++] = !any;
		}
	}
}

/*
 * emit_row
 *		Turn a row into a tuple of the given API version's shape.  Each
 *		version adds columns to the one before (1.1 the dirtied blocks and
 *		I/O times, 1.2 queryid, 1.3 min/max/mean/stddev; 1.11 renamed
 *		blk_*_time to shared_blk_*_time, same values); our own 1.0 is
 *		pg_stat_statements 1.12's shape.  Columns this major cannot fill are
 *		NULL.
 */
static void
emit_row(ReturnSetInfo *rsinfo, const NgRow *row, NgApi api, bool showtext,
		 bool allowed, uint64 generation)
{
	Datum		values[NG_MAX_COLS];
	bool		nulls[NG_MAX_COLS];
	int			i = 0;
	bool		visible = allowed || row->key.userid == GetUserId();

	memset(values, 0, sizeof(values));
	memset(nulls, 0, sizeof(nulls));

	/* changed_since puts the new generation first */
	if (generation > 0)
		values[i++] = Int64GetDatumFast((int64) generation);

	values[i++] = ObjectIdGetDatum(row->key.userid);
	values[i++] = ObjectIdGetDatum(row->key.dbid);
	if (api >= NG_API_PGSS_1_9)
		values[i++] = BoolGetDatum(row->key.toplevel);
	if (api >= NG_API_PGSS_1_2)
	{
		if (visible)
			values[i++] = Int64GetDatumFast((int64) row->key.queryid);
		else
			nulls[i++] = true;
	}

	if (!visible)
		values[i++] = CStringGetTextDatum("<insufficient privilege>");
	else if (showtext && row->qtext != NULL)
	{
		char	   *enc = ng_text_for_reader(row->qtext, row->qtext_len,
											 row->encoding);

		values[i++] = CStringGetTextDatum(enc);
		if (enc != row->qtext)
			pfree(enc);
	}
	else
		nulls[i++] = true;

	emit_times(values, &i, &row->counters, api);
	emit_blocks(values, nulls, &i, &row->counters, api);
	emit_wal_jit(values, nulls, &i, &row->counters, api);
	if (api >= NG_API_PGSS_1_11)
	{
		values[i++] = TimestampTzGetDatum(row->stats_since);
		values[i++] = TimestampTzGetDatum(row->minmax_stats_since);
	}
	if (api >= NG_API_NG_1_0)
		emit_ours(values, nulls, &i, row);
	Assert(i == api_columns(api) + (generation > 0 ? 1 : 0));

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * ng_sql_statements
 *		The body of every SQL function that lists statements: our own and
 *		the drop-in's, one per API version.  Emits the rows of all
 *		partitions, built by reader.c, in the shape of api.
 */
Datum
ng_sql_statements(FunctionCallInfo fcinfo, NgApi api, bool showtext)
{
	return ng_sql_statements_since(fcinfo, api, showtext, 0, 0);
}

/*
 * ng_sql_statements_since
 *		As ng_sql_statements, for the rows whose counts changed in or after
 *		generation since, with generation (if > 0) as a first column.
 */
Datum
ng_sql_statements_since(FunctionCallInfo fcinfo, NgApi api, bool showtext,
						int64 since, uint64 generation)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		allowed = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);

	ng_check_loaded();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != api_columns(api) + (generation > 0 ? 1 : 0))
		elog(ERROR, "incorrect number of output arguments");

	if (NG_DEBUG_FAULT(NG_FAULT_STALL_READ))
	{
		/* a reader stopped while it holds partition locks (tests) */
		for (int p = 0; p < NG_NUM_PARTITIONS; p++)
			LWLockAcquire(ng_shared->partitions[p].lock, LW_SHARED);
		ng_debug_stall();
		for (int p = NG_NUM_PARTITIONS - 1; p >= 0; p--)
			LWLockRelease(ng_shared->partitions[p].lock);
	}

	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		HTAB	   *rows = ng_read_rows_create();
		HASH_SEQ_STATUS seq;
		NgRow	   *row;

		ng_read_partition(p, rows, showtext);
		hash_seq_init(&seq, rows);
		while ((row = hash_seq_search(&seq)) != NULL)
		{
			const NgCounters *c = &row->counters;
			int64		ran = c->calls[NG_EXEC];

			/*
			 * An entry made when its statement was parsed, and not yet run
			 * (or planned, where plans are shown; or failed, where failures
			 * are shown), is not shown, as in pg_stat_statements: it exists
			 * only to hold the text.
			 */
			if (api >= NG_API_PGSS_1_8)
				ran += c->calls[NG_PLAN];
			if (api >= NG_API_NG_1_0)
				ran += c->failed_errors + c->failed_cancels + c->failed_timeouts;
			if (ran > 0 && (int64) c->changed_generation >= since)
				emit_row(rsinfo, row, api, showtext, allowed, generation);
			if (row->qtext)
				pfree(row->qtext);
		}
		hash_destroy(rows);
	}
	return (Datum) 0;
}

/*
 * pg_stat_statements_ng(showtext boolean)
 *		Every statement's statistics: shared entries plus what backends
 *		still hold in their slots.
 */
Datum
pg_stat_statements_ng_1_0(PG_FUNCTION_ARGS)
{
	return ng_sql_statements(fcinfo, NG_API_NG_1_0, PG_GETARG_BOOL(0));
}

/*
 * pg_stat_statements_ng_changed_since(since bigint, showtext boolean)
 *		For collectors: the rows whose counts changed since the generation
 *		the previous call returned, each with the new generation to pass to
 *		the next call.  The call advances the generation before it reads, and
 *		an execution stamps its slot with the generation it reads inside its
 *		write section (slots.c), so an execution is in at least one call's
 *		result: the one whose scan found it finished.  It can be in the next
 *		one too, when it read this call's generation and finished before this
 *		call's scan reached it: delivery is at least once, and a collector
 *		adds differences of the cumulative counters (docs/design.md).
 *		since <= 0 returns every row.
 */
Datum
pg_stat_statements_ng_changed_since_1_0(PG_FUNCTION_ARGS)
{
	int64		since = PG_GETARG_INT64(0);
	bool		showtext = PG_GETARG_BOOL(1);
	uint64		generation;

	ng_check_loaded();
	generation = pg_atomic_fetch_add_u64(&ng_shared->change_generation, 1) + 1;
	return ng_sql_statements_since(fcinfo, NG_API_NG_1_0, showtext, since,
								   generation);
}
