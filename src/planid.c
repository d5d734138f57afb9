/*-------------------------------------------------------------------------
 *
 * planid.c
 *		Plan identity: a 64-bit hash of a plan's shape, computed by the
 *		planner hook once per plan, and carried in the plan to each of its
 *		executions.
 *
 * Why a file of its own: the walk over plan trees is the one place that
 * knows plan node types; nothing else of ours reads a plan tree.
 *
 * What the id hashes: each node's type (its tag), and of the nodes that
 * have them, the relation a scan reads and the index it uses (their OIDs:
 * an id compares within one server, not across servers), the index scan's
 * direction, the join type, the aggregation strategy, the set operation
 * and its strategy, and a ModifyTable's operation and target relation; the
 * tree's structure, in order (so the join order and which side is inner),
 * and each subplan's tree after the main one.  Not hashed: costs, row and
 * width estimates, constants, expressions, worker counts.  So the same
 * statement with other constants gets the same id whenever the planner
 * chose the same shape for it, in every backend, and a cached (generic)
 * plan keeps the id it was given when it was made.
 *
 * A node type this file does not know (a newer minor's) is hashed by its
 * tag, and its lefttree and righttree are walked as every Plan has them:
 * never an error (a test fault, guc.h, makes every Hash Join such a node).
 * The walk is iterative, with a stack of at most NG_PLANID_MAX_DEPTH
 * frames on the C stack: a node deeper than that is hashed as a marker and
 * its subtree skipped, so the time is linear in the nodes and nothing is
 * allocated for the walk.
 *
 * Where the id is kept: on 18 in PlannedStmt.planId, unless another
 * extension set that first (compat.h); before 18, or when planId is
 * taken, in the carrier (planid.h), two PlanInvalItems at the head of
 * PlannedStmt.invalItems.  Either lives and dies with the plan, and every
 * copy of the plan keeps it (the plan cache copies the whole PlannedStmt):
 * nothing keyed by a pointer that a freed and reused PlannedStmt could
 * fool.
 *
 * Locks: none; backend-local.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pg_list.h"
#include "parser/parsetree.h"
#include "utils/guc.h"

#include "guc.h"
#include "planid.h"

bool		ng_track_plans = true;

/* markers, distinct from every tag */
#define PLANID_END		0x7e000001u /* a node's children end */
#define PLANID_NONE		0x7e000002u /* a child that is NULL */
#define PLANID_DEEP		0x7e000003u /* a node past the depth bound */
#define PLANID_SUBPLAN	0x7e000004u /* a subplan's tree begins */
#define PLANID_NOTREL	0x7e000005u /* a range table entry, not a relation */

/* one node being walked: its next child to visit */
typedef struct PlanidFrame
{
	const Plan *plan;
	int			next;			/* 0 lefttree, 1 righttree, 2.. extra */
}			PlanidFrame;

/* 64-bit FNV-1a over 32-bit words */
static inline uint64
planid_mix(uint64 h, uint32 v)
{
	return (h ^ v) * UINT64CONST(0x100000001b3);
}

/* the relation of range table index rti: its OID, or its kind */
static uint64
planid_rel(uint64 h, const PlannedStmt *pstmt, Index rti)
{
	const RangeTblEntry *rte;

	if (rti == 0 || rti > (Index) list_length(pstmt->rtable))
		return planid_mix(h, PLANID_NONE);
	rte = rt_fetch(rti, pstmt->rtable);
	if (rte->rtekind == RTE_RELATION)
		return planid_mix(h, (uint32) rte->relid);
	return planid_mix(planid_mix(h, PLANID_NOTREL), (uint32) rte->rtekind);
}

/*
 * planid_known_tag
 *		The type plan is hashed and walked as: its tag, or T_Invalid (a type
 *		not known) for a Hash Join under the test fault (guc.h).
 */
static inline NodeTag
planid_known_tag(const Plan *plan)
{
	if (NG_DEBUG_FAULT(NG_FAULT_PLANID_UNKNOWN_HASHJOIN) &&
		IsA(plan, HashJoin))
		return T_Invalid;
	return nodeTag(plan);
}

/*
 * planid_node
 *		Hash what one node contributes of its own (not its children).
 */
static uint64
planid_node(uint64 h, const PlannedStmt *pstmt, const Plan *plan)
{
	h = planid_mix(h, (uint32) nodeTag(plan));
	switch (planid_known_tag(plan))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
		case T_SubqueryScan:
		case T_FunctionScan:
		case T_ValuesScan:
		case T_TableFuncScan:
		case T_CteScan:
		case T_NamedTuplestoreScan:
		case T_WorkTableScan:
		case T_ForeignScan:
		case T_CustomScan:
			return planid_rel(h, pstmt, ((const Scan *) plan)->scanrelid);
		case T_IndexScan:
			h = planid_rel(h, pstmt, ((const Scan *) plan)->scanrelid);
			h = planid_mix(h, (uint32) ((const IndexScan *) plan)->indexid);
			return planid_mix(h, (uint32) ((const IndexScan *) plan)->indexorderdir);
		case T_IndexOnlyScan:
			h = planid_rel(h, pstmt, ((const Scan *) plan)->scanrelid);
			h = planid_mix(h, (uint32) ((const IndexOnlyScan *) plan)->indexid);
			return planid_mix(h, (uint32) ((const IndexOnlyScan *) plan)->indexorderdir);
		case T_BitmapIndexScan:
			return planid_mix(h, (uint32) ((const BitmapIndexScan *) plan)->indexid);
		case T_NestLoop:
		case T_MergeJoin:
		case T_HashJoin:
			return planid_mix(h, (uint32) ((const Join *) plan)->jointype);
		case T_Agg:
			return planid_mix(h, (uint32) ((const Agg *) plan)->aggstrategy);
		case T_SetOp:
			h = planid_mix(h, (uint32) ((const SetOp *) plan)->cmd);
			return planid_mix(h, (uint32) ((const SetOp *) plan)->strategy);
		case T_ModifyTable:
			h = planid_mix(h, (uint32) ((const ModifyTable *) plan)->operation);
			return planid_rel(h, pstmt, ((const ModifyTable *) plan)->nominalRelation);
		default:
			/* the tag alone, known type or not */
			return h;
	}
}

/* the list of further children a node type has, or NIL */
static const List *
planid_extra(const Plan *plan)
{
	switch (planid_known_tag(plan))
	{
		case T_Append:
			return ((const Append *) plan)->appendplans;
		case T_MergeAppend:
			return ((const MergeAppend *) plan)->mergeplans;
		case T_BitmapAnd:
			return ((const BitmapAnd *) plan)->bitmapplans;
		case T_BitmapOr:
			return ((const BitmapOr *) plan)->bitmapplans;
		case T_CustomScan:
			return ((const CustomScan *) plan)->custom_plans;
		default:
			return NIL;
	}
}

/*
 * planid_child
 *		Frame f's next child into *child (NULL: an absent one); false when
 *		it has none left.  lefttree and righttree, then the extra list, then
 *		a SubqueryScan's subquery.
 */
static bool
planid_child(PlanidFrame * f, const Plan **child)
{
	const List *extra;
	int			k = f->next++;

	if (k == 0)
	{
		*child = f->plan->lefttree;
		return true;
	}
	if (k == 1)
	{
		*child = f->plan->righttree;
		return true;
	}
	extra = planid_extra(f->plan);
	if (k - 2 < list_length(extra))
	{
		*child = (const Plan *) list_nth(extra, k - 2);
		return true;
	}
	if (IsA(f->plan, SubqueryScan) && k - 2 == list_length(extra))
	{
		*child = ((const SubqueryScan *) f->plan)->subplan;
		return true;
	}
	return false;
}

/*
 * planid_leaf
 *		Has plan no child at all?  Then the walk hashes what its children's
 *		visit would (two absent children, the end) without a frame.
 */
static inline bool
planid_leaf(const Plan *plan)
{
	return plan->lefttree == NULL && plan->righttree == NULL &&
		planid_extra(plan) == NIL && !IsA(plan, SubqueryScan);
}

static inline uint64
planid_leaf_end(uint64 h)
{
	return planid_mix(planid_mix(planid_mix(h, PLANID_NONE), PLANID_NONE),
					  PLANID_END);
}

/*
 * planid_walk
 *		Hash the children of root, a node hashed already that has some, into
 *		h, depth first, each node before its children and an end marker
 *		after them.  A node with children at the depth bound is hashed with
 *		a marker instead of them.  No recursion, no allocation.  Out of
 *		line: a plan of one node (SELECT 1) needs none of its stack.
 */
static pg_noinline uint64
planid_walk(uint64 h, const PlannedStmt *pstmt, const Plan *root)
{
	PlanidFrame stack[NG_PLANID_MAX_DEPTH];
	int			depth = 0;

	stack[depth].plan = root;
	stack[depth++].next = 0;
	while (depth > 0)
	{
		const Plan *child;

		if (!planid_child(&stack[depth - 1], &child))
		{
			h = planid_mix(h, PLANID_END);
			depth--;
			continue;
		}
		if (child == NULL)
		{
			h = planid_mix(h, PLANID_NONE);
			continue;
		}
		h = planid_node(h, pstmt, child);
		if (planid_leaf(child))
			h = planid_leaf_end(h);
		else if (depth == NG_PLANID_MAX_DEPTH)
			h = planid_mix(h, PLANID_DEEP);
		else
		{
			stack[depth].plan = child;
			stack[depth++].next = 0;
		}
	}
	return h;
}

/* hash the tree under root (NULL: none) into h */
static inline uint64
planid_tree(uint64 h, const PlannedStmt *pstmt, const Plan *root)
{
	if (root == NULL)
		return planid_mix(h, PLANID_NONE);
	h = planid_node(h, pstmt, root);
	if (planid_leaf(root))
		return planid_leaf_end(h);
	return planid_walk(h, pstmt, root);
}

/*
 * ng_planid_compute
 *		The id of pstmt's plan: its main tree, then each subplan's.  Never
 *		0 (0 means none).  No lock, no allocation, no error.
 */
uint64
ng_planid_compute(const PlannedStmt *pstmt)
{
	uint64		h = UINT64CONST(0xcbf29ce484222325);
	ListCell   *lc;

	h = planid_mix(h, (uint32) pstmt->commandType);
	h = planid_tree(h, pstmt, pstmt->planTree);
	foreach(lc, pstmt->subplans)
		h = planid_tree(planid_mix(h, PLANID_SUBPLAN), pstmt,
						(const Plan *) lfirst(lc));
	/* spread the last words' bits (murmur3's finalizer) */
	h ^= h >> 33;
	h *= UINT64CONST(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64CONST(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h != 0 ? h : 1;
}

/*
 * ng_planid_attach
 *		Give pstmt the id planid: on 18, in PlannedStmt.planId, unless
 *		another extension set it (compat.h); else in the carrier at the head
 *		of its invalItems (planid.h).  One allocation holds a new List (core's List
 *		layout: its cells inline), its cells (the carrier's two, then the
 *		old list's) and the carrier's two items: nothing frees an item
 *		alone, and a copy of the plan copies each.  The old list is left to
 *		the planner's memory context.  Allocates in the current context,
 *		the planner's, where pstmt was made, without raising an error: out of
 *		memory, the plan is left without an id (a NULL planid).  No lock.
 */
void
ng_planid_attach(PlannedStmt *pstmt, uint64 planid)
{
	List	   *old = pstmt->invalItems;
	int			n;
	Size		cells;
	List	   *list;
	PlanInvalItem *items;

	if (ng_pstmt_set_planid_compat(pstmt, planid))
		return;
	n = 2 + list_length(old);
	cells = offsetof(List, initial_elements) + n * sizeof(ListCell);
	list = palloc_extended(MAXALIGN(cells) + 2 * sizeof(PlanInvalItem),
						   MCXT_ALLOC_NO_OOM);
	if (list == NULL)
		return;
	items = (PlanInvalItem *) ((char *) list + MAXALIGN(cells));
	items[0].type = T_PlanInvalItem;
	items[0].cacheId = NG_PLANID_CARRIER_HI;
	items[0].hashValue = (uint32) (planid >> 32);
	items[1].type = T_PlanInvalItem;
	items[1].cacheId = NG_PLANID_CARRIER_LO;
	items[1].hashValue = (uint32) planid;
	list->type = T_List;
	list->length = n;
	list->max_length = n;
	list->elements = list->initial_elements;
	list->initial_elements[0].ptr_value = &items[0];
	list->initial_elements[1].ptr_value = &items[1];
	if (old != NIL)
		memcpy(&list->initial_elements[2], old->elements,
			   (n - 2) * sizeof(ListCell));
	pstmt->invalItems = list;
}

/*
 * ng_planid_define_guc
 *		pg_stat_statements_ng.track_plans.
 */
void
ng_planid_define_guc(void)
{
	DefineCustomBoolVariable("pg_stat_statements_ng.track_plans",
							 "Computes an id of each plan's shape when it is made.",
							 "Plans made while it is off have no planid.",
							 &ng_track_plans,
							 true,
							 PGC_SUSET,
							 0,
							 NULL,
							 NULL,
							 NULL);
}
