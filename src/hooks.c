/*-------------------------------------------------------------------------
 *
 * hooks.c
 *		_PG_init, and the parser, planner, executor and utility hooks that
 *		measure statements.
 *
 * Why a file of its own: this is where PostgreSQL calls us.  The hooks only
 * measure and hand samples to slots.c; they hold no lock of ours across a
 * call into PostgreSQL, and raise no error of ours: whatever goes wrong in
 * the extension degrades into a lost text or a counted loss.
 *
 * Nesting: one level counter, raised around planning, ExecutorRun,
 * ExecutorFinish and utility commands, as pg_stat_statements does; a
 * statement is top-level when it starts at level 0.  Each hook restores the
 * level it found (not one less); planning has no PG_TRY frame, and
 * measure.c restores the level an error left raised (see there).
 *
 * Execution time and usage: measured by our own NgExecTimer per QueryDesc
 * (not an Instrumentation in queryDesc->totaltime), over the same windows
 * as totaltime: each ExecutorRun call (a cursor fetched in several calls
 * adds each), and ExecutorFinish.  Parallel workers' usage is added into
 * pgBufferUsage/pgWalUsage by core when the Gather finishes, inside the
 * ExecutorRun that runs it to completion, as totaltime sees it.
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
#include "port/pg_bitutils.h"
#include "parser/analyze.h"
#include "storage/ipc.h"

#include "alloc.h"
#include "counters.h"
#include "hist.h"
#include "failures.h"
#include "guc.h"
#include "hooks.h"
#include "measure.h"
#include "utility.h"
#include "persist.h"
#include "qtext.h"
#include "setup.h"
#include "shmem.h"
#include "slots.h"

PG_MODULE_MAGIC;


static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static post_parse_analyze_hook_type prev_post_parse_analyze_hook = NULL;
static planner_hook_type prev_planner_hook = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;

/*
 * An execution being measured: the sum of its windows (ExecutorRun calls and
 * ExecutorFinish) in time, buffer and WAL usage, as totaltime would have
 * them.  Allocated in the executor's query context at ExecutorStart, in the
 * list of live timers until that context goes (ExecutorEnd, or an error).
 */
typedef struct NgExecTimer
{
	QueryDesc  *queryDesc;
	struct NgExecTimer *prev;
	struct NgExecTimer *next;
	MemoryContextCallback unlink;
	int			pool_index;		/* in timer_pool, or -1 */
	bool		running;		/* a window is open (started at start) */
	int			windows;		/* closed windows */
	instr_time	start;
	instr_time	counter;		/* closed windows' time */
	BufferUsage bufusage_start; /* at the start of the open or last window */
	BufferUsage bufusage_end;	/* at the end of the first, while it is the
								 * only one */
	BufferUsage bufusage;		/* closed windows' usage, from the second */
	WalUsage	walusage_start;
	bool		wal_written;	/* walusage is set: some window wrote WAL */
	WalUsage	walusage;		/* closed windows' WAL usage */
} NgExecTimer;

static NgExecTimer *exec_timers = NULL;

/*
 * Timers are taken from a small pool in backend memory (no allocation per
 * execution), and allocated in the query context only when nesting or open
 * cursors use them all.
 */
#define NG_TIMER_POOL	8
static NgExecTimer timer_pool[NG_TIMER_POOL];
static uint32 timer_pool_used = 0;	/* bit i: timer_pool[i] is taken */

PGDLLEXPORT void _PG_init(void);

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
	ng_define_gucs();
	ng_install_hooks();
	ng_failures_init();
	ng_measure_init();
	ng_persist_register_keeper();
}

static void
ng_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	ng_store_request_shmem();
}

static void
ng_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	ng_store_init_shmem();
}

static void
ng_post_parse_analyze(ParseState *pstate, Query *query, JumbleState *jstate)
{
	NgKey		key;
	NgTextSource src;

	if (prev_post_parse_analyze_hook)
		prev_post_parse_analyze_hook(pstate, query, jstate);

	if (ng_shared == NULL)
		return;
	ng_failures_flush();
	if (!ng_enabled(ng_nesting_level))
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

	ng_make_key(&key, query->queryId);
	src.query = pstate->p_sourcetext;
	src.location = query->stmt_location;
	src.len = query->stmt_len;
	src.jstate = jstate;
	src.utility = (query->utilityStmt != NULL);
	ng_slots_note_parse(&key, &src);
	ng_log_losses();
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
	return result;
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

	if (ng_track_planning && ng_shared != NULL && ng_enabled(level) &&
		query_string != NULL && parse->queryId != UINT64CONST(0))
		return ng_planner_measured(NG_PLANNER_PASS);

	ng_nesting_level = level + 1;
	result = ng_plan_next(NG_PLANNER_PASS);
	ng_nesting_level = level;
	return result;
}

/* the memory context of t's QueryDesc goes: forget t */
static void
ng_timer_unlink(void *arg)
{
	NgExecTimer *t = (NgExecTimer *) arg;

	if (t->prev)
		t->prev->next = t->next;
	else
		exec_timers = t->next;
	if (t->next)
		t->next->prev = t->prev;
	if (t->pool_index >= 0)
		timer_pool_used &= ~(((uint32) 1) << t->pool_index);
}

/* a timer for queryDesc, from the pool if one is free */
static NgExecTimer *
ng_timer_alloc(MemoryContext cxt)
{
	uint32		free_slots = ~timer_pool_used & ((((uint32) 1) << NG_TIMER_POOL) - 1);
	NgExecTimer *t;
	int			i;

	if (unlikely(free_slots == 0))
	{
		t = MemoryContextAlloc(cxt, sizeof(NgExecTimer));
		t->pool_index = -1;
		return t;
	}
	i = pg_rightmost_one_pos32(free_slots);
	timer_pool_used |= ((uint32) 1) << i;
	t = &timer_pool[i];
	t->pool_index = i;
	return t;
}

/* the timer of queryDesc, or NULL if it is not measured */
static inline NgExecTimer *
ng_timer_find(QueryDesc *queryDesc)
{
	for (NgExecTimer *t = exec_timers; t != NULL; t = t->next)
		if (t->queryDesc == queryDesc)
			return t;
	return NULL;
}

/*
 * open a window, as InstrStartNode does; the first window's usage, kept as
 * two snapshots while it was the only one, becomes a sum when a second opens
 */
static pg_attribute_always_inline void
ng_timer_start(NgExecTimer *t)
{
	if (unlikely(t->windows == 1))
	{
		memset(&t->bufusage, 0, sizeof(BufferUsage));
		BufferUsageAccumDiff(&t->bufusage, &t->bufusage_end,
							 &t->bufusage_start);
	}
	t->bufusage_start = pgBufferUsage;
	t->walusage_start = pgWalUsage;
	INSTR_TIME_SET_CURRENT(t->start);
	t->running = true;
}

/*
 * close it, as InstrStopNode does: the first window's buffer usage is kept
 * as its two snapshots (the execution's only window, usually: its sample
 * then adds their difference), later ones are summed (a diff only if usage
 * changed)
 */
static pg_attribute_always_inline void
ng_timer_stop(NgExecTimer *t)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_ACCUM_DIFF(t->counter, now, t->start);
	t->running = false;
	if (likely(t->windows == 0))
		t->bufusage_end = pgBufferUsage;
	else if (memcmp(&pgBufferUsage, &t->bufusage_start,
					sizeof(BufferUsage)) != 0)
		BufferUsageAccumDiff(&t->bufusage, &pgBufferUsage, &t->bufusage_start);
	t->windows++;
	if (unlikely(!ng_walusage_equal(&pgWalUsage, &t->walusage_start)))
	{
		if (!t->wal_written)
			memset(&t->walusage, 0, sizeof(WalUsage));
		t->wal_written = true;
		WalUsageAccumDiff(&t->walusage, &pgWalUsage, &t->walusage_start);
	}
}

static void
ng_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	/* measure the whole run, over the windows totaltime would have */
	if (ng_shared != NULL && ng_enabled(ng_nesting_level) &&
		queryDesc->plannedstmt->queryId != UINT64CONST(0))
	{
		MemoryContext cxt = queryDesc->estate->es_query_cxt;
		NgExecTimer *t = ng_timer_alloc(cxt);

		t->queryDesc = queryDesc;
		t->running = false;
		t->windows = 0;
		INSTR_TIME_SET_ZERO(t->counter);
		t->wal_written = false;
		t->prev = NULL;
		t->next = exec_timers;
		if (exec_timers)
			exec_timers->prev = t;
		exec_timers = t;
		t->unlink.func = ng_timer_unlink;
		t->unlink.arg = t;
		MemoryContextRegisterResetCallback(cxt, &t->unlink);
	}
}

/*
 * ng_note_executor_failure
 *		In PG_CATCH of ExecutorRun or ExecutorFinish: note that the statement
 *		failed, with the time it ran (its timer's window is still open).  No
 *		allocation, no lock: see failures.c.
 */
static void
ng_note_executor_failure(QueryDesc *queryDesc, NgExecTimer *t)
{
	NgKey		key;
	double		ms;

	if (t == NULL || ng_shared == NULL ||
		!ng_enabled(ng_nesting_level) || !ng_sampled())
		return;
	ms = INSTR_TIME_GET_MILLISEC(t->counter);
	if (t->running)
	{
		instr_time	now;

		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, t->start);
		ms += INSTR_TIME_GET_MILLISEC(now);
	}
	ng_make_key(&key, queryDesc->plannedstmt->queryId);
	ng_failure_note(&key, ng_failure_classify(), ms);
}

static void
ng_ExecutorRun(NG_EXECUTOR_RUN_ARGS)
{
	NgExecTimer *t = ng_timer_find(queryDesc);
	int			level = ng_nesting_level;

	if (t)
		ng_timer_start(t);
	ng_nesting_level = level + 1;
	PG_TRY();
	{
		if (prev_ExecutorRun)
			prev_ExecutorRun(NG_EXECUTOR_RUN_PASS);
		else
			standard_ExecutorRun(NG_EXECUTOR_RUN_PASS);
	}
	PG_CATCH();
	{
		ng_nesting_level = level;
		ng_note_executor_failure(queryDesc, t);
		PG_RE_THROW();
	}
	PG_END_TRY();
	ng_nesting_level = level;
	if (t)
		ng_timer_stop(t);
}

/* the next ExecutorFinish hook, or the standard one */
static inline void
ng_finish_next(QueryDesc *queryDesc)
{
	if (prev_ExecutorFinish)
		prev_ExecutorFinish(queryDesc);
	else
		standard_ExecutorFinish(queryDesc);
}

/*
 * ng_finish_wrapped
 *		ExecutorFinish one level deeper, in a PG_TRY frame that notes a
 *		failure; timed if timed.  Out of line: a SELECT's ExecutorFinish
 *		(ng_ExecutorFinish) needs none of its frame.
 */
static pg_noinline void
ng_finish_wrapped(QueryDesc *queryDesc, NgExecTimer *t, bool timed)
{
	int			level = ng_nesting_level;

	if (timed)
		ng_timer_start(t);
	ng_nesting_level = level + 1;
	PG_TRY();
	{
		ng_finish_next(queryDesc);
	}
	PG_CATCH();
	{
		ng_nesting_level = level;
		ng_note_executor_failure(queryDesc, t);
		PG_RE_THROW();
	}
	PG_END_TRY();
	ng_nesting_level = level;
	if (timed)
		ng_timer_stop(t);
}

static void
ng_ExecutorFinish(QueryDesc *queryDesc)
{
	NgExecTimer *t;

	/*
	 * A SELECT without a data-modifying WITH has nothing to finish: no
	 * ModifyTable node to run to completion, no AFTER trigger of its own
	 * (what the functions it called queued, their own queries fired), so
	 * standard_ExecutorFinish runs no statement and raises no error for it.
	 * Its ExecutorFinish is not timed (a fraction of a microsecond, and no
	 * buffer or WAL usage, left out of total_exec_time), and, when no other
	 * hook follows ours, not wrapped either: no level, no PG_TRY frame.
	 */
	if (queryDesc->operation == CMD_SELECT &&
		!queryDesc->plannedstmt->hasModifyingCTE)
	{
		if (prev_ExecutorFinish == NULL)
		{
			standard_ExecutorFinish(queryDesc);
			return;
		}
		ng_finish_wrapped(queryDesc, ng_timer_find(queryDesc), false);
		return;
	}
	t = ng_timer_find(queryDesc);
	ng_finish_wrapped(queryDesc, t, t != NULL);
}

static void
ng_ExecutorEnd(QueryDesc *queryDesc)
{
	NgExecTimer *t = ng_timer_find(queryDesc);

	if (t && ng_shared != NULL && ng_enabled(ng_nesting_level))
	{
		EState	   *estate = queryDesc->estate;
		NgSample	sample = {0};

		Assert(!t->running);
		sample.kind = NG_EXEC;
		/* as totaltime->total * 1000.0 */
		sample.time = INSTR_TIME_GET_DOUBLE(t->counter) * 1000.0;
		sample.rows = NG_ROWS_PROCESSED(estate);
		if (t->windows == 1)
		{
			sample.bufusage = &t->bufusage_end;
			sample.bufusage_base = &t->bufusage_start;
		}
		else if (t->windows > 1)
			sample.bufusage = &t->bufusage;
		if (t->wal_written)
			sample.walusage = &t->walusage;
		sample.jitusage = estate->es_jit ? &estate->es_jit->instr : NULL;
		sample.parallel_workers_to_launch = NG_PARALLEL_TO_LAUNCH(estate);
		sample.parallel_workers_launched = NG_PARALLEL_LAUNCHED(estate);
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
