/*-------------------------------------------------------------------------
 *
 * utility.c
 *		The ProcessUtility hook: measures utility statements.
 *
 * Why a file of its own: hooks.c's executor and planner hooks are the hot
 * path of every statement; this one, with its queryId compatibility and
 * row counting, is only for utility statements.  Same rules as hooks.c:
 * no lock of ours across a call into PostgreSQL, no error of ours.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/instrument.h"
#include "tcop/utility.h"

#include "failures.h"
#include "measure.h"
#include "shmem.h"
#include "utility.h"
#include "waits.h"

static ProcessUtility_hook_type prev_ProcessUtility = NULL;

/* rows of a utility statement, as pg_stat_statements counts them */
static uint64
ng_utility_rows(const QueryCompletion *qc)
{
	if (qc && (qc->commandTag == CMDTAG_COPY ||
			   qc->commandTag == CMDTAG_FETCH ||
			   qc->commandTag == CMDTAG_SELECT ||
			   qc->commandTag == CMDTAG_REFRESH_MATERIALIZED_VIEW))
		return qc->nprocessed;
	return 0;
}

/*
 * In PG_CATCH of ProcessUtility: note the failure, with its time so far
 * (queryId 0: a statement not measured)
 */
static void
ng_utility_note_failure(uint64 queryId, const instr_time *start)
{
	NgKey		key;
	instr_time	duration;

	if (queryId == UINT64CONST(0) || !ng_sampled())
		return;
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, *start);
	ng_make_key(&key, queryId);
	ng_failure_note(&key, geterrcode(), INSTR_TIME_GET_MILLISEC(duration));
}

/* the next ProcessUtility hook, or the standard one */
static inline void
ng_utility_next(PlannedStmt *pstmt, const char *queryString,
				bool readOnlyTree, ProcessUtilityContext context,
				ParamListInfo params, QueryEnvironment *queryEnv,
				DestReceiver *dest, QueryCompletion *qc)
{
	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

/*
 * ng_utility_key
 *		The queryId a utility statement counts under (0: not measured), and,
 *		for a measured one at the top level, the wait sampler's key (waits.h).
 *		One not counted publishes nothing: its st_query_id is not the one
 *		published, so the sampler counts it for no statement (EXECUTE's
 *		statement publishes at its own ExecutorStart).  The queryId is left
 *		as it is for the hooks after ours (contrib's, when both are loaded,
 *		counts utility statements by it too; what runs inside has queryIds
 *		of its own).  contrib's hook does zero it before calling the next
 *		one: a statement that parse analysis gave a queryId, and that
 *		arrives without one, gets it computed again, as parse analysis did.
 *		Subcommands (which have no queryId of their own) are left alone.
 */
static uint64
ng_utility_key(PlannedStmt *pstmt, const char *queryString,
			   ProcessUtilityContext context, bool measure, int level)
{
	uint64		queryId = measure ? pstmt->queryId : UINT64CONST(0);

	if (measure && queryId == UINT64CONST(0) &&
		context != PROCESS_UTILITY_SUBCOMMAND && IsQueryIdEnabled())
		queryId = ng_utility_queryid_compat(pstmt, queryString);
	if (measure && level == 0)
		ng_waits_publish(queryId, 0);
	return queryId;
}

static void
ng_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
				  bool readOnlyTree, ProcessUtilityContext context,
				  ParamListInfo params, QueryEnvironment *queryEnv,
				  DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	int			level = ng_nesting_level;	/* restored as found (measure.c) */
	uint64		saved_queryId;
	int			saved_location = pstmt->stmt_location;
	int			saved_len = pstmt->stmt_len;
	bool		enabled = ng_shared != NULL && ng_track_utility &&
		ng_enabled(ng_nesting_level);
	bool		measure = enabled && !NG_UTILITY_NOT_COUNTED(parsetree);
	bool		bump = NG_UTILITY_BUMPS_LEVEL(parsetree, measure);
	instr_time	start;
	BufferUsage bufusage_start;
	WalUsage	walusage_start;

	saved_queryId = ng_utility_key(pstmt, queryString, context, measure,
								   level);

	/* nothing to measure or restore (EXECUTE, PREPARE): no PG_TRY frame */
	if (!measure && !bump)
	{
		ng_utility_next(pstmt, queryString, readOnlyTree, context, params,
						queryEnv, dest, qc);
		return;
	}

	if (measure)
	{
		bufusage_start = pgBufferUsage;
		walusage_start = pgWalUsage;
		INSTR_TIME_SET_CURRENT(start);
	}

	ng_nesting_level = bump ? level + 1 : level;
	ng_utility_depth++;
	PG_TRY();
	{
		ng_utility_next(pstmt, queryString, readOnlyTree, context, params,
						queryEnv, dest, qc);
	}
	PG_CATCH();
	{
		ng_utility_depth--;
		ng_nesting_level = level;
		ng_utility_note_failure(measure ? saved_queryId : 0, &start);
		PG_RE_THROW();
	}
	PG_END_TRY();
	ng_utility_depth--;
	ng_nesting_level = level;

	if (measure && saved_queryId != UINT64CONST(0))
	{
		NgSample	sample = {0};
		BufferUsage bufusage;
		WalUsage	walusage;
		instr_time	duration;

		INSTR_TIME_SET_CURRENT(duration);
		INSTR_TIME_SUBTRACT(duration, start);
		sample.kind = NG_EXEC;
		sample.time = INSTR_TIME_GET_MILLISEC(duration);
		sample.rows = ng_utility_rows(qc);
		ng_usage_since(&sample, &bufusage, &bufusage_start,
					   &walusage, &walusage_start);
		ng_count(saved_queryId, queryString, saved_location, saved_len, true,
				 &sample);
	}
}

/*
 * ng_install_utility_hook
 *		Chain ng_ProcessUtility in front of whatever was installed before.
 */
void
ng_install_utility_hook(void)
{
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = ng_ProcessUtility;
}
