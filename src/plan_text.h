/*-------------------------------------------------------------------------
 *
 * plan_text.h
 *		A plan's text for pg_stat_statements_ng_plans (plan_text.c): EXPLAIN's
 *		text format without costs, every constant replaced by $n as in
 *		statement texts.
 *
 * Locks: none of ours may be held by the caller (the text is made in a
 * subtransaction, which may take catalog locks).  Backend-local.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_PLAN_TEXT_H
#define NG_PLAN_TEXT_H

#include "executor/execdesc.h"

#pragma GCC visibility push(hidden)

/*
 * The most bytes of a text: an Append of 997 Results takes 19 kB, 900 nodes
 * of which half carry a filter about 100 kB; a longer text is cut at a line
 * end (t/098).  The loader refuses a saved text longer than this.
 */
#define NG_PLAN_TEXT_MAX_BYTES	65536

typedef enum NgPlanTextResult
{
	NG_PLAN_TEXT_MADE = 0,		/* the text is returned */
	NG_PLAN_TEXT_TOO_LARGE,		/* more nodes than the bound: no text */
	NG_PLAN_TEXT_FAILED			/* EXPLAIN failed (the error was caught) */
} NgPlanTextResult;

/*
 * ng_plan_text_make
 *		The literal-free text of queryDesc's plan, palloc'd in the current
 *		memory context, with its length in *len; NULL (and why in *result)
 *		when none could be made.  Called at ExecutorEnd, before the executor
 *		is shut down (queryDesc->planstate is valid), never in a parallel
 *		worker.  Never raises an ERROR.
 */
extern char *ng_plan_text_make(QueryDesc *queryDesc, int *len,
							   NgPlanTextResult *result);

#pragma GCC visibility pop

#endif							/* NG_PLAN_TEXT_H */
