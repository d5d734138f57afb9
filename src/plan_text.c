/*-------------------------------------------------------------------------
 *
 * plan_text.c
 *		A plan's literal-free text: EXPLAIN (COSTS OFF) of the plan a
 *		QueryDesc runs, made in an internal subtransaction, its constants
 *		replaced by $n (plan_text_scrub.c), bounded in nodes and in bytes.
 *
 * Why a file of its own: EXPLAIN runs code we do not control (output
 * functions of constants, catalog lookups, custom scans' callbacks), any of
 * which may raise an ERROR; the subtransaction that contains it, and the
 * bounds that keep it cheap, are this file's concern.
 *
 * What it costs: nothing before the node count, a walk of the plan state
 * tree that stops past NG_PLAN_TEXT_MAX_NODES nodes; then a subtransaction
 * (no transaction id is assigned: nothing is written), EXPLAIN's text, two
 * passes of the scrubber over it, and a copy.  The text is cut at
 * NG_PLAN_TEXT_MAX_BYTES.
 *
 * Locking: none of ours.  The subtransaction may take catalog locks (and
 * releases what it took when it ends); the caller must hold none of our
 * LWLocks or spinlocks.  A text is made only where a subtransaction can
 * start: in a transaction that is in progress and not aborted, not in
 * parallel mode, not in a parallel worker, and not from inside the making
 * of another text (EXPLAIN may run a query: an output function in SQL).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "compat.h"
#include "guc.h"
#include "plan_text.h"
#include "plan_text_scrub.h"

/*
 * The most nodes a plan may have for its text to be made.  EXPLAIN's time
 * and its recursion's stack grow with the nodes and the relations: on an
 * assertion build of 18 (the debug LOG of t/098 shows each text's time), a
 * plan of 14 nodes takes 0.1 to 0.6 ms, an Append of 997 Results about
 * 1 ms, a UNION ALL of 450 filtered scans of a table (902 nodes, 450
 * relations) 40 to 90 ms.  Plans of OLTP statements have tens of nodes, a
 * join over some partitions hundreds; above the bound (a UNION ALL of
 * thousands of branches, thousands of partitions scanned whole) the plan has
 * no text, and the walk that finds out stops at the bound (5 us for a plan
 * of 10,002 nodes).
 */
#define NG_PLAN_TEXT_MAX_NODES	1000


/* a text is being made (its EXPLAIN may run queries) */
static bool plan_text_busy = false;

/*
 * plan_text_allowed
 *		May a subtransaction start here (BeginInternalSubTransaction
 *		raises a FATAL error in a state it does not expect, and some majors
 *		an ERROR in parallel mode)?
 */
static bool
plan_text_allowed(QueryDesc *queryDesc)
{
	return queryDesc->planstate != NULL && !plan_text_busy &&
		!IsParallelWorker() && !IsInParallelMode() &&
		IsTransactionState() && !IsAbortedTransactionBlockState() &&
		!stack_is_too_deep();
}

/* the plan state tree's walk: each child counted and kept for its turn */
typedef struct PlanTextCount
{
	int			count;
	PlanState  *todo[NG_PLAN_TEXT_MAX_NODES + 1];
	int			ntodo;
} PlanTextCount;

static bool
plan_text_count_child(PlanState *ps, void *arg)
{
	PlanTextCount *c = (PlanTextCount *) arg;

	if (++c->count > NG_PLAN_TEXT_MAX_NODES)
		return true;
	c->todo[c->ntodo++] = ps;
	return false;
}

/*
 * plan_text_too_large
 *		Has the plan more than NG_PLAN_TEXT_MAX_NODES nodes (its subplans and
 *		initplans with it)?  A walk without recursion (each node's children
 *		are listed by core's planstate_tree_walker, then walked in turn),
 *		which stops at the first node past the bound.  Its list of nodes to
 *		walk (8 kB) is on the stack.
 */
static bool
plan_text_too_large(PlanState *root)
{
	PlanTextCount c;
	bool		too_large = false;

	c.count = 1;
	c.ntodo = 0;
	c.todo[c.ntodo++] = root;
	while (c.ntodo > 0 && !too_large)
		too_large = planstate_tree_walker(c.todo[--c.ntodo],
										  plan_text_count_child, &c);
	return too_large;
}

/*
 * plan_text_explain
 *		EXPLAIN (COSTS OFF) of queryDesc's plan, scrubbed and cut, in the
 *		current memory context.  May raise an ERROR.
 */
static char *
plan_text_explain(QueryDesc *queryDesc, int *len)
{
	ExplainState *es = NewExplainState();
	char	   *text;

	/* all but costs are off in a new state; said here, whatever it says */
	es->analyze = false;
	es->verbose = false;
	es->costs = false;
	es->buffers = false;
	es->wal = false;
	es->timing = false;
	es->summary = false;
	es->settings = false;
	es->format = EXPLAIN_FORMAT_TEXT;

	ExplainBeginOutput(es);
	ExplainPrintPlan(es, queryDesc);
	ExplainEndOutput(es);

	if (NG_DEBUG_FAULT(NG_FAULT_PLAN_TEXT_ERROR))
		elog(ERROR, "pg_stat_statements_ng: plan text fault injected");

	text = ng_plan_text_scrub(es->str->data, es->str->len, len);

	*len = ng_plan_text_cut(text, *len, NG_PLAN_TEXT_MAX_BYTES);
	return text;
}

/*
 * plan_text_in_subxact
 *		plan_text_explain in an internal subtransaction, in a memory context
 *		of its own, as PL/pgSQL runs a block with an exception handler:
 *		released when it succeeds, rolled back when it fails, the caller's
 *		memory context and resource owner restored either way.  The text is
 *		copied into the caller's context; NULL when anything failed.  A
 *		cancel that arrived meanwhile stays pending for the statement.
 */
static char *
plan_text_in_subxact(QueryDesc *queryDesc, int *len)
{
	MemoryContext caller = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	int			nest = GetCurrentTransactionNestLevel();
	MemoryContext volatile work = NULL;
	char	   *volatile copy = NULL;

	PG_TRY();
	{
		char	   *text;

		BeginInternalSubTransaction(NULL);
		work = AllocSetContextCreate(caller, "pg_stat_statements_ng plan text",
									 ALLOCSET_DEFAULT_SIZES);
		MemoryContextSwitchTo(work);
		text = plan_text_explain(queryDesc, len);

		copy = MemoryContextAlloc(caller, *len + 1);
		memcpy(copy, text, *len + 1);

		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(caller);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(caller);
		if (geterrcode() == ERRCODE_QUERY_CANCELED)
			QueryCancelPending = true;
		FlushErrorState();
		if (GetCurrentTransactionNestLevel() > nest)
			RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(caller);
		CurrentResourceOwner = owner;
		if (copy != NULL)
			pfree(copy);
		copy = NULL;
	}
	PG_END_TRY();

	if (work != NULL)
		MemoryContextDelete(work);
	return copy;
}

/*
 * ng_plan_text_make
 *		See plan_text.h.
 */
char *
ng_plan_text_make(QueryDesc *queryDesc, int *len, NgPlanTextResult *result)
{
	char	   *text;

	*len = 0;
	if (!plan_text_allowed(queryDesc))
	{
		*result = NG_PLAN_TEXT_FAILED;
		return NULL;
	}
	if (plan_text_too_large(queryDesc->planstate))
	{
		*result = NG_PLAN_TEXT_TOO_LARGE;
		return NULL;
	}

	plan_text_busy = true;
	text = plan_text_in_subxact(queryDesc, len);

	plan_text_busy = false;

	*result = text !=NULL ? NG_PLAN_TEXT_MADE : NG_PLAN_TEXT_FAILED;

	if (text == NULL)
		*len = 0;
	return text;
}
