/*-------------------------------------------------------------------------
 *
 * planid.h
 *		Plan identity (planid.c): a 64-bit id of a plan's shape, computed
 *		once when the plan is made, and carried in the PlannedStmt to every
 *		execution of it.
 *
 * Owns: the setting pg_stat_statements_ng.track_plans, the walk that hashes
 * a plan tree, and the two PlanInvalItems that carry the id in
 * PlannedStmt.invalItems (NG_PLANID_CARRIER_*) where 18's PlannedStmt.planId
 * cannot (before 18, or set by another extension; compat.h).
 *
 * Locks: none.  Everything here is backend-local: the id lives in the plan,
 * in the memory of whoever owns the plan (the plan cache, a portal).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_PLANID_H
#define NG_PLANID_H

#include "nodes/plannodes.h"

#include "compat.h"
#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

/* pg_stat_statements_ng.track_plans */
extern bool ng_track_plans;

/* plan nodes below this depth are hashed as a marker, not walked */
#define NG_PLANID_MAX_DEPTH		1024

/*
 * The carrier: two PlanInvalItems at the head of PlannedStmt.invalItems,
 * the id's high and low halves in their hashValue.  Their cacheIds are
 * negative, and no syscache has a negative id, so that no invalidation
 * matches them (the plan cache compares cacheId first).
 */
#define NG_PLANID_CARRIER_HI	(-0x4e4750)
#define NG_PLANID_CARRIER_LO	(-0x4e4751)

/* Functions in planid.c */
extern void ng_planid_define_guc(void);
extern uint64 ng_planid_compute(const PlannedStmt *pstmt);
extern void ng_planid_attach(PlannedStmt *pstmt, uint64 planid);

/*
 * ng_planid_of
 *		The planid ng_planid_attach gave pstmt: its carrier's, or without
 *		one, what compat.h's NG_PSTMT_PLANID gives (18's planId, ours or
 *		another extension's; a parallel worker's copy of it), 0 where the
 *		major has no field or none was given (track_plans off).  A few
 *		loads and compares; no call.
 */
static inline uint64
ng_planid_of(const PlannedStmt *pstmt)
{
	const List *items = pstmt->invalItems;

	if (items != NIL && list_length(items) >= 2)
	{
		const PlanInvalItem *hi = (const PlanInvalItem *) linitial(items);
		const PlanInvalItem *lo = (const PlanInvalItem *) lsecond(items);

		if (hi->cacheId == NG_PLANID_CARRIER_HI &&
			lo->cacheId == NG_PLANID_CARRIER_LO)
			return ((uint64) hi->hashValue << 32) | lo->hashValue;
	}
	return (uint64) NG_PSTMT_PLANID(pstmt);
}

#pragma GCC visibility pop

#endif							/* NG_PLANID_H */
