/*-------------------------------------------------------------------------
 *
 * plans_funcs.c
 *		pg_stat_statements_ng_plans(): a row per (statement, plan), exact:
 *		the entries' plan records (plans.h) plus the executions the slots
 *		hold, not folded yet.
 *
 * Why a file of its own: the read of plans is the reader's protocol
 * (reader.c) applied to plan records, apart from the statement rows.  The
 * dump (persist_write.c) writes the rows this read gives.
 *
 * Locks: one partition lock at a time, in shared mode, which keeps every
 * fold into the partition out while its entries' records and the slots
 * counting for it (found through the partition masks, slots.h) are copied:
 * each execution is seen once, in a slot or in a record.  The copies are
 * palloc'd under the lock; rows are emitted after it is released.  A slot
 * found in the middle of a write is not waited for under the lock: the
 * partition is read again after 1 ms, and after 5 s without that slot
 * (with a WARNING), as reader.c does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/wait_event.h"

#include "funcs.h"
#include "plans.h"
#include "shmem.h"
#include "slots/slots.h"
#include "store.h"
#include "textconv.h"

NG_FUNCTION_INFO(pg_stat_statements_ng_plans_1_2);

#define NG_PLANS_COLS		14
#define NG_PLANS_WAIT_MS	5000

/* a row's key: a statement's plan, or its "other" plans (other = true) */
typedef struct PlanRowKey
{
	Oid			userid;
	Oid			dbid;
	uint64		queryid;
	uint64		planid;
	bool		toplevel;
	bool		other;
} PlanRowKey;

typedef struct PlanRow
{
	PlanRowKey	key;			/* hash key: must be first */
	NgPlanRecord rec;			/* text and text_len unused */
	char	   *plan_text;		/* palloc'd, or NULL */
	int			text_len;
	int			encoding;
	int			position;		/* its record's place (INT_MAX: none yet) */
} PlanRow;

/* how one pass over a partition ended */
typedef enum PlanReadResult
{
	PLAN_READ_DONE,
	PLAN_READ_BUSY				/* a slot stayed in the middle of a write */
} PlanReadResult;

static void
row_key(PlanRowKey *k, const NgKey *key, uint64 planid, bool other)
{
	memset(k, 0, sizeof(PlanRowKey));
	k->userid = key->userid;
	k->dbid = key->dbid;
	k->queryid = key->queryid;
	k->toplevel = key->toplevel;
	k->planid = other ? 0 : planid;
	k->other = other;
}

/* the row of (key, planid, other), new rows empty */
static PlanRow *
row_of(HTAB *rows, const NgKey *key, uint64 planid, bool other)
{
	PlanRowKey	k;
	bool		found;
	PlanRow    *row;

	row_key(&k, key, planid, other);
	row = hash_search(rows, &k, HASH_ENTER, &found);
	if (!found)
	{
		memset(&row->rec, 0, sizeof(NgPlanRecord));
		row->rec.min_time = -1;
		row->rec.max_time = -1;
		row->plan_text = NULL;
		row->text_len = 0;
		row->encoding = 0;
		row->position = INT_MAX;
	}
	return row;
}

/*
 * read_records
 *		Every entry of part's plan records into rows, texts copied.
 *		Partition lock held, shared.
 */
static void
read_records(NgSharedPartition *part, HTAB *rows)
{
	dsa_pointer *buckets;

	if (part->nbuckets == 0)
		return;
	buckets = ng_store_buckets(part);
	for (uint32 b = 0; b < part->nbuckets; b++)
	{
		for (dsa_pointer cur = buckets[b]; DsaPointerIsValid(cur);)
		{
			NgSharedEntry *entry = dsa_get_address(ng_area, cur);
			NgPlanArray *arr = ng_plans_array(entry);

			for (int r = 0; arr != NULL && r <= arr->nplans; r++)
			{
				NgPlanRecord *rec = &arr->records[r];
				bool		other = (r == arr->nplans);
				PlanRow    *row;

				if (rec->calls == 0 && (other || rec->planid == 0))
					continue;
				row = row_of(rows, &entry->key, rec->planid, other);
				row->position = r;
				ng_plan_record_add(&row->rec, rec);
				if (DsaPointerIsValid(rec->text))
				{
					row->plan_text = palloc(rec->text_len + 1);
					memcpy(row->plan_text, dsa_get_address(ng_area, rec->text),
						   rec->text_len);
					row->plan_text[rec->text_len] = '\0';
					row->text_len = rec->text_len;
					row->encoding = rec->encoding;
				}
			}
			cur = entry->next;
		}
	}
}

/*
 * read_slot
 *		Add a copy of a slot counting for part to rows: to its entry's
 *		record of its plan (the "other" row when the entry has no record of
 *		it and no room), or to a row of its own.  A bound slot whose entry
 *		is gone (a reset) and an unbound slot from before a reset count
 *		nowhere.  Partition lock held, shared.
 */
static void
read_slot(NgSharedPartition *part, const NgSlot *copy, HTAB *rows)
{
	const NgCounters *c = &copy->counters;
	NgSharedEntry *entry;
	dsa_pointer dp;
	bool		minmax;
	bool		other = false;
	NgPlanArray *arr;
	NgPlanRecord add = {0};

	if (!copy->in_use || copy->planid == 0 || c->calls[NG_EXEC] == 0)
		return;
	if (!DsaPointerIsValid(copy->entry) &&
		copy->partition_generation != part->generation)
		return;
	entry = ng_entry_lookup(part, &copy->key, ng_key_hash(&copy->key), &dp);
	if (DsaPointerIsValid(copy->entry) && (entry == NULL || dp != copy->entry))
		return;
	minmax = ng_counters_has_minmax(c, NG_EXEC) &&
		(!DsaPointerIsValid(copy->entry) ||
		 copy->minmax_generation == entry->minmax_generation);
	if (entry != NULL && (arr = ng_plans_array(entry)) != NULL)
	{
		bool		found = false;

		for (int r = 0; r < arr->nplans && !found; r++)
			found = (arr->records[r].planid == copy->planid);
		other = !found && arr->records[arr->nplans - 1].planid != 0;
	}
	add.calls = c->calls[NG_EXEC];
	add.total_time = c->total_time[NG_EXEC];
	add.min_time = minmax ? c->min_time[NG_EXEC] : -1;
	add.max_time = minmax ? c->max_time[NG_EXEC] : -1;
	add.rows = c->rows;
	add.first_seen = copy->plan_first_at;
	add.last_seen = c->last_executed_at;
	ng_plan_record_add(&row_of(rows, &copy->key, copy->planid, other)->rec,
					   &add);
}

/*
 * read_slots
 *		Every slot counting for partition p into rows.  PLAN_READ_BUSY if
 *		one could not be copied (unless skip_busy: then it is left out and
 *		counted in *skipped).  Partition lock held, shared.
 */
static PlanReadResult
read_slots(int p, HTAB *rows, bool skip_busy, int *skipped)
{
	NgSharedPartition *part = &ng_shared->partitions[p];
	NgPartitionSlots it;
	NgBackendSlots *area;
	int			i;
	NgSlot		copy;

	ng_partition_slots_begin(&it, p);
	while (ng_partition_slots_next(&it, &area, &i))
	{
		if (!ng_slot_try_read(area, ng_slot_at(area, i), &copy, NULL))
		{
			if (!skip_busy)
				return PLAN_READ_BUSY;
			(*skipped)++;
			continue;
		}
		if (copy.partition == p)
			read_slot(part, &copy, rows);
	}
	return PLAN_READ_DONE;
}

static HTAB *
rows_create(void)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(PlanRowKey);
	ctl.entrysize = sizeof(PlanRow);
	ctl.hcxt = CurrentMemoryContext;
	return hash_create("pg_stat_statements_ng plans", 64, &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/*
 * read_partition
 *		Partition p's rows, in a table of their own, read under its lock
 *		(shared), again after 1 ms while a slot is in the middle of a write,
 *		and without such slots after NG_PLANS_WAIT_MS.
 */
static HTAB *
read_partition(int p)
{
	NgSharedPartition *part = &ng_shared->partitions[p];
	TimestampTz wait_start = 0;
	bool		skip_busy = false;

	for (;;)
	{
		HTAB	   *rows = rows_create();
		int			skipped = 0;
		PlanReadResult res;

		LWLockAcquire(part->lock, LW_SHARED);
		read_records(part, rows);
		res = read_slots(p, rows, skip_busy, &skipped);
		LWLockRelease(part->lock);
		if (res == PLAN_READ_DONE)
		{
			if (skipped > 0)
				ereport(WARNING,
						(errmsg("pg_stat_statements_ng: %d backend slots stayed in the middle of a write for %d ms; this read omits its counts",
								skipped, NG_PLANS_WAIT_MS)));
			return rows;
		}
		hash_destroy(rows);
		if (wait_start == 0)
			wait_start = GetCurrentTimestamp();
		else if (TimestampDifferenceExceeds(wait_start, GetCurrentTimestamp(),
											NG_PLANS_WAIT_MS))
			skip_busy = true;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1L, WAIT_EVENT_PG_SLEEP);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* the dump's order: by statement, then by place ("other" last) */
static int
dump_row_cmp(const void *a, const void *b)
{
	const NgPlanDumpRow *x = a;
	const NgPlanDumpRow *y = b;

	if (x->key.userid != y->key.userid)
		return x->key.userid < y->key.userid ? -1 : 1;
	if (x->key.dbid != y->key.dbid)
		return x->key.dbid < y->key.dbid ? -1 : 1;
	if (x->key.queryid != y->key.queryid)
		return x->key.queryid < y->key.queryid ? -1 : 1;
	if (x->key.toplevel != y->key.toplevel)
		return x->key.toplevel ? 1 : -1;
	if (x->other != y->other)
		return x->other ? 1 : -1;
	if (x->position != y->position)
		return x->position < y->position ? -1 : 1;
	if (x->rec.first_seen != y->rec.first_seen)
		return x->rec.first_seen < y->rec.first_seen ? -1 : 1;
	return x->rec.planid < y->rec.planid ? -1 :
		x->rec.planid > y->rec.planid ? 1 : 0;
}

/*
 * ng_plans_dump_rows
 *		Partition p's rows of the view (those with calls), read as the view
 *		reads them, into *rows (palloc'd in the current memory context, with
 *		their texts), each statement's in the order its records were taken
 *		(then plans not in a record yet, by first execution), "other" last.
 *		Returns how many.  Caller holds no lock of ours (the keeper, at
 *		shutdown).
 */
int
ng_plans_dump_rows(int p, NgPlanDumpRow **rows)
{
	HTAB	   *tab = read_partition(p);
	HASH_SEQ_STATUS seq;
	PlanRow    *row;
	int			n = 0;

	*rows = palloc(sizeof(NgPlanDumpRow) * Max(hash_get_num_entries(tab), 1));
	hash_seq_init(&seq, tab);
	while ((row = hash_seq_search(&seq)) != NULL)
	{
		NgPlanDumpRow *d = &(*rows)[n];

		if (row->rec.calls <= 0)
			continue;
		memset(d, 0, sizeof(*d));
		d->key.userid = row->key.userid;
		d->key.dbid = row->key.dbid;
		d->key.queryid = row->key.queryid;
		d->key.toplevel = row->key.toplevel;
		d->other = row->key.other;
		d->position = row->position;
		d->rec = row->rec;
		d->rec.planid = row->key.planid;
		d->rec.text = InvalidDsaPointer;
		d->text = row->plan_text;
		d->text_len = row->plan_text ? row->text_len : -1;
		d->encoding = row->encoding;
		n++;
	}
	hash_destroy(tab);
	qsort(*rows, n, sizeof(NgPlanDumpRow), dump_row_cmp);
	return n;
}

/*
 * emit_row
 *		One row of the view; its queryid, planid and plan text only to a
 *		reader allowed to see the statement's (its user, or
 *		pg_read_all_stats).
 */
static void
emit_row(ReturnSetInfo *rsinfo, const PlanRow *row, bool allowed)
{
	Datum		values[NG_PLANS_COLS];
	bool		nulls[NG_PLANS_COLS];
	const NgPlanRecord *r = &row->rec;
	bool		minmax = r->min_time >= 0;
	bool		shown = allowed || row->key.userid == GetUserId();
	int			i = 0;

	memset(nulls, 0, sizeof(nulls));
	values[i++] = ObjectIdGetDatum(row->key.userid);
	values[i++] = ObjectIdGetDatum(row->key.dbid);
	values[i] = Int64GetDatum((int64) row->key.queryid);
	nulls[i++] = !shown;
	values[i++] = BoolGetDatum(row->key.toplevel);
	values[i] = Int64GetDatum((int64) row->key.planid);
	nulls[i++] = row->key.other || !shown;
	values[i++] = Int64GetDatum(r->calls);
	values[i++] = Float8GetDatum(r->total_time);
	values[i++] = Float8GetDatum(minmax ? r->min_time : 0.0);
	values[i++] = Float8GetDatum(minmax ? r->max_time : 0.0);
	values[i++] = Float8GetDatum(r->calls > 0 ? r->total_time / r->calls : 0.0);
	values[i++] = Int64GetDatum(r->rows);
	values[i] = TimestampTzGetDatum(r->first_seen);
	nulls[i++] = (r->first_seen == 0);
	values[i] = TimestampTzGetDatum(r->last_seen);
	nulls[i++] = (r->last_seen == 0);
	if (row->plan_text != NULL && shown)
		values[i++] = CStringGetTextDatum(ng_text_for_reader(row->plan_text,
															 row->text_len,
															 row->encoding));
	else
		nulls[i++] = true;
	Assert(i == NG_PLANS_COLS);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * pg_stat_statements_ng_plans()
 *		A row per (statement, plan) counted since the statement's last
 *		reset, partition by partition.
 */
Datum
pg_stat_statements_ng_plans_1_2(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		allowed;

	ng_check_loaded();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != NG_PLANS_COLS)
		elog(ERROR, "incorrect number of output arguments");
	allowed = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		HTAB	   *rows = read_partition(p);
		HASH_SEQ_STATUS seq;
		PlanRow    *row;

		hash_seq_init(&seq, rows);
		while ((row = hash_seq_search(&seq)) != NULL)
			if (row->rec.calls > 0)
				emit_row(rsinfo, row, allowed);
		hash_destroy(rows);
	}
	return (Datum) 0;
}
