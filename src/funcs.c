/*-------------------------------------------------------------------------
 *
 * funcs.c
 *		SQL-callable functions: reading the statistics, resetting them, and
 *		the info figures.
 *
 * Why a file of its own: the reader is the other half of the slot protocol
 * (slots.c) and the place where exactness is decided; the SQL interface's
 * shape is a contract of its own.
 *
 * Rows are collected partition by partition by reader.c, then emitted
 * here, outside any lock; texts are converted to the database encoding
 * here, and a text that cannot be converted is shown with the offending
 * bytes escaped rather than failing the read.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "counters.h"
#include "funcs.h"
#include "guc.h"
#include "reader.h"
#include "reset.h"
#include "shmem.h"
#include "slots.h"
#include "store.h"

PG_FUNCTION_INFO_V1(pg_stat_statements_ng_1_0);
PG_FUNCTION_INFO_V1(pg_stat_statements_ng_changed_since_1_0);
PG_FUNCTION_INFO_V1(pg_stat_statements_ng_histogram_1_0);
PG_FUNCTION_INFO_V1(pg_stat_statements_ng_reset_1_0);
PG_FUNCTION_INFO_V1(pg_stat_statements_ng_info_1_0);


void
ng_check_loaded(void)
{
	if (ng_shared == NULL || !ng_store_attach())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_stat_statements_ng must be loaded via \"shared_preload_libraries\""),
				 errhint("Add pg_stat_statements_ng to shared_preload_libraries in postgresql.conf and restart the server.")));
}

static double
stddev_of(const NgCounters *c, int kind)
{
	if (c->calls[kind] > 1)
		return sqrt(c->sum_var_time[kind] / c->calls[kind]);
	return 0.0;
}

/*
 * text_escape_bytes
 *		Append n bytes as \xNN each.
 */
static void
text_escape_bytes(StringInfo buf, const char *s, int n)
{
	for (int k = 0; k < n; k++)
		appendStringInfo(buf, "\\x%02x", (unsigned char) s[k]);
}

/*
 * text_for_reader
 *		A stored text (len bytes without NUL, followed by one, in encoding
 *		enc) as a string in the database encoding, whatever its bytes:
 *		converted where it can be; a character that is not valid, or has no
 *		equivalent in the database encoding, is written as \xNN per byte (in
 *		the text's own encoding).  Returns qtext itself when it can be shown
 *		as it is, else a palloc'd string.  Never raises an error because of
 *		the text's content, so one text in a foreign encoding cannot make a
 *		whole read fail (pg_any_to_server would).
 */
static char *
text_for_reader(const char *qtext, int len, int enc)
{
	int			db = GetDatabaseEncoding();
	StringInfoData buf;
	int			pos = 0;
	Oid			proc;

	/* a SQL_ASCII database takes any byte but zero */
	if (len <= 0 || db == PG_SQL_ASCII)
		return (char *) qtext;

	/*
	 * Same encoding, or unknown bytes (stored in a SQL_ASCII database): show
	 * the stretches valid in the database encoding, escape the other bytes.
	 */
	if (enc == db || enc == PG_SQL_ASCII || !PG_VALID_BE_ENCODING(enc))
	{
		int			ok = pg_encoding_verifymbstr(db, qtext, len);

		if (ok == len)
			return (char *) qtext;
		initStringInfo(&buf);
		while (pos < len)
		{
			ok = pg_encoding_verifymbstr(db, qtext + pos, len - pos);
			appendBinaryStringInfo(&buf, qtext + pos, ok);
			pos += ok;
			if (pos < len)
				text_escape_bytes(&buf, qtext + pos++, 1);
		}
		return buf.data;
	}

	/* another encoding: plain ASCII is the same in every backend encoding */
	while (pos < len && !IS_HIGHBIT_SET(qtext[pos]))
		pos++;
	if (pos == len)
		return (char *) qtext;

	initStringInfo(&buf);
	pos = 0;
	proc = FindDefaultConversionProc(enc, db);
	if (!OidIsValid(proc))
	{
		/* no conversion known: keep ASCII, escape the rest */
		for (; pos < len; pos++)
		{
			if (IS_HIGHBIT_SET(qtext[pos]))
				text_escape_bytes(&buf, qtext + pos, 1);
			else
				appendStringInfoChar(&buf, qtext[pos]);
		}
		return buf.data;
	}
	else
	{
		/*
		 * Convert in pieces, without raising errors: the conversion stops
		 * before the first character it cannot convert; that character is
		 * escaped (its bytes if it is valid in enc, else one byte) and the
		 * conversion goes on after it.
		 */
		int			chunk = 8192;
		int			destlen = chunk * MAX_CONVERSION_GROWTH + 1;
		unsigned char *dest = palloc(destlen);

		while (pos < len)
		{
			int			n;

			n = pg_do_encoding_conversion_buf(proc, enc, db,
											  (unsigned char *) qtext + pos,
											  Min(len - pos, chunk),
											  dest, destlen, true);
			if (n > 0)
			{
				appendStringInfoString(&buf, (char *) dest);
				pos += n;
			}
			else
			{
				int			l = pg_encoding_verifymbchar(enc, qtext + pos, len - pos);

				if (l <= 0)
					l = 1;
				text_escape_bytes(&buf, qtext + pos, l);
				pos += l;
			}
		}
		pfree(dest);
	}
	return buf.data;
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
	const NgCounters *c = &row->counters;
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
		char	   *enc = text_for_reader(row->qtext, row->qtext_len, row->encoding);

		values[i++] = CStringGetTextDatum(enc);
		if (enc != row->qtext)
			pfree(enc);
	}
	else
		nulls[i++] = true;

	for (int kind = 0; kind < NG_NUM_KINDS; kind++)
	{
		bool		have_minmax = c->minmax_calls[kind] > 0;

		/* before 1.8 there were no planning columns */
		if (kind == NG_PLAN && api < NG_API_PGSS_1_8)
			continue;
		values[i++] = Int64GetDatumFast(c->calls[kind]);
		values[i++] = Float8GetDatumFast(c->total_time[kind]);
		/* before 1.3, calls and total time only */
		if (api < NG_API_PGSS_1_3)
			continue;
		values[i++] = Float8GetDatumFast(have_minmax ? c->min_time[kind] : 0.0);
		values[i++] = Float8GetDatumFast(have_minmax ? c->max_time[kind] : 0.0);
		values[i++] = Float8GetDatumFast(c->calls[kind] > 0 ? c->mean_time[kind] : 0.0);
		values[i++] = Float8GetDatumFast(stddev_of(c, kind));
	}
	values[i++] = Int64GetDatumFast(c->rows);
	values[i++] = Int64GetDatumFast(c->shared_blks_hit);
	values[i++] = Int64GetDatumFast(c->shared_blks_read);
	if (api >= NG_API_PGSS_1_1)
		values[i++] = Int64GetDatumFast(c->shared_blks_dirtied);
	values[i++] = Int64GetDatumFast(c->shared_blks_written);
	values[i++] = Int64GetDatumFast(c->local_blks_hit);
	values[i++] = Int64GetDatumFast(c->local_blks_read);
	if (api >= NG_API_PGSS_1_1)
		values[i++] = Int64GetDatumFast(c->local_blks_dirtied);
	values[i++] = Int64GetDatumFast(c->local_blks_written);
	values[i++] = Int64GetDatumFast(c->temp_blks_read);
	values[i++] = Int64GetDatumFast(c->temp_blks_written);
	if (api >= NG_API_PGSS_1_1)
	{
		values[i++] = Float8GetDatumFast(c->shared_blk_read_time);
		values[i++] = Float8GetDatumFast(c->shared_blk_write_time);
	}
	if (api >= NG_API_PGSS_1_11)
	{
		values[i] = Float8GetDatumFast(c->local_blk_read_time);
		nulls[i++] = !NG_HAVE_LOCAL_BLK_TIME;
		values[i] = Float8GetDatumFast(c->local_blk_write_time);
		nulls[i++] = !NG_HAVE_LOCAL_BLK_TIME;
	}
	if (api >= NG_API_PGSS_1_10)
	{
		values[i++] = Float8GetDatumFast(c->temp_blk_read_time);
		values[i++] = Float8GetDatumFast(c->temp_blk_write_time);
	}
	if (api >= NG_API_PGSS_1_8)
	{
		char		buf[32];

		values[i++] = Int64GetDatumFast(c->wal_records);
		values[i++] = Int64GetDatumFast(c->wal_fpi);
		snprintf(buf, sizeof(buf), UINT64_FORMAT, c->wal_bytes);
		values[i++] = DirectFunctionCall3(numeric_in,
										  CStringGetDatum(buf),
										  ObjectIdGetDatum(0),
										  Int32GetDatum(-1));
	}
	if (api >= NG_API_PGSS_1_12)
	{
		values[i] = Int64GetDatumFast(c->wal_buffers_full);
		nulls[i++] = !NG_HAVE_WAL_BUFFERS_FULL;
	}
	if (api >= NG_API_PGSS_1_10)
	{
		values[i++] = Int64GetDatumFast(c->jit_functions);
		values[i++] = Float8GetDatumFast(c->jit_generation_time);
		values[i++] = Int64GetDatumFast(c->jit_inlining_count);
		values[i++] = Float8GetDatumFast(c->jit_inlining_time);
		values[i++] = Int64GetDatumFast(c->jit_optimization_count);
		values[i++] = Float8GetDatumFast(c->jit_optimization_time);
		values[i++] = Int64GetDatumFast(c->jit_emission_count);
		values[i++] = Float8GetDatumFast(c->jit_emission_time);
	}
	if (api >= NG_API_PGSS_1_11)
	{
		values[i] = Int64GetDatumFast(c->jit_deform_count);
		nulls[i++] = !NG_HAVE_JIT_DEFORM;
		values[i] = Float8GetDatumFast(c->jit_deform_time);
		nulls[i++] = !NG_HAVE_JIT_DEFORM;
	}
	if (api >= NG_API_PGSS_1_12)
	{
		values[i] = Int64GetDatumFast(c->parallel_workers_to_launch);
		nulls[i++] = !NG_HAVE_PARALLEL_WORKERS;
		values[i] = Int64GetDatumFast(c->parallel_workers_launched);
		nulls[i++] = !NG_HAVE_PARALLEL_WORKERS;
	}
	if (api >= NG_API_PGSS_1_11)
	{
		values[i++] = TimestampTzGetDatum(row->stats_since);
		values[i++] = TimestampTzGetDatum(row->minmax_stats_since);
	}
	if (api >= NG_API_NG_1_0)
	{
		/* ours alone: failed executions, and what collectors need */
		values[i++] = Int64GetDatumFast(c->failed_errors);
		values[i++] = Int64GetDatumFast(c->failed_cancels);
		values[i++] = Int64GetDatumFast(c->failed_timeouts);
		values[i++] = Float8GetDatumFast(c->failed_time);
		values[i] = TimestampTzGetDatum(c->last_executed_at);
		nulls[i++] = (c->last_executed_at == 0);
		values[i] = TimestampTzGetDatum(row->text_stored_at);
		nulls[i++] = (row->text_stored_at == 0);

		/* tail latency, from the histograms */
		for (int kind = NG_EXEC; kind >= NG_PLAN; kind--)
		{
			static const double fractions[] = {0.50, 0.95, 0.99};
			double		ms[lengthof(fractions)];
			bool		any = ng_hist_percentiles(c, kind, fractions,
												  lengthof(fractions), ms);

			for (int f = 0; f < lengthof(fractions); f++)
			{
				values[i] = any ? Float8GetDatumFast(ms[f]) : (Datum) 0;
				nulls[i++] = !any;
			}
		}
	}
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
			if (row->key.queryid != queryid ||
				!(allowed || row->key.userid == GetUserId()))
				continue;
			for (int b = 0; b < NG_HIST_BUCKETS; b++)
				sum[b] += row->counters.hist[kind][b];
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
#define NG_INFO_COLS	18		/* 1.1 adds dsa_failures */

/*
 * pg_stat_statements_ng_info()
 *		Capacity and loss figures.  The same C function serves every
 *		version of the SQL function: it fills the columns the caller's row
 *		type has (17 in 1.0; 1.1 adds dsa_failures at the end).
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
	if (tupdesc->natts != NG_INFO_COLS_1_0 && tupdesc->natts != NG_INFO_COLS)
		elog(ERROR, "incorrect number of output arguments");

	SpinLockAcquire(&ng_shared->mutex);
	stats = ng_shared->stats;
	SpinLockRelease(&ng_shared->mutex);

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
								(int64) sizeof(NgSharedEntry));
	values[i++] = Int64GetDatum((int64) ng_slots_shmem_size());
	Assert(i == NG_INFO_COLS_1_0);
	values[i++] = Int64GetDatum(stats.dsa_failures);
	Assert(i == NG_INFO_COLS);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
