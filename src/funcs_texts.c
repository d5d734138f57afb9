/*-------------------------------------------------------------------------
 *
 * funcs_texts.c
 *		pg_stat_statements_ng_texts(queryids): the texts of the entries with
 *		given queryids, each with its text_stored_at, for collectors that
 *		keep the texts they read and ask only for those they lack.
 *
 * Why a file of its own: it reads entries only, never the backends' slots
 * (a text belongs to an entry), so it needs none of the reader's slot
 * machinery (reader.c); and it is the texts' side of collection, apart
 * from the counters' (funcs_statements.c).
 *
 * A text's stamp.  text_stored_at is given by ng_qtext_stamp (qtext.c): no
 * two texts stored in a run have the same one, and a run's are above the
 * runs' before it.  An entry keeps its stamp while it keeps its text (a
 * reset of min/max only, a restart that restores it from the dump); an
 * entry re-created after an eviction or a reset, or given its text after
 * being kept without one, has a new stamp.  So a collector that keeps
 * (key, text_stored_at, text) and asks for the texts of the rows whose
 * (key, text_stored_at) it does not hold gets each text once.
 *
 * Locks: each partition lock in shared mode, one at a time.  Under it the
 * matching entries' keys, stamps and texts are copied into room allocated
 * beforehand; when that runs out, the lock is released, the partition's
 * rows dropped, the room doubled, and the partition read again.  Rows are
 * emitted, and texts converted (textconv.c), outside the lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "funcs.h"
#include "qtext.h"
#include "shmem.h"
#include "store.h"
#include "textconv.h"

NG_FUNCTION_INFO(pg_stat_statements_ng_texts_1_2);

#define TEXTS_COLS		6

/* A row to emit, copied under the partition lock */
typedef struct TextRow
{
	NgKey		key;
	TimestampTz stamp;			/* text_stored_at; 0: no text */
	int			encoding;
	int			len;			/* -1: no text */
	Size		off;			/* in TextScan.texts */
} TextRow;

/* A read of the entries, partition by partition */
typedef struct TextScan
{
	const uint64 *queryids;		/* sorted */
	int			nqueryids;
	bool		allowed;		/* may see every user's entries */
	Oid			user;
	TextRow    *rows;			/* this partition's rows */
	int			nrows;
	int			maxrows;
	char	   *texts;			/* their texts, NUL-terminated */
	Size		ntext;
	Size		maxtext;
} TextScan;

/* qsort/bsearch comparator of uint64 */
static int
cmp_u64(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * texts_wanted
 *		Whether the scan returns entry: one the caller may see, with one of
 *		the queryids.  Under the partition lock.
 */
static inline bool
texts_wanted(const TextScan *ts, const NgSharedEntry *entry)
{
	if (!ts->allowed && entry->key.userid != ts->user)
		return false;
	return bsearch(&entry->key.queryid, ts->queryids, ts->nqueryids,
				   sizeof(uint64), cmp_u64) != NULL;
}

/*
 * texts_take
 *		Copy entry's key, text and stamp.  Under
 *		the partition lock; allocates nothing.  False when the room is full.
 */
static bool
texts_take(TextScan *ts, const NgSharedEntry *entry)
{
	TextRow    *row;

	if (ts->nrows == ts->maxrows)
		return false;
	row = &ts->rows[ts->nrows];
	row->len = -1;
	if (DsaPointerIsValid(entry->qtext))
	{
		if (ts->ntext + entry->text_len + 1 > ts->maxtext)
		{
			ts->maxtext = Max(ts->maxtext * 2, ts->ntext + entry->text_len + 1);
			return false;
		}
		memcpy(ts->texts + ts->ntext,
			   ng_qtext_text(dsa_get_address(ng_area, entry->qtext)),
			   entry->text_len + 1);
		row->off = ts->ntext;
		row->len = entry->text_len;
		ts->ntext += entry->text_len + 1;
	}
	row->key = entry->key;
	row->stamp = row->len >= 0 ? ng_qtext_stored_at(entry->qtext) : 0;
	row->encoding = entry->encoding;
	ts->nrows++;
	return true;
}

/*
 * texts_read_partition
 *		Copy the wanted entries of partition p, taking and releasing its lock
 *		(shared).  False if the room ran out (ts->maxrows or ts->maxtext then
 *		says what it needs; nothing is kept).
 */
static bool
texts_read_partition(TextScan *ts, int p)
{
	NgSharedPartition *part = &ng_shared->partitions[p];
	bool		ok = true;

	ts->nrows = 0;
	ts->ntext = 0;
	LWLockAcquire(part->lock, LW_SHARED);
	for (uint32 b = 0; ok && b < part->nbuckets; b++)
	{
		dsa_pointer cur = ng_store_buckets(part)[b];

		while (ok && DsaPointerIsValid(cur))
		{
			NgSharedEntry *entry = dsa_get_address(ng_area, cur);

			if (texts_wanted(ts, entry))
				ok = texts_take(ts, entry);
			cur = entry->next;
		}
	}
	LWLockRelease(part->lock);
	if (!ok && ts->nrows == ts->maxrows)
		ts->maxrows *= 2;
	return ok;
}

/*
 * texts_emit
 *		Put the partition's rows into the result.
 */
static void
texts_emit(ReturnSetInfo *rsinfo, const TextScan *ts)
{
	for (int j = 0; j < ts->nrows; j++)
	{
		const TextRow *row = &ts->rows[j];
		Datum		values[TEXTS_COLS];
		bool		nulls[TEXTS_COLS] = {false};
		char	   *enc = NULL;
		int			i = 0;

		values[i++] = ObjectIdGetDatum(row->key.userid);
		values[i++] = ObjectIdGetDatum(row->key.dbid);
		values[i++] = Int64GetDatum((int64) row->key.queryid);
		values[i++] = BoolGetDatum(row->key.toplevel);
		if (row->len >= 0)
		{
			enc = ng_text_for_reader(ts->texts + row->off, row->len,
									 row->encoding);
			values[i] = CStringGetTextDatum(enc);
		}
		nulls[i++] = (row->len < 0);
		values[i] = TimestampTzGetDatum(row->stamp);
		nulls[i++] = (row->len < 0);
		Assert(i == TEXTS_COLS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		if (enc != NULL && enc != ts->texts + row->off)
			pfree(enc);
	}
}

/*
 * texts_scan
 *		Read every partition with ts and emit its rows.
 */
static void
texts_scan(FunctionCallInfo fcinfo, TextScan *ts)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != TEXTS_COLS)
		elog(ERROR, "incorrect number of output arguments");
	ts->allowed = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	ts->user = GetUserId();
	ts->maxrows = 64;
	ts->maxtext = 8192;
	ts->rows = palloc(sizeof(TextRow) * ts->maxrows);
	ts->texts = palloc(Max(ts->maxtext, 1));

	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		if (ts->nqueryids == 0)
			break;				/* nothing asked for */
		while (!texts_read_partition(ts, p))
		{
			/* grow outside the lock, then read the partition again */
			pfree(ts->rows);
			pfree(ts->texts);
			ts->rows = MemoryContextAllocHuge(CurrentMemoryContext,
											  sizeof(TextRow) * (Size) ts->maxrows);
			ts->texts = MemoryContextAllocHuge(CurrentMemoryContext,
											   Max(ts->maxtext, 1));
		}
		texts_emit(rsinfo, ts);
	}
	pfree(ts->rows);
	pfree(ts->texts);
}

/*
 * pg_stat_statements_ng_texts(queryids bigint[])
 *		The texts of the entries with these queryids (of every user,
 *		database and level the caller may see), each with its stamp
 *		(text_stored_at): a walk over the entries' keys that copies only
 *		these texts.  An entry without text has a row with NULL text and
 *		stamp.  A NULL element is ignored.
 */
Datum
pg_stat_statements_ng_texts_1_2(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	Datum	   *elems;
	bool	   *elnulls;
	int			nelems;
	uint64	   *ids;
	int			n = 0;
	TextScan	ts;

	ng_check_loaded();
	deconstruct_array(arr, INT8OID, sizeof(int64), FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &elems, &elnulls, &nelems);
	ids = palloc(sizeof(uint64) * Max(nelems, 1));
	for (int i = 0; i < nelems; i++)
		if (!elnulls[i])
			ids[n++] = (uint64) DatumGetInt64(elems[i]);
	qsort(ids, n, sizeof(uint64), cmp_u64);

	memset(&ts, 0, sizeof(ts));
	ts.queryids = ids;
	ts.nqueryids = n;
	texts_scan(fcinfo, &ts);
	pfree(ids);
	return (Datum) 0;
}
