/*-------------------------------------------------------------------------
 *
 * funcs.c
 *		Our SQL-callable functions: the statements and changed_since (whose
 *		rows funcs_statements.c builds), the latency histogram of a
 *		statement, reset, and the info figures.
 *
 * Why a file of its own: the SQL interface's shape is a contract of its
 * own; the rows of every API shape are in funcs_statements.c, texts as the
 * reader shows them in textconv.c.
 *
 * Locks: reads go through reader.c (each partition lock in shared mode,
 * one at a time); changed_since advances the change generation (an atomic
 * fetch-add); reset takes partition locks exclusively through store.c;
 * info takes the shared spinlock to copy the figures (nothing else under
 * it).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "counters.h"
#include "hist.h"
#include "funcs.h"
#include "guc.h"
#include "keeper_start.h"
#include "plans.h"
#include "reader.h"
#include "reset.h"
#include "shmem.h"
#include "slots/slots.h"
#include "store.h"
#include "waits.h"

NG_FUNCTION_INFO(pg_stat_statements_ng_1_0);
NG_FUNCTION_INFO(pg_stat_statements_ng_1_2);
NG_FUNCTION_INFO(pg_stat_statements_ng_changed_since_1_0);
NG_FUNCTION_INFO(pg_stat_statements_ng_histogram_1_0);
NG_FUNCTION_INFO(pg_stat_statements_ng_reset_1_0);
NG_FUNCTION_INFO(pg_stat_statements_ng_info_1_0);


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
 * pg_stat_statements_ng(showtext boolean), version 1.2
 *		As 1.0, with each shown text's fingerprint (fingerprint_cache.c).
 */
Datum
pg_stat_statements_ng_1_2(PG_FUNCTION_ARGS)
{
	return ng_sql_statements(fcinfo, NG_API_NG_1_2, PG_GETARG_BOOL(0));
}

/*
 * pg_stat_statements_ng_changed_since(since bigint, showtext boolean)
 *		For collectors: the rows whose counts changed since the generation
 *		the previous call returned, each with the new generation to pass to
 *		the next call.  The call advances the generation before it reads, and
 *		an execution stamps its slot with the generation it reads inside its
 *		write section (slots/count.c), so an execution is in at least one call's
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

/*
 * pg_stat_statements_ng_histogram(queryid bigint, kind text)
 *		The latency histogram of a statement ('exec' or 'plan'), summed over
 *		the users, databases and levels it ran in that the caller may see:
 *		one row per non-empty bucket, with its bounds in ms.
 */
Datum
pg_stat_statements_ng_histogram_1_0(PG_FUNCTION_ARGS)
{
	uint64		queryid = (uint64) PG_GETARG_INT64(0);
	char	   *kindname = text_to_cstring(PG_GETARG_TEXT_PP(1));
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		allowed = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	uint64		sum[NG_HIST_BUCKETS] = {0};
	int			kind;

	if (strcmp(kindname, "exec") == 0)
		kind = NG_EXEC;
	else if (strcmp(kindname, "plan") == 0)
		kind = NG_PLAN;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid histogram kind \"%s\"", kindname),
				 errhint("Use \"exec\" or \"plan\".")));

	ng_check_loaded();
	InitMaterializedSRF(fcinfo, 0);

	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		HTAB	   *rows = ng_read_rows_create();
		HASH_SEQ_STATUS seq;
		NgRow	   *row;

		ng_read_partition(p, rows, false);
		hash_seq_init(&seq, rows);
		while ((row = hash_seq_search(&seq)) != NULL)
		{
			NgHistView	hist = {row->hist_mask, row->hist};

			if (row->key.queryid != queryid ||
				!(allowed || row->key.userid == GetUserId()))
				continue;
			for (int b = 0; b < NG_HIST_BUCKETS; b++)
				sum[b] += ng_hist_count(hist, kind, b);
		}
		hash_destroy(rows);
	}

	for (int b = 0; b < NG_HIST_BUCKETS; b++)
	{
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		if (sum[b] == 0)
			continue;
		values[0] = Int32GetDatum(b);
		values[1] = Float8GetDatum(ng_hist_lower(b));
		values[2] = Float8GetDatum(ng_hist_lower(b + 1));
		nulls[2] = (b == NG_HIST_BUCKETS - 1);	/* the last one is open */
		values[3] = Int64GetDatum((int64) sum[b]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * pg_stat_statements_ng_reset(userid, dbid, queryid, minmax_only)
 *		pg_stat_statements_reset's semantics; returns the reset time.
 */
Datum
pg_stat_statements_ng_reset_1_0(PG_FUNCTION_ARGS)
{
	Oid			userid = PG_GETARG_OID(0);
	Oid			dbid = PG_GETARG_OID(1);
	uint64		queryid = (uint64) PG_GETARG_INT64(2);
	bool		minmax_only = PG_GETARG_BOOL(3);

	ng_check_loaded();
	PG_RETURN_TIMESTAMPTZ(ng_store_reset(userid, dbid, queryid, minmax_only));
}

#define NG_INFO_COLS_1_0	17
#define NG_INFO_COLS_1_1	18	/* 1.1 adds dsa_failures */
#define NG_INFO_COLS	25		/* 1.2 adds keeper_start_failures,
								 * wait_samples_evicted, sqlstates_lost and
								 * the four of plan statistics */

/*
 * pg_stat_statements_ng_info()
 *		Capacity and loss figures.  The same C function serves every
 *		version of the SQL function: it fills the columns the caller's row
 *		type has (17 in 1.0; 1.1 adds dsa_failures at the end, 1.2
 *		keeper_start_failures, wait_samples_evicted, sqlstates_lost and
 *		plan_text_memory_used, plan_text_memory_max, plan_texts_dropped,
 *		plan_calls_lost).
 */
Datum
pg_stat_statements_ng_info_1_0(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[NG_INFO_COLS];
	bool		nulls[NG_INFO_COLS];
	NgSharedStats stats;
	int			i = 0;

	ng_check_loaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != NG_INFO_COLS_1_0 &&
		tupdesc->natts != NG_INFO_COLS_1_1 && tupdesc->natts != NG_INFO_COLS)
		elog(ERROR, "incorrect number of output arguments");

	ng_stats_read(&stats);

	memset(nulls, 0, sizeof(nulls));
	values[i++] = Int64GetDatum(stats.dealloc);
	values[i++] = TimestampTzGetDatum(stats.stats_reset);
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u32(&ng_shared->entry_count));
	values[i++] = Int64GetDatum((int64) ng_max);
	values[i++] = Int64GetDatum(stats.evicted_calls);
	values[i++] = Float8GetDatum(stats.evicted_exec_time);
	values[i] = TimestampTzGetDatum(stats.last_eviction_time);
	nulls[i++] = (stats.last_eviction_time == 0);
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&ng_shared->text_bytes));
	values[i++] = Int64GetDatum((int64) ng_query_text_memory_kb * 1024);
	values[i++] = Int64GetDatum(stats.texts_dropped);
	values[i++] = Int64GetDatum(stats.entries_refused);
	values[i++] = Int64GetDatum(stats.counts_discarded);
	values[i++] = Int64GetDatum(stats.unadmitted_calls);
	values[i++] = Int64GetDatum(stats.lock_misses);
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&ng_shared->folds));
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u32(&ng_shared->entry_count) *
								(int64) sizeof(NgSharedEntry) +
								(int64) pg_atomic_read_u64(&ng_shared->hist_bytes));
	values[i++] = Int64GetDatum((int64) ng_slots_areas_size());
	Assert(i == NG_INFO_COLS_1_0);
	values[i++] = Int64GetDatum(stats.dsa_failures);
	Assert(i == NG_INFO_COLS_1_1);
	/* ---- 1.2: the keeper ---- */
	values[i++] = Int64GetDatum(ng_keeper_start_failures());
	/* ---- 1.2: the wait profile ---- */
	values[i++] = Int64GetDatum(ng_waits ?
								(int64) pg_atomic_read_u64(&ng_waits->evicted) : 0);
	/* ---- 1.2: failed executions by SQLSTATE ---- */
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&ng_shared->sqlstates_lost));
	/* ---- 1.2: plan statistics ---- */
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&ng_shared->plan_text_bytes));
	values[i++] = Int64GetDatum((int64) ng_plan_text_memory_kb * 1024);
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&ng_shared->plan_texts_dropped));
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&ng_shared->plan_calls_lost));
	Assert(i == NG_INFO_COLS);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
