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

/* a row of columns.h shown in API version api */
#define NG_IN_API(api, first, last) \
	((api) >= NG_API_##first && (api) <= NG_API_##last)
#define NG_COUNT_COLUMN(column, form, first, last, ...) \
	n += NG_IN_API(api, first, last);

/* Output columns of each API version: columns.h's rows it shows */
static int
api_columns(NgApi api)
{
	int			n = 0;

	NG_COLUMNS(NG_COL_NONE, NG_COUNT_COLUMN, NG_COUNT_COLUMN);
	return n;
}

/* room for any API's columns, and changed_since's generation */
#define NG_MAX_COLS		(NG_COLUMNS_ROWS + 1)

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
	dsa_pointer qtext_dp;		/* the stored text copied */
	uint64		fingerprint;	/* cached (0: none), then the text's */
	bool		has_fingerprint;
	bool		any_pct[NG_NUM_KINDS];
	double		pct[NG_NUM_KINDS][NG_NUM_FRACTIONS];
	NgCounters	counters;		/* the row's counters, read as one */
} StmtRow;

#define ROW_COUNTERS(row)	(&(row)->counters)

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
	row->counters = *c;
	if (sr->api >= NG_API_NG_1_0)
	{
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
 * stmt_query
 *		The query column's value: the row's text in the database's
 *		encoding, or "<insufficient privilege>" for a row of another user;
 *		(Datum) 0 where the column is NULL (NG_V_QUERY_SHOWN).
 */
static Datum
stmt_query(const StmtRead *sr, const StmtRow *row, bool visible)
{
	char	   *qtext;
	char	   *enc;
	Datum		d;

	/* as contrib: without showtext the text is NULL, even when hidden */
	if (!visible && sr->r.showtext)
		return CStringGetTextDatum("<insufficient privilege>");
	if (!visible || row->qtext_len < 0)
		return (Datum) 0;
	qtext = sr->texts + row->qtext_off;
	enc = ng_text_for_reader(qtext, row->qtext_len, row->encoding);
	d = CStringGetTextDatum(enc);
	if (enc != qtext)
		pfree(enc);
	return d;
}

/*
 * The values of columns.h's V rows: row, c (its counters), sr and visible
 * are emit_columns' own.  Before 1.3 there were calls and total time only,
 * before 1.8 no planning columns; min and max are 0 without samples (a
 * min/max reset), mean and stddev 0 without calls.
 */
#define NG_V_QUERYID		Int64GetDatumFast((int64) row->key.queryid)
#define NG_V_QUERY			stmt_query(sr, row, visible)
#define NG_V_QUERY_SHOWN \
	((!visible && sr->r.showtext) || (visible && row->qtext_len >= 0))
#define NG_V_CALLS(k)		Int64GetDatumFast(c->calls[k])
#define NG_V_TOTAL(k)		Float8GetDatumFast(c->total_time[k])
#define NG_V_MIN(k) \
	Float8GetDatumFast(ng_counters_has_minmax(c, k) ? c->min_time[k] : 0.0)
#define NG_V_MAX(k) \
	Float8GetDatumFast(ng_counters_has_minmax(c, k) ? c->max_time[k] : 0.0)
#define NG_V_MEAN(k) \
	Float8GetDatumFast(c->calls[k] > 0 ? c->mean_time[k] : 0.0)
#define NG_V_STDDEV(k)		Float8GetDatumFast(stddev_of(c, k))
#define NG_V_PCT(k, f) \
	(row->any_pct[k] ? Float8GetDatumFast(row->pct[k][f]) : (Datum) 0)

/* an F row's member as a Datum of its form, and whether that is NULL */
#define NG_DATUM_INT8(x)	Int64GetDatumFast(x)
#define NG_DATUM_FLOAT8(x)	Float8GetDatumFast(x)
#define NG_DATUM_NUMERIC(x) wal_bytes_numeric(x)
#define NG_DATUM_TSTZ(x)	TimestampTzGetDatum(x)
#define NG_DATUM_NONE(x)	((Datum) 0)
#define NG_NULL_INT8(x)		false
#define NG_NULL_FLOAT8(x)	false
#define NG_NULL_NUMERIC(x)	false
#define NG_NULL_TSTZ(x)		((x) == 0)
#define NG_NULL_NONE(x)		true

#define NG_EMIT_F(column, form, first, last, ctype, member, merge, recorded, filled) \
	if (NG_IN_API(api, first, last)) \
	{ \
		values[i] = NG_DATUM_##form(c->member); \
		nulls[i++] = !(filled) || NG_NULL_##form(c->member); \
	}
#define NG_EMIT_V(column, form, first, last, value, isnull) \
	if (NG_IN_API(api, first, last)) \
	{ \
		values[i] = (value); \
		nulls[i++] = (isnull); \
	}

/*
 * emit_columns
 *		The columns of API version api, columns.h's rows that it shows, in
 *		the list's order, into values and nulls from *ip on.  Always inline,
 *		and called with a constant api (emit_row): each version's shape
 *		compiles to straight code.  Columns this major cannot fill are NULL.
 */
static pg_attribute_always_inline void
emit_columns(Datum *values, bool *nulls, int *ip, const StmtRead *sr,
			 const StmtRow *row, NgApi api)
{
	const NgCounters *c = ROW_COUNTERS(row);
	bool		visible = sr->allowed || row->key.userid == sr->user;
	int			i = *ip;

	NG_COLUMNS(NG_COL_NONE, NG_EMIT_F, NG_EMIT_V);
	*ip = i;
}

/*
 * emit_row
 *		Turn a row into a tuple of the given API version's shape (with
 *		changed_since's generation first, if > 0).
 */
static void
emit_row(NgRowForm *form, const StmtRead *sr, const StmtRow *row,
		 uint64 generation)
{
	Datum		values[NG_MAX_COLS];
	bool		nulls[NG_MAX_COLS];
	int			i = 0;

	memset(values, 0, sizeof(values));
	memset(nulls, 0, sizeof(nulls));

	/* changed_since puts the new generation first */
	if (generation > 0)
		values[i++] = Int64GetDatumFast((int64) generation);

	switch (sr->api)
	{
		case NG_API_PGSS_1_0:
			emit_columns(values, nulls, &i, sr, row, NG_API_PGSS_1_0);
			break;
		case NG_API_PGSS_1_1:
			emit_columns(values, nulls, &i, sr, row, NG_API_PGSS_1_1);
			break;
		case NG_API_PGSS_1_2:
			emit_columns(values, nulls, &i, sr, row, NG_API_PGSS_1_2);
			break;
		case NG_API_PGSS_1_3:
			emit_columns(values, nulls, &i, sr, row, NG_API_PGSS_1_3);
			break;
		case NG_API_PGSS_1_8:
			emit_columns(values, nulls, &i, sr, row, NG_API_PGSS_1_8);
			break;
		case NG_API_PGSS_1_9:
			emit_columns(values, nulls, &i, sr, row, NG_API_PGSS_1_9);
			break;
		case NG_API_PGSS_1_10:
			emit_columns(values, nulls, &i, sr, row, NG_API_PGSS_1_10);
			break;
		case NG_API_PGSS_1_11:
			emit_columns(values, nulls, &i, sr, row, NG_API_PGSS_1_11);
			break;
		case NG_API_PGSS_1_12:
			emit_columns(values, nulls, &i, sr, row, NG_API_PGSS_1_12);
			break;
		case NG_API_NG_1_0:
			emit_columns(values, nulls, &i, sr, row, NG_API_NG_1_0);
			break;
		case NG_API_NG_1_2:
			emit_columns(values, nulls, &i, sr, row, NG_API_NG_1_2);
			break;
	}
	Assert(i == api_columns(sr->api) + (generation > 0 ? 1 : 0));

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
