/*-------------------------------------------------------------------------
 *
 * measure.c
 *		What the hooks (hooks.c, utility.c) share and keep as state: the
 *		nesting level, restored when (sub)transactions abort, and the
 *		sampling decision below a sample_rate of 1.  The key, the usage
 *		between snapshots and the count itself are measure.h's, inline.
 *
 * Why a file of its own: hooks.c and utility.c both use these, and
 * hooks.c installs utility.c's hook; with these in either of them the two
 * would call each other.  No lock of ours is taken here.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "utils/timestamp.h"

#include "guc.h"
#include "measure.h"

NG_HOT int	ng_nesting_level = 0;
int			ng_utility_depth = 0;

/*
 * The nesting level after an error.  Every hook restores the level it found
 * when the call it wraps returns; only the utility hook has a PG_CATCH,
 * which restores it there too.  The executor hooks and planning have no
 * frame (a frame per execution is a sigsetjmp per statement), so an error
 * raised under them skips their restore.  Whatever catches the error next
 * is one of:
 * - our utility hook's catch further out: it restores its own level;
 * - a subtransaction's rollback (a PL/pgSQL EXCEPTION block, a savepoint):
 *   the code that continues is the one that started the subtransaction, at
 *   the level it was started at, recorded here by its nesting depth in
 *   transactions at SUBXACT_EVENT_START_SUB and restored at ABORT_SUB;
 * - the top-level transaction's abort, after an error: every catch of ours
 *   has run, no hook of ours is running any more, level 0.  The only
 *   top-level abort without an error, while hooks run, is a procedure's
 *   ROLLBACK, inside its CALL (or DO): our utility hook's frame is running
 *   then (ng_utility_depth > 0; or the CALL is not tracked and opened no
 *   level), and the level, which no error skipped, is right as it is.  No
 *   executor hook is running then: a procedure can end a transaction only
 *   when called from CALL or DO, not from a query.
 * Subtransactions nested deeper than NG_SUBXACT_LEVELS, whose levels are not
 * recorded, leave the level to the first two.
 *
 * The same two aborts end the executions whose windows the error left open
 * (those opened at the level that continues, or deeper): timers.c notes
 * them as failures, at the levels given here.  The callbacks that do both
 * are hooks.c's.
 */
#define NG_SUBXACT_LEVELS	64
static int	subxact_level[NG_SUBXACT_LEVELS];

/* the sampling decision of the current top-level statement */
static TimestampTz sample_decided_for = 0;
static bool sample_in = true;

/*
 * ng_measure_subxact_start
 *		In a SUBXACT_EVENT_START_SUB callback: remember the level the
 *		subtransaction starts at, for its abort.
 */
void
ng_measure_subxact_start(void)
{
	int			depth = GetCurrentTransactionNestLevel();

	if (depth >= 0 && depth < NG_SUBXACT_LEVELS)
		subxact_level[depth] = ng_nesting_level;
}

/*
 * ng_level_after_subxact_abort
 *		In a SUBXACT_EVENT_ABORT_SUB callback: the nesting level of the code
 *		that continues after the abort (the level the subtransaction started
 *		at), or -1 if it was nested too deep to be recorded.
 */
int
ng_level_after_subxact_abort(void)
{
	int			depth = GetCurrentTransactionNestLevel();

	if (depth < 0 || depth >= NG_SUBXACT_LEVELS)
		return -1;
	return subxact_level[depth];
}

/*
 * ng_sampled_decide
 *		ng_sampled below a sample_rate of 1: decided once per top-level
 *		statement (by its start time), with probability sample_rate; the
 *		statements it runs follow the decision.  Parsing, and so
 *		normalization, is never sampled.
 */
bool
ng_sampled_decide(void)
{
	TimestampTz ts;

	ts = GetCurrentStatementStartTimestamp();
	if (ts != sample_decided_for)
	{
		sample_decided_for = ts;
		sample_in = pg_prng_double(&pg_global_prng_state) < ng_sample_rate;
	}
	return sample_in;
}
