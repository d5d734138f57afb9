/*-------------------------------------------------------------------------
 *
 * funcs_statements.c
 *		The statement rows in every API shape: pg_stat_statements_ng() and
 *		its changed_since() (funcs.c), the drop-in's pg_stat_statements()
 *		of every version (dropin.c).
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
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "counters.h"
#include "fingerprint.h"
#include "hist.h"
#include "funcs.h"
#include "guc.h"
#include "reader.h"
#include "rowform.h"
#include "shmem.h"
#include "store.h"
#include "textconv.h"

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
		case NG_API_NG_1_2:
			return 65;
	}
	return -1;					/* keep compiler quiet */
}

#define NG_MAX_COLS		65		/* changed_since: generation + 64 */

/* the tail latency columns, per kind */
static const double stmt_fractions[] = {0.50, 0.95, 0.99};

#define NG_NUM_FRACTIONS	lengthof(stmt_fractions)

/*
 * ng_check_loaded_as
 *		Raise an ERROR unless the library was preloaded and this process can
 *		reach the shared state: every SQL function begins with this.  name
 *		is the library the caller's extension names, the one the DBA is to
 *		preload (the drop-in's functions: pg_stat_statements).
 */
void
ng_check_loaded_as(const char *name)
{
	if (ng_shared == NULL || !ng_store_attach())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s must be loaded via \"%s\"", name,
						"shared_preload_libraries"),
				 errhint("Add %s to shared_preload_libraries in postgresql.conf and restart the server.",
						 name)));
}

/* ng_check_loaded_as for the functions of pg_stat_statements_ng */
void
ng_check_loaded(void)
{
	ng_check_loaded_as(NG_NAME);
}

/*
 * The counters a row shows are those NgCounters has before its
 * last_executed_at: a row copies that head only (last_executed_at apart),
 * and its percentiles computed from the histograms.
 */
#define NG_COUNTERS_HEAD	offsetof(NgCounters, last_executed_at)
StaticAssertDecl(offsetof(NgCounters, failed_time) < offsetof(NgCounters, last_executed_at),
				 "a row copies the counters before last_executed_at only");

/* A row to emit, copied under the partition lock */
typedef struct StmtRow
{
	NgKey		key;
	int			encoding;
	int			qtext_len;		/* -1: no text */
	Size		qtext_off;		/* in StmtRead.texts */
	TimestampTz stats_since;
	TimestampTz minmax_stats_since;
	TimestampTz text_stored_at;
	TimestampTz last_executed_at;
	dsa_pointer qtext_dp;		/* the stored text copied */
	uint64		fingerprint;	/* cached (0: none), then the text's */
	bool		has_fingerprint;
	bool		any_pct[NG_NUM_KINDS];
	double		pct[NG_NUM_KINDS][NG_NUM_FRACTIONS];
	/* the head of NgCounters, read as one */
	double		counters[(NG_COUNTERS_HEAD + sizeof(double) - 1) / sizeof(double)];
} StmtRow;

#define ROW_COUNTERS(row)	((const NgCounters *) (row)->counters)

/* A read of the statement rows, partition by partition */
typedef struct StmtRead
{
	NgReader	r;				/* first: the callbacks get it */
	NgApi		api;
	int64		since;
	bool		allowed;		/* may see every row's text and queryid */
	Oid			user;
	StmtRow    *rows;			/* this partition's rows */
	int			nrows;
	int			maxrows;
	char	   *texts;			/* their texts, NUL-terminated */
	Size		ntext;
	Size		maxtext;
	Size		needtext;		/* what the texts need, when they ran out */
	NgFpCache	fpc;			/* fingerprints to cache (1.2) */
} StmtRead;

/*
 * stmt_shown
 *		Whether a row with these counts is shown.  An entry made when its
 *		statement was parsed, and not yet run or planned (or failed, where
 *		failures are shown), is not shown, as in pg_stat_statements (whose
 *		test of planned or run does not depend on the API version either):
 *		it exists only to hold the text.
 */
static inline bool
stmt_shown(const StmtRead *sr, const NgCounters *c)
{
	int64		ran = c->calls[NG_EXEC] + c->calls[NG_PLAN];

	if (sr->api >= NG_API_NG_1_0)
		ran += c->failed_errors + c->failed_cancels + c->failed_timeouts;
	/* (since <= 0: every row, without reading what follows the histograms) */
	return ran > 0 &&
		(sr->since <= 0 || (int64) c->changed_generation >= sr->since);
}

/*
 * stmt_add
 *		Row callback: copy what the row shows, under the partition lock,
 *		into room allocated beforehand.  False when that room is full.
 */
static bool
stmt_add(NgReader *r, const NgReadRow *in)
{
	StmtRead   *sr = (StmtRead *) r;
	const NgCounters *c = in->counters;
	StmtRow    *row;
	bool		visible;

	if (!stmt_shown(sr, c))
		return true;
	if (sr->nrows == sr->maxrows)
		return false;
	visible = sr->allowed || in->key.userid == sr->user;
	row = &sr->rows[sr->nrows];
	row->qtext_len = -1;
	if (visible && in->qtext != NULL)
	{
		if (sr->ntext + in->qtext_len + 1 > sr->maxtext)
		{
			sr->needtext = sr->ntext + in->qtext_len + 1;
			return false;
		}
		memcpy(sr->texts + sr->ntext, in->qtext, in->qtext_len + 1);
		row->qtext_off = sr->ntext;
		row->qtext_len = in->qtext_len;
		sr->ntext += in->qtext_len + 1;
	}
	row->key = in->key;
	row->encoding = in->encoding;
	row->stats_since = in->stats_since;
	row->minmax_stats_since = in->minmax_stats_since;
	row->text_stored_at = in->text_stored_at;
	row->qtext_dp = in->qtext_dp;
	row->fingerprint = in->fingerprint;
	memcpy(row->counters, c, NG_COUNTERS_HEAD);
	if (sr->api >= NG_API_NG_1_0)
	{
		row->last_executed_at = c->last_executed_at;
		for (int kind = 0; kind < NG_NUM_KINDS; kind++)
			row->any_pct[kind] =
				ng_hist_percentiles(in->hist, kind, stmt_fractions,
									NG_NUM_FRACTIONS, row->pct[kind]);
	}
	sr->nrows++;
	return true;
}

/* forget callback: drop the partition's rows */
static void
stmt_forget(NgReader *r)
{
	StmtRead   *sr = (StmtRead *) r;

	sr->nrows = 0;
	sr->ntext = 0;
}

/* grow callback: twice the room that ran out, outside the lock */
static void
stmt_grow(NgReader *r)
{
	StmtRead   *sr = (StmtRead *) r;

	if (sr->needtext > sr->maxtext)
	{
		sr->maxtext = Max(sr->maxtext * 2, sr->needtext);
		pfree(sr->texts);
		sr->texts = MemoryContextAllocHuge(CurrentMemoryContext, sr->maxtext);
	}
	else
	{
		sr->maxrows *= 2;
		pfree(sr->rows);
		sr->rows = MemoryContextAllocHuge(CurrentMemoryContext,
										  sizeof(StmtRow) * (Size) sr->maxrows);
	}
}

/*
 * stmt_fingerprints
 *		Each shown text's fingerprint (none without): cached with the text,
 *		or computed from the row's copy outside the partition lock, and
 *		cached for the next reads (fingerprint_cache.c).
 */
static void
stmt_fingerprints(StmtRead *sr, int p)
{
	for (int j = 0; j < sr->nrows; j++)
	{
		StmtRow    *row = &sr->rows[j];
		NgFpText	t = {
			.key = &row->key,
			.qtext = row->qtext_dp,
			.stored_at = row->text_stored_at,
			.text = sr->texts + row->qtext_off,
			.len = row->qtext_len,
			.encoding = row->encoding,
		};

		row->has_fingerprint = row->qtext_len >= 0 &&
			ng_fpcache_get(&sr->fpc, &t, &row->fingerprint);
	}
	ng_fpcache_store(&sr->fpc, p);
}

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
		bool		have_minmax = ng_counters_has_minmax(c, kind);

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
 * wal_bytes_numeric
 *		wal_bytes as a numeric: from the integer when it fits in an int64
 *		(always, in practice; a tenth of numeric_in's cost), else from its
 *		digits.  The same value and scale either way.
 */
static Datum
wal_bytes_numeric(uint64 bytes)
{
	char		buf[32];

	if (bytes <= (uint64) PG_INT64_MAX)
		return NumericGetDatum(int64_to_numeric((int64) bytes));
	snprintf(buf, sizeof(buf), UINT64_FORMAT, bytes);
	return DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
							   ObjectIdGetDatum(0), Int32GetDatum(-1));
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
		values[(*i)++] = Int64GetDatumFast(c->wal_records);
		values[(*i)++] = Int64GetDatumFast(c->wal_fpi);
		values[(*i)++] = wal_bytes_numeric(c->wal_bytes);
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
emit_ours(Datum *values, bool *nulls, int *i, const StmtRow *row)
{
	const NgCounters *c = ROW_COUNTERS(row);

	values[(*i)++] = Int64GetDatumFast(c->failed_errors);
	values[(*i)++] = Int64GetDatumFast(c->failed_cancels);
	values[(*i)++] = Int64GetDatumFast(c->failed_timeouts);
	values[(*i)++] = Float8GetDatumFast(c->failed_time);
	values[*i] = TimestampTzGetDatum(row->last_executed_at);
	nulls[(*i)++] = (row->last_executed_at == 0);
	values[*i] = TimestampTzGetDatum(row->text_stored_at);
	nulls[(*i)++] = (row->text_stored_at == 0);

	/* tail latency, from the histograms */
	for (int kind = NG_EXEC; kind >= NG_PLAN; kind--)
	{
		bool		any = row->any_pct[kind];

		for (int f = 0; f < NG_NUM_FRACTIONS; f++)
		{
			values[*i] = any ? Float8GetDatumFast(row->pct[kind][f]) : (Datum) 0;
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
 *		pg_stat_statements 1.12's shape, and 1.2 adds the fingerprint.
 *		Columns this major cannot fill are NULL.
 */
static void
emit_row(NgRowForm *form, const StmtRead *sr, const StmtRow *row,
		 uint64 generation)
{
	Datum		values[NG_MAX_COLS];
	bool		nulls[NG_MAX_COLS];
	int			i = 0;
	NgApi		api = sr->api;
	bool		visible = sr->allowed || row->key.userid == sr->user;

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

	/* as contrib: without showtext the text is NULL, even when hidden */
	if (!visible && sr->r.showtext)
		values[i++] = CStringGetTextDatum("<insufficient privilege>");
	else if (visible && row->qtext_len >= 0)
	{
		char	   *qtext = sr->texts + row->qtext_off;
		char	   *enc = ng_text_for_reader(qtext, row->qtext_len,
											 row->encoding);

		values[i++] = CStringGetTextDatum(enc);
		if (enc != qtext)
			pfree(enc);
	}
	else
		nulls[i++] = true;

	emit_times(values, &i, ROW_COUNTERS(row), api);
	emit_blocks(values, nulls, &i, ROW_COUNTERS(row), api);
	emit_wal_jit(values, nulls, &i, ROW_COUNTERS(row), api);
	if (api >= NG_API_PGSS_1_11)
	{
		values[i++] = TimestampTzGetDatum(row->stats_since);
		values[i++] = TimestampTzGetDatum(row->minmax_stats_since);
	}
	if (api >= NG_API_NG_1_0)
		emit_ours(values, nulls, &i, row);
	if (api >= NG_API_NG_1_2)
	{
		values[i] = Int64GetDatumFast((int64) row->fingerprint);
		nulls[i++] = !row->has_fingerprint;
	}
	Assert(i == api_columns(api) + (generation > 0 ? 1 : 0));

	ng_rowform_put(form, values, nulls);
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
	StmtRead	sr;
	NgRowForm	form;

	ng_check_loaded_as(api >= NG_API_NG_1_0 ? NG_NAME : NG_DROPIN_NAME);
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

	memset(&sr, 0, sizeof(sr));
	sr.r.showtext = showtext;
	sr.r.row = stmt_add;
	sr.r.forget = stmt_forget;
	sr.r.grow = stmt_grow;
	sr.api = api;
	sr.since = since;
	sr.allowed = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	sr.user = GetUserId();
	sr.maxrows = 1024;
	sr.rows = palloc(sizeof(StmtRow) * sr.maxrows);
	sr.maxtext = showtext ? 65536 : 0;
	sr.texts = palloc(Max(sr.maxtext, 1));

	/* copy a partition's rows under its lock, then emit them outside it */
	ng_rowform_begin(&form, rsinfo->setResult, rsinfo->setDesc);
	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		ng_read_partition_with(p, &sr.r);
		if (api >= NG_API_NG_1_2)
			stmt_fingerprints(&sr, p);
		for (int j = 0; j < sr.nrows; j++)
			emit_row(&form, &sr, &sr.rows[j], generation);
		stmt_forget(&sr.r);
	}
	ng_rowform_end(&form);
	ng_read_reader_free(&sr.r);
	ng_fpcache_free(&sr.fpc);
	pfree(sr.rows);
	pfree(sr.texts);
	return (Datum) 0;
}
