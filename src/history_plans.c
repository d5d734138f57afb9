/*-------------------------------------------------------------------------
 *
 * history_plans.c
 *		Each window's plan rows: for each statement the window keeps, one
 *		row per plan executed while it was open, with the calls, exec time
 *		and rows of that plan in the window.
 *
 * Why a file of its own: the keeper follows (statement, plan) pairs beside
 * its statements (history_keeper.c), by the same arithmetic, and the
 * capture of what a reset takes out (history_capture.c) reads plans the
 * same way; what both share about plan arrays (plans.h) is here.
 *
 * The deltas.  A plan is a planid, or "other": the plans an entry's plan
 * array counts together.  For each (statement, plan) the keeper has seen,
 * it keeps acc = (what departed with it since the window opened) minus
 * (what the table held for it when the window opened); at a close, the
 * window's delta is acc plus what the table holds now, and acc becomes
 * minus that.  What the table holds is read in the partition lock section
 * in which the statement's row is read, from the same slot copies (the
 * reader's slot callback, reader.h): the entry's plan records, and each
 * slot adding to the row, whose executions since its last fold are all of
 * one plan, counted as its fold will count them: in the entry's record of
 * that plan, or in "other" when the array has no record of it and none
 * free.  What departs carries its plans: an evicted entry keeps its plan
 * array until the keeper frees it; a reset hands over the records of an
 * entry it removes and the plans of the slots it voids (history_capture.c);
 * the fold of an unbound slot without an entry keeps its calls by plan
 * (history.c).  So a statement's plan rows in a window add up to its calls
 * in the window, but for executions with no plan known (track_plans off,
 * utility statements, a plan array the DSA area refused: plan_calls_lost),
 * and for a slot whose plan had no record at one read and found the last
 * free record taken by another plan at its fold (its calls move from the
 * plan's row to "other" in that window: the sum stays exact).
 *
 * Locking: ng_history_plans_of_entry and ng_history_plan_of_slot read an
 * entry's plan array: caller holds its partition lock, any mode (a reset
 * holding it exclusively, the keeper shared), or owns the unlinked entry.
 * The rest runs in the keeper alone, with no lock of ours, in the keeper's
 * memory.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/hsearch.h"

#include "history.h"
#include "plans.h"
#include "slots/slots.h"

/* a (statement, plan) the keeper follows: its hash key */
typedef struct PlanKey
{
	NgKey		key;
	uint64		planid;			/* 0 when other */
	bool		other;
} PlanKey;

typedef struct KeeperPlan
{
	PlanKey		k;				/* hash key: must be first */
	uint64		seen;			/* the read that last saw it in the table */
	NgHistoryPlanCounts acc;
	NgHistoryPlanCounts now;	/* what that read saw */
} KeeperPlan;

/* a window's plan row and the rank of its statement, to sort them */
typedef struct RankedPlan
{
	int			rank;
	NgHistoryPlanRow row;
} RankedPlan;

/* a statement the window keeps, and its rank */
typedef struct KeptKey
{
	NgKey		key;			/* hash key: must be first */
	int			rank;
} KeptKey;

static HTAB *plan_keys = NULL;
static MemoryContext plan_cxt = NULL;

static uint32
plan_key_hash(const void *key, Size keysize)
{
	const PlanKey *k = key;

	return hash_combine(ng_key_hash(&k->key),
						murmurhash32((uint32) k->planid ^
									 (uint32) (k->planid >> 32)) ^
						(k->other ? 1 : 0));
}

static int
plan_key_match(const void *a, const void *b, Size keysize)
{
	const PlanKey *x = a;
	const PlanKey *y = b;

	return (ng_key_equal(&x->key, &y->key) && x->planid == y->planid &&
			x->other == y->other) ? 0 : 1;
}

/* ---- reading plan arrays, under the partition lock ---- */

/*
 * ng_history_plans_of_entry
 *		entry's plans with calls (its records, "other" last), at most max of
 *		them, into out; their number, or -1 if they need more room than max
 *		(nplans + 1 of plans_per_statement's arrays is always enough).
 *		Caller holds the partition lock, any mode, or owns the unlinked
 *		entry.
 */
int
ng_history_plans_of_entry(const NgSharedEntry *entry, NgHistoryPlan *out,
						  int max)
{
	NgPlanArray *arr = ng_plans_array(entry);
	int			n = 0;

	for (int r = 0; arr != NULL && r <= arr->nplans; r++)
	{
		const NgPlanRecord *rec = &arr->records[r];
		NgHistoryPlan *p;

		if (rec->calls == 0)
			continue;
		if (n == max)
			return -1;
		p = &out[n++];
		memset(p, 0, sizeof(NgHistoryPlan));
		p->other = (r == arr->nplans);
		p->planid = p->other ? 0 : rec->planid;
		p->c.calls = rec->calls;
		p->c.total_exec_time = rec->total_time;
		p->c.rows = rec->rows;
	}
	return n;
}

/*
 * ng_history_plan_of_slot
 *		The plan of the executions slot copy holds, as its fold will count
 *		them into entry (NULL: the statement has no entry): its own planid,
 *		or "other" when entry's plan array has no record of it and none
 *		free.  False if the copy holds no execution of a known plan.  Caller
 *		holds the partition lock, any mode.
 */
bool
ng_history_plan_of_slot(const NgSharedEntry *entry, const NgSlot *copy,
						NgHistoryPlan *out)
{
	const NgCounters *c = &copy->counters;
	NgPlanArray *arr = entry != NULL ? ng_plans_array(entry) : NULL;
	bool		other = false;

	if (copy->planid == 0 || c->calls[NG_EXEC] == 0)
		return false;
	if (arr != NULL)
	{
		bool		found = false;

		for (int r = 0; r < arr->nplans && !found; r++)
			found = (arr->records[r].planid == copy->planid);
		other = !found && arr->records[arr->nplans - 1].planid != 0;
	}
	memset(out, 0, sizeof(NgHistoryPlan));
	out->other = other;
	out->planid = other ? 0 : copy->planid;
	out->c.calls = c->calls[NG_EXEC];
	out->c.total_exec_time = c->total_time[NG_EXEC];
	out->c.rows = c->rows;
	return true;
}

/* ---- the keeper's (statement, plan) pairs ---- */

/*
 * ng_history_plans_start
 *		Keeper, at start: follow plans, in cxt.
 */
void
ng_history_plans_start(MemoryContext cxt)
{
	HASHCTL		ctl;

	plan_cxt = cxt;
	ctl.keysize = sizeof(PlanKey);
	ctl.entrysize = sizeof(KeeperPlan);
	ctl.hash = plan_key_hash;
	ctl.match = plan_key_match;
	ctl.hcxt = cxt;
	plan_keys = hash_create("pg_stat_statements_ng history plans", 256, &ctl,
							HASH_ELEM | HASH_FUNCTION | HASH_COMPARE |
							HASH_CONTEXT);
}

/* the pair of key and p's plan, made (empty) if new */
static KeeperPlan *
keeper_plan(const NgKey *key, const NgHistoryPlan *p)
{
	PlanKey		k;
	bool		found;
	KeeperPlan *kp;

	memset(&k, 0, sizeof(k));
	k.key = *key;
	k.other = p->other;
	k.planid = p->other ? 0 : p->planid;
	kp = hash_search(plan_keys, &k, HASH_ENTER, &found);
	if (!found)
	{
		kp->seen = 0;
		memset(&kp->acc, 0, sizeof(kp->acc));
		memset(&kp->now, 0, sizeof(kp->now));
	}
	return kp;
}

/*
 * ng_history_plans_departed
 *		Keeper: the n plans of key departed from the table (a reset's
 *		handover, an unbound fold): add them to acc.
 */
void
ng_history_plans_departed(const NgKey *key, const NgHistoryPlan *plans, int n)
{
	for (int i = 0; i < n; i++)
		ng_history_plan_add(&keeper_plan(key, &plans[i])->acc, &plans[i].c, 1);
}

/*
 * ng_history_plans_evicted
 *		Keeper: entry, evicted and taken from the history's list (the
 *		keeper owns it), departed with its plan records: add them to acc.
 */
void
ng_history_plans_evicted(const NgSharedEntry *entry)
{
	NgPlanArray *arr = ng_plans_array(entry);
	NgHistoryPlan *plans;
	int			n;

	if (arr == NULL || plan_keys == NULL)
		return;
	plans = MemoryContextAlloc(plan_cxt,
							   sizeof(NgHistoryPlan) * (Size) (arr->nplans + 1));
	n = ng_history_plans_of_entry(entry, plans, arr->nplans + 1);
	ng_history_plans_departed(&entry->key, plans, n);
	pfree(plans);
}

/*
 * ng_history_plans_read
 *		Keeper: what a read (number read) found in a partition: n plans,
 *		plans[i] of statement keys[i], several of a pair summed.
 */
void
ng_history_plans_read(const NgKey *keys, const NgHistoryPlan *plans, int n,
					  uint64 read)
{
	for (int i = 0; i < n; i++)
	{
		KeeperPlan *kp = keeper_plan(&keys[i], &plans[i]);

		if (kp->seen != read)
		{
			memset(&kp->now, 0, sizeof(kp->now));
			kp->seen = read;
		}
		ng_history_plan_add(&kp->now, &plans[i].c, 1);
	}
}

/* a kept statement's rank first; "other" after its plans; then planid */
static int
ranked_cmp(const void *a, const void *b)
{
	const RankedPlan *x = a;
	const RankedPlan *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->row.p.other != y->row.p.other)
		return x->row.p.other ? 1 : -1;
	if (x->row.p.planid != y->row.p.planid)
		return x->row.p.planid < y->row.p.planid ? -1 : 1;
	return 0;
}

/* a table of the nkeep statements kept, each with its rank */
static HTAB *
kept_table(const NgKey *kept, int nkeep)
{
	HASHCTL		ctl;
	HTAB	   *t;

	ctl.keysize = sizeof(NgKey);
	ctl.entrysize = sizeof(KeptKey);
	ctl.hash = ng_key_htab_hash;
	ctl.match = ng_key_htab_match;
	ctl.hcxt = CurrentMemoryContext;
	t = hash_create("pg_stat_statements_ng history kept", Max(nkeep, 16), &ctl,
					HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
	for (int i = 0; i < nkeep; i++)
		((KeptKey *) hash_search(t, &kept[i], HASH_ENTER, NULL))->rank = i;
	return t;
}

/*
 * ng_history_plans_close
 *		Keeper, once a read (number read) has seen every partition: each
 *		pair's delta is acc plus what the read saw, and acc becomes minus
 *		that; a pair the read did not see has acc as its delta and is
 *		forgotten.  Unless opening, the window's plan rows: the deltas with
 *		calls of the nkeep statements kept, in their order, palloc'd, their
 *		number in *nplans.
 */
NgHistoryPlanRow *
ng_history_plans_close(uint64 read, bool opening, const NgKey *kept,
					   int nkeep, int *nplans)
{
	HTAB	   *kept_keys = opening ? NULL : kept_table(kept, nkeep);
	int			max = 64;
	int			n = 0;
	RankedPlan *ranked = palloc(sizeof(RankedPlan) * max);
	NgHistoryPlanRow *rows;
	HASH_SEQ_STATUS seq;
	KeeperPlan *kp;

	hash_seq_init(&seq, plan_keys);
	while ((kp = hash_seq_search(&seq)) != NULL)
	{
		NgHistoryPlanCounts delta = kp->acc;
		bool		seen = (kp->seen == read);
		KeptKey    *k;

		if (seen)
			ng_history_plan_add(&delta, &kp->now, 1);
		if (kept_keys != NULL && delta.calls != 0 &&
			(k = hash_search(kept_keys, &kp->k.key, HASH_FIND, NULL)) != NULL)
		{
			if (n == max)
			{
				max *= 2;
				ranked = repalloc_huge(ranked, sizeof(RankedPlan) * (Size) max);
			}
			memset(&ranked[n], 0, sizeof(RankedPlan));
			ranked[n].rank = k->rank;
			ranked[n].row.key = kp->k.key;
			ranked[n].row.p.planid = kp->k.planid;
			ranked[n].row.p.other = kp->k.other;
			ranked[n].row.p.c = delta;
			n++;
		}
		if (!seen)
		{
			(void) hash_search(plan_keys, &kp->k, HASH_REMOVE, NULL);
			continue;
		}
		memset(&kp->acc, 0, sizeof(kp->acc));
		ng_history_plan_add(&kp->acc, &kp->now, -1);
	}
	qsort(ranked, n, sizeof(RankedPlan), ranked_cmp);
	rows = palloc(sizeof(NgHistoryPlanRow) * (Size) Max(n, 1));
	for (int i = 0; i < n; i++)
		memcpy(&rows[i], &ranked[i].row, sizeof(NgHistoryPlanRow));
	pfree(ranked);
	if (kept_keys != NULL)
		hash_destroy(kept_keys);
	*nplans = n;
	return rows;
}
