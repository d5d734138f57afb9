/*-------------------------------------------------------------------------
 *
 * hooks.c
 *		_PG_init, and the parser, planner, executor and utility hooks that
 *		measure statements.
 *
 * Why a file of its own: this is where PostgreSQL calls us.  The hooks only
 * measure and hand samples to slots/count.c; they hold no lock of ours
 * across a call into PostgreSQL, and raise no error of ours: whatever goes
 * wrong in the extension degrades into a lost text or a counted loss.
 *
 * Nesting: one level counter, raised around planning, ExecutorRun,
 * ExecutorFinish and utility commands, as pg_stat_statements does; a
 * statement is top-level when it starts at level 0.  Each hook restores the
 * level it found (not one less) when the call it wraps returns; only the
 * utility hook has a PG_TRY frame, and measure.c restores the level an
 * error left raised (see there).
 *
 * Execution time and usage: measured by our own NgExecTimer per QueryDesc
 * (not an Instrumentation in queryDesc->totaltime), over the same windows
 * as totaltime: each ExecutorRun call (a cursor fetched in several calls
 * adds each), and ExecutorFinish.  Parallel workers' usage is added into
 * pgBufferUsage/pgWalUsage by core when the Gather finishes, inside the
 * ExecutorRun that runs it to completion, as totaltime sees it.  An
 * execution that an error ends is counted as a failure from the window it
 * left open (timers.h), without a PG_TRY frame.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "common/pg_prng.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "jit/jit.h"
#include "miscadmin.h"
#include "optimizer/planner.h"
#include "parser/analyze.h"
#include "storage/ipc.h"

#include "alloc.h"
#include "counters.h"
#include "hist.h"
#include "failures.h"
#include "guc.h"
#include "hooks.h"
#include "keeper_start.h"
#include "measure.h"
#include "planid.h"
#include "plan_text.h"
#include "plans.h"
#include "utility.h"
#include "waits.h"
#include "qtext.h"
#include "setup.h"
#include "shmem.h"
#include "slots/slots.h"
#include "timers.h"

PG_MODULE_MAGIC;


static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
NG_HOT static post_parse_analyze_hook_type prev_post_parse_analyze_hook = NULL;
NG_HOT static planner_hook_type prev_planner_hook = NULL;
NG_HOT static ExecutorStart_hook_type prev_ExecutorStart = NULL;
NG_HOT static ExecutorRun_hook_type prev_ExecutorRun = NULL;
NG_HOT static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
NG_HOT static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;

PGDLLEXPORT void _PG_init(void);

/*
 * ng_xact_callback, ng_subxact_callback
 *		When a (sub)transaction aborts: note the failures of the executions
 *		its error ended with a window open (timers.c), restore the nesting
 *		level of the code that goes on (measure.c explains both levels), and
 *		record the failures noted (failures.c); when a subtransaction starts,
 *		remember its level.  One pair of callbacks for all of it: core calls
 *		every transaction callback twice at each commit.
 */
static void
ng_xact_callback(XactEvent event, void *arg)
{
	if (event != XACT_EVENT_ABORT && event != XACT_EVENT_PARALLEL_ABORT)
		return;
	/* not a procedure's ROLLBACK inside its CALL (measure.c) */
	if (ng_utility_depth == 0)
	{
		ng_timers_abort(0);
		ng_nesting_level = 0;
	}
	ng_failures_flush();
}

static void
ng_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					SubTransactionId parentSubid, void *arg)
{
	int			level;

	if (event == SUBXACT_EVENT_START_SUB)
	{
		ng_measure_subxact_start();
		return;
	}
	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	level = ng_level_after_subxact_abort();
	if (level >= 0)
	{
		ng_timers_abort(level);
		ng_nesting_level = level;
	}
	ng_failures_flush();
}

/*
 * _PG_init
 *		Only when preloaded: define settings, then install the hooks.
 */
void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;

	ng_hist_init();
#ifdef USE_ASSERT_CHECKING
	/* the buckets samples go to agree with the bounds readers show */
	if (ng_hist_check() != 0)
		elog(FATAL, "pg_stat_statements_ng: histogram buckets disagree with their bounds");
#endif

	/* we use core's queryid */
	EnableQueryId();
	ng_waits_define_gucs();
	/* before ng_define_gucs, which reserves the prefix */
	ng_planid_define_guc();
	ng_plans_define_guc();
	ng_define_gucs();
	ng_install_hooks();
	ng_timers_init();
	RegisterXactCallback(ng_xact_callback, NULL);
	RegisterSubXactCallback(ng_subxact_callback, NULL);
	ng_keeper_register();
	ng_waits_register_sampler();
}

static void
ng_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	ng_store_request_shmem();
	ng_waits_request_shmem();
}

static void
ng_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	ng_store_init_shmem();
	ng_waits_init_shmem();
}

/*
 * ng_parse_note
 *		Note the statement's text (ng_slots_note_parse, a tail call: most
 *		statements are known already, and cost it a lookup).
 */
static inline void
ng_parse_note(ParseState *pstate, Query *query, JumbleState *jstate)
{
	if (ng_shared == NULL || !ng_enabled(ng_nesting_level))
		return;

	/* EXECUTE counts for the statement it runs */
	if (query->utilityStmt && ng_track_utility &&
		IsA(query->utilityStmt, ExecuteStmt))
	{
		query->queryId = UINT64CONST(0);
		return;
	}
	if (query->queryId == UINT64CONST(0))
		return;
	ng_slots_note_parse(query, pstate->p_sourcetext, jstate,
						ng_nesting_level == 0);
}

/*
 * ng_post_parse_analyze_first
 *		The parse analysis hook when it has something to do first: the hook
 *		installed before ours, or failures noted and not yet recorded.
 */
static pg_noinline void
ng_post_parse_analyze_first(ParseState *pstate, Query *query,
							JumbleState *jstate)
{
	if (prev_post_parse_analyze_hook)
		prev_post_parse_analyze_hook(pstate, query, jstate);
	if (ng_failures_pending)
	{
		ng_failures_record();
		ng_log_losses();
	}
	ng_parse_note(pstate, query, jstate);
}

/*
 * ng_post_parse_analyze
 *		The usual case apart (no hook before ours, no failure to record), so
 *		that it keeps no arguments across a call and needs no stack frame.
 */
static void
ng_post_parse_analyze(ParseState *pstate, Query *query, JumbleState *jstate)
{
	if (prev_post_parse_analyze_hook || unlikely(ng_failures_pending))
		ng_post_parse_analyze_first(pstate, query, jstate);
	else
		ng_parse_note(pstate, query, jstate);
}

/* the next planner hook, or the standard planner */
static inline PlannedStmt *
ng_plan_next(NG_PLANNER_ARGS)
{
	if (prev_planner_hook)
		return prev_planner_hook(NG_PLANNER_PASS);
	return standard_planner(NG_PLANNER_PASS);
}

/*
 * ng_plan_identify
 *		Give a plan of a tracked statement its planid (planid.c), once, as it
 *		is made: every execution of it, a cached plan's too, reads it there.
 */
static inline PlannedStmt *
ng_plan_identify(PlannedStmt *result, int level)
{
	if (ng_track_plans && result != NULL &&
		result->queryId != UINT64CONST(0) && ng_enabled(level))
		ng_planid_attach(result, ng_planid_compute(result));
	return result;
}

/*
 * ng_planner_measured
 *		ng_planner when planning is tracked: time the planning and count it
 *		as a sample.  Out of line, so that the untracked case carries none
 *		of its locals.
 */
static pg_noinline PlannedStmt *
ng_planner_measured(NG_PLANNER_ARGS)
{
	PlannedStmt *result;
	int			level = ng_nesting_level;
	instr_time	start;
	instr_time	duration;
	BufferUsage bufusage_start = pgBufferUsage;
	WalUsage	walusage_start = pgWalUsage;
	BufferUsage bufusage;
	WalUsage	walusage;
	NgSample	sample = {0};

	INSTR_TIME_SET_CURRENT(start);
	ng_nesting_level = level + 1;
	result = ng_plan_next(NG_PLANNER_PASS);
	ng_nesting_level = level;

	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	sample.kind = NG_PLAN;
	sample.time = INSTR_TIME_GET_MILLISEC(duration);
	ng_usage_since(&sample, &bufusage, &bufusage_start,
				   &walusage, &walusage_start);
	ng_count(parse->queryId, query_string, parse->stmt_location,
			 parse->stmt_len, false, &sample);
	return ng_plan_identify(result, level);
}

/*
 * ng_planner
 *		Planning runs one level deeper, without a PG_TRY frame: an error
 *		leaves the level raised until the next of our catches (ExecutorRun,
 *		ExecutorFinish, ProcessUtility) restores its own level, or the
 *		(sub)transaction abort restores it (measure.c).
 */
static PlannedStmt *
ng_planner(NG_PLANNER_ARGS)
{
	PlannedStmt *result;
	int			level = ng_nesting_level;

	/* the wait sampler's key: this statement's, from its planning on */
	if (level == 0 && ng_enabled(0))
		ng_waits_publish_if_new(parse->queryId);
	if (ng_track_planning && ng_shared != NULL && ng_enabled(level) &&
		query_string != NULL && parse->queryId != UINT64CONST(0))
		return ng_planner_measured(NG_PLANNER_PASS);

	ng_nesting_level = level + 1;
	result = ng_plan_next(NG_PLANNER_PASS);
	ng_nesting_level = level;
	return ng_plan_identify(result, level);
}

static void
ng_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	/*
	 * the wait sampler's key and the plan's id, unless published already; on
	 * 18 the plan's id for pg_stat_activity's backend entry too
	 */
	if (ng_nesting_level == 0 && ng_enabled(0))
	{
		ng_waits_publish_plan_if_new(queryDesc->plannedstmt->queryId,
									 ng_planid_of(queryDesc->plannedstmt));
		ng_report_planid_compat(queryDesc->plannedstmt);
	}
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	/* measure the whole run, over the windows totaltime would have */
	if (ng_shared != NULL && ng_enabled(ng_nesting_level) &&
		queryDesc->plannedstmt->queryId != UINT64CONST(0))
		ng_timer_begin(queryDesc);
}

/*
 * ng_ExecutorRun
 *		One level deeper, in a window of the statement's timer if it has one.
 *		No PG_TRY frame: an error leaves the level raised and the window open,
 *		for the abort to restore and to note (hooks.c's abort callbacks,
 *		measure.c, timers.h).
 */
static void
ng_ExecutorRun(NG_EXECUTOR_RUN_ARGS)
{
	NgExecTimer *t = ng_timer_find(queryDesc);
	int			level = ng_nesting_level;

	if (t)
		ng_timer_start(t);
	ng_nesting_level = level + 1;
	if (prev_ExecutorRun)
		prev_ExecutorRun(NG_EXECUTOR_RUN_PASS);
	else
		standard_ExecutorRun(NG_EXECUTOR_RUN_PASS);
	ng_nesting_level = level;
	if (t)
		ng_timer_stop(t);
}

/*
 * ng_finish_timed
 *		ExecutorFinish one level deeper, in a window of t if it is set.  Out
 *		of line: a SELECT's ExecutorFinish (ng_ExecutorFinish) needs none of
 *		its locals.
 */
static pg_noinline void
ng_finish_timed(QueryDesc *queryDesc, NgExecTimer *t)
{
	int			level = ng_nesting_level;

	if (t)
		ng_timer_start(t);
	ng_nesting_level = level + 1;
	if (prev_ExecutorFinish)
		prev_ExecutorFinish(queryDesc);
	else
		standard_ExecutorFinish(queryDesc);
	ng_nesting_level = level;
	if (t)
		ng_timer_stop(t);
}

/*
 * ng_ExecutorFinish
 *		As ExecutorRun, but for a SELECT's when no other hook follows ours.
 *		A SELECT without a data-modifying WITH has nothing to finish: no
 *		ModifyTable node to run to completion, no AFTER trigger of its own
 *		(what the functions it called queued, their own queries fired), so
 *		standard_ExecutorFinish runs no statement and raises no error for it.
 *		It is not timed (a fraction of a microsecond, and no buffer or WAL
 *		usage, left out of total_exec_time), and runs at the caller's level.
 *		With another hook after ours, which may do anything, it is timed.
 */
static void
ng_ExecutorFinish(QueryDesc *queryDesc)
{
	if (queryDesc->operation == CMD_SELECT &&
		!queryDesc->plannedstmt->hasModifyingCTE && prev_ExecutorFinish == NULL)
	{
		standard_ExecutorFinish(queryDesc);
		return;
	}
	ng_finish_timed(queryDesc, ng_timer_find(queryDesc));
}

/*
 * plan_text_log
 *		Tests (debug_fault plan_text_log, plan_text_error; assertion builds):
 *		the plan's text, or why there is none, and the time it took, at LOG.
 */
static pg_noinline void
plan_text_log(QueryDesc *queryDesc)
{
	static const char *const why[] = {"made", "too large", "failed"};
	NgPlanTextResult result;
	int			len;
	char	   *text;
	instr_time	start;
	instr_time	took;

	INSTR_TIME_SET_CURRENT(start);
	text = ng_plan_text_make(queryDesc, &len, &result);

	INSTR_TIME_SET_CURRENT(took);
	INSTR_TIME_SUBTRACT(took, start);
	ereport(LOG,
			(errmsg_internal("plan text %s (%d bytes, %.3f ms):\n%s", why[result],
							 len, INSTR_TIME_GET_MILLISEC(took), text ? text : ""),
			 errhidestmt(true)));
	if (text)
		pfree(text);
}

StaticAssertDecl(sizeof(NgSample) == 2 * sizeof(int) + 11 * sizeof(int64),
				 "ng_ExecutorEnd sets every field of NgSample");

static void
ng_ExecutorEnd(QueryDesc *queryDesc)
{
	NgExecTimer *t = ng_timer_find(queryDesc);

	if (unlikely(NG_DEBUG_FAULT(NG_FAULT_PLAN_TEXT_LOG) ||
				 NG_DEBUG_FAULT(NG_FAULT_PLAN_TEXT_ERROR)) && !IsParallelWorker())
		plan_text_log(queryDesc);

	/* a timer was begun with ng_shared set */
	if (t && ng_enabled(ng_nesting_level))
	{
		EState	   *estate = queryDesc->estate;
		NgSample	sample;

		Assert(!t->running);
		/* every field is set: no zeroing of the whole */
		sample.kind = NG_EXEC;
		sample.failure = NG_SUCCEEDED;
		/* as totaltime->total * 1000.0 */
		sample.time = INSTR_TIME_GET_DOUBLE(t->counter) * 1000.0;
		sample.rows = NG_ROWS_PROCESSED(estate);
		sample.bufusage = NULL;
		sample.bufusage_base = NULL;
		if (t->windows == 1)
		{
			sample.bufusage = &t->bufusage_end;
			sample.bufusage_base = &t->bufusage_start;
		}
		else if (t->windows > 1)
			sample.bufusage = &t->bufusage;
		sample.walusage = t->wal_written ? &t->walusage : NULL;
		sample.jitusage = estate->es_jit ? &estate->es_jit->instr : NULL;
		sample.parallel_workers_to_launch = NG_PARALLEL_TO_LAUNCH(estate);
		sample.parallel_workers_launched = NG_PARALLEL_LAUNCHED(estate);
		/* plan statistics: none while track_plans is off */
		sample.planid = likely(ng_track_plans) ?
			ng_planid_of(queryDesc->plannedstmt) : 0;
		sample.qd = queryDesc;
		ng_count(queryDesc->plannedstmt->queryId, queryDesc->sourceText,
				 queryDesc->plannedstmt->stmt_location,
				 queryDesc->plannedstmt->stmt_len, false, &sample);
	}

	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

/*
 * ng_install_hooks
 *		Chain our hooks in front of whatever was installed before.
 */
void
ng_install_hooks(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = ng_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = ng_shmem_startup;
	prev_post_parse_analyze_hook = post_parse_analyze_hook;
	post_parse_analyze_hook = ng_post_parse_analyze;
	prev_planner_hook = planner_hook;
	planner_hook = ng_planner;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = ng_ExecutorStart;
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = ng_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = ng_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = ng_ExecutorEnd;
	ng_install_utility_hook();
}
