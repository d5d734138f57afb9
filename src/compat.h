/*-------------------------------------------------------------------------
 *
 * compat.h
 *		Every difference between the PostgreSQL majors we build against.
 *
 * The rest of the extension is written against one API; this header maps it
 * onto each supported major with small static inline wrappers and macros, so
 * no other file carries a PG_VERSION_NUM test.  Tested: 15, 16, 17, 18.
 * Written from the documented API changes for 19, which is untested here.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSSNG_COMPAT_H
#define PGSSNG_COMPAT_H

#include "postgres.h"

#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "optimizer/planner.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "tcop/utility.h"
#include "utils/backend_status.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"

#if PG_VERSION_NUM < 150000
#error "pg_stat_statements_ng requires PostgreSQL 15 or later"
#endif

#if PG_VERSION_NUM >= 160000
#include "nodes/queryjumble.h"
#else
#include "utils/queryjumble.h"
#endif

/*
 * ---- symbols: only what the server looks up is exported ----
 * The Makefile compiles with -fvisibility=hidden, as PGXS does itself from
 * 16 on, so that calls between our files are direct (no PLT).  PGDLLEXPORT
 * marks what the server looks up (_PG_init, the magic block, the SQL
 * functions, the keeper's entry point); 16 and later define it as
 * visibility "default", 15 as nothing, which hidden would then hide.  It is
 * expanded where those are declared, after this header.  15's
 * PG_FUNCTION_INFO_V1 does not mark the function itself: NG_FUNCTION_INFO
 * declares it exported first, on every major.
 */
#if PG_VERSION_NUM < 160000 && defined(__GNUC__)
#undef PGDLLEXPORT
#define PGDLLEXPORT __attribute__((visibility("default")))
#endif
#define NG_FUNCTION_INFO(funcname) \
	extern PGDLLEXPORT Datum funcname(PG_FUNCTION_ARGS); \
	PG_FUNCTION_INFO_V1(funcname)

/*
 * Every header of ours but this one declares its symbols between
 * "#pragma GCC visibility push(hidden)" (after its #includes) and the
 * matching pop: -fvisibility hides only definitions, so without this the
 * compiler would reach each of our variables through the GOT and call each
 * of our functions through the PLT, an instruction more each time, as if
 * another library could replace them.  (GCC and clang know the pragma;
 * other compilers ignore it.)  A declaration of PostgreSQL's caught in such
 * a block by mistake fails the link (an undefined hidden symbol), not the
 * server.
 */

/* ---- process numbers: an index into the per-backend slot areas ---- */
#if PG_VERSION_NUM >= 170000
#define NG_MY_PROC_NUMBER()		MyProcNumber
#else
#define NG_MY_PROC_NUMBER()		(MyProc->pgprocno)
#endif

/*
 * Client backends own the first process numbers.  InitProcGlobal hands
 * PGPROCs 0 .. MaxConnections - 1 to the regular backends' free list
 * (freeProcs), then, up to MaxBackends, to autovacuum workers and launcher
 * (with the slot sync worker from 17; autovacuum_worker_slots of them from
 * 18), to background workers (parallel workers included), and to
 * walsenders; auxiliary processes come after MaxBackends.  InitProcess
 * takes a walsender's, a worker's or autovacuum's PGPROC from its own list
 * only, never from freeProcs.  Checked in proc.c of 15, 16, 17 and 18.6:
 * the split is the same in all four.
 */
#define NG_NUM_CLIENT_PROCS()	MaxConnections

/* ---- ExecutorRun lost its execute_once argument in 18 ---- */
#if PG_VERSION_NUM >= 180000
#define NG_EXECUTOR_RUN_ARGS	QueryDesc *queryDesc, ScanDirection direction, uint64 count
#define NG_EXECUTOR_RUN_PASS	queryDesc, direction, count
#else
#define NG_EXECUTOR_RUN_ARGS	QueryDesc *queryDesc, ScanDirection direction, uint64 count, bool execute_once
#define NG_EXECUTOR_RUN_PASS	queryDesc, direction, count, execute_once
#endif

/*
 * ---- a plan's id: 18 has PlannedStmt.planId and pgstat_report_plan_id
 * (core reports it for the extended protocol's Bind and Execute, not for a
 * simple query); 15 to 17 have neither, and planid.h's carrier is all ----
 */
#if PG_VERSION_NUM >= 180000
#define NG_PSTMT_PLANID(pstmt)	((pstmt)->planId)
#else
#define NG_PSTMT_PLANID(pstmt)	INT64CONST(0)
#endif

/*
 * set PlannedStmt.planId to planid unless another extension set it: true
 * if it did (on 18), false if planid needs a place of its own
 */
static inline bool
ng_pstmt_set_planid_compat(PlannedStmt *pstmt, uint64 planid)
{
#if PG_VERSION_NUM >= 180000
	if (pstmt->planId == INT64CONST(0))
	{
		pstmt->planId = (int64) planid;
		return true;
	}
#else
	(void) pstmt;
	(void) planid;
#endif
	return false;
}

/* report PlannedStmt.planId as the top-level plan's, if none is reported */
static inline void
ng_report_planid_compat(const PlannedStmt *pstmt)
{
#if PG_VERSION_NUM >= 180000
	if (pstmt->planId != INT64CONST(0))
		pgstat_report_plan_id(pstmt->planId, false);
#else
	(void) pstmt;
#endif
}

/* ---- heap_form_minimal_tuple gained an extra argument in 18 ---- */
#if PG_VERSION_NUM >= 180000
#define NG_FORM_MINIMAL_TUPLE(desc, values, nulls) \
	heap_form_minimal_tuple(desc, values, nulls, 0)
#else
#define NG_FORM_MINIMAL_TUPLE(desc, values, nulls) \
	heap_form_minimal_tuple(desc, values, nulls)
#endif

/*
 * ---- EXPLAIN: 18 moved ExplainState and NewExplainState to
 * commands/explain_state.h, ExplainBeginOutput and ExplainEndOutput to
 * commands/explain_format.h ----
 */
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif
#include "commands/explain.h"

/* ---- planner_hook gained an ExplainState argument in 19 ---- */
#if PG_VERSION_NUM >= 190000
#define NG_PLANNER_ARGS		Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams, ExplainState *es
#define NG_PLANNER_PASS		parse, query_string, cursorOptions, boundParams, es
#else
#define NG_PLANNER_ARGS		Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams
#define NG_PLANNER_PASS		parse, query_string, cursorOptions, boundParams
#endif

/* ---- LWLock tranche ids for our DSA area ---- */
static inline int
ng_new_tranche_id_compat(const char *name)
{
#if PG_VERSION_NUM >= 190000
	return LWLockNewTrancheId(name);
#else
	(void) name;
	return LWLockNewTrancheId();
#endif
}

static inline void
ng_register_tranche_compat(int tranche_id, const char *name)
{
#if PG_VERSION_NUM >= 190000
	/* 19 keeps tranche names in shared memory: nothing to do per backend */
	(void) tranche_id;
	(void) name;
#else
	LWLockRegisterTranche(tranche_id, name);
#endif
}

/*
 * Utility statements that pg_stat_statements does not count itself: EXECUTE
 * and PREPARE are counted through the statement they run.  Up to 16,
 * DEALLOCATE is skipped as well (contrib 1.10 on 15 and 16, checked against
 * 15.20's and 16.15's library); from 17 on it is jumbled, with the name as a
 * constant, and counted (contrib 1.11 and 1.12, checked on 17.11 and 18.6).
 */
#if PG_VERSION_NUM >= 170000
#define NG_UTILITY_NOT_COUNTED(node) \
	(IsA((node), ExecuteStmt) || IsA((node), PrepareStmt))
#else
#define NG_UTILITY_NOT_COUNTED(node) \
	(IsA((node), ExecuteStmt) || IsA((node), PrepareStmt) || \
	 IsA((node), DeallocateStmt))
#endif

/*
 * Whether a utility statement opens a nesting level for what it runs.
 * From 17 on, every utility statement but EXECUTE and PREPARE does, counted
 * or not; on 15 and 16 only a counted one does (with track_utility off, what
 * a DO block or CALL runs is top-level there: checked on 16.15's contrib).
 */
#if PG_VERSION_NUM >= 170000
#define NG_UTILITY_BUMPS_LEVEL(node, counted) \
	(!IsA((node), ExecuteStmt) && !IsA((node), PrepareStmt))
#else
#define NG_UTILITY_BUMPS_LEVEL(node, counted) (counted)
#endif

/* ---- buffer and WAL usage fields ---- */

/*
 * I/O timings: 17 split block read/write time into shared and local; before
 * that one pair covered both, reported as pg_stat_statements' blk_read_time,
 * which our view shows as shared_blk_read_time (local_* stay NULL).
 */
#if PG_VERSION_NUM >= 170000
#define NG_HAVE_LOCAL_BLK_TIME	1
#define NG_SHARED_BLK_READ_TIME(bu)		((bu)->shared_blk_read_time)
#define NG_SHARED_BLK_WRITE_TIME(bu)	((bu)->shared_blk_write_time)
#define NG_LOCAL_BLK_READ_TIME(bu)		INSTR_TIME_GET_MILLISEC((bu)->local_blk_read_time)
#define NG_LOCAL_BLK_WRITE_TIME(bu)		INSTR_TIME_GET_MILLISEC((bu)->local_blk_write_time)
#define NG_BUFUSAGE_TIMES_START		offsetof(BufferUsage, shared_blk_read_time)
#else
#define NG_HAVE_LOCAL_BLK_TIME	0
#define NG_SHARED_BLK_READ_TIME(bu)		((bu)->blk_read_time)
#define NG_SHARED_BLK_WRITE_TIME(bu)	((bu)->blk_write_time)
#define NG_LOCAL_BLK_READ_TIME(bu)		0.0
#define NG_LOCAL_BLK_WRITE_TIME(bu)		0.0
#define NG_BUFUSAGE_TIMES_START		offsetof(BufferUsage, blk_read_time)
#endif

/*
 * Every major keeps the I/O times (instr_time each) last in BufferUsage,
 * from NG_BUFUSAGE_TIMES_START on, after the block counts (int64 each), with
 * no padding: counters.h compares them as bytes.
 */
StaticAssertDecl(NG_BUFUSAGE_TIMES_START == 10 * sizeof(int64) &&
				 sizeof(BufferUsage) == NG_BUFUSAGE_TIMES_START +
				 (4 + 2 * NG_HAVE_LOCAL_BLK_TIME) * sizeof(instr_time),
				 "BufferUsage is block counts, then I/O times");

/* 18 counts WAL buffers full per statement */
#if PG_VERSION_NUM >= 180000
#define NG_HAVE_WAL_BUFFERS_FULL	1
#define NG_WAL_BUFFERS_FULL(wu)		((wu)->wal_buffers_full)
#else
#define NG_HAVE_WAL_BUFFERS_FULL	0
#define NG_WAL_BUFFERS_FULL(wu)		0
#endif

/* 17 added JIT deform counters */
#if PG_VERSION_NUM >= 170000
#define NG_HAVE_JIT_DEFORM	1
#define NG_JIT_DEFORM_COUNT(ji)		((ji)->deform_counter)
#define NG_JIT_DEFORM_TIME(ji)		INSTR_TIME_GET_MILLISEC((ji)->deform_counter)
#else
#define NG_HAVE_JIT_DEFORM	0
#define NG_JIT_DEFORM_COUNT(ji)		0
#define NG_JIT_DEFORM_TIME(ji)		0.0
#endif

/* 18 counts parallel workers planned and launched per statement */
#if PG_VERSION_NUM >= 180000
#define NG_HAVE_PARALLEL_WORKERS	1
#define NG_PARALLEL_TO_LAUNCH(estate)	((estate)->es_parallel_workers_to_launch)
#define NG_PARALLEL_LAUNCHED(estate)	((estate)->es_parallel_workers_launched)
#else
#define NG_HAVE_PARALLEL_WORKERS	0
#define NG_PARALLEL_TO_LAUNCH(estate)	0
#define NG_PARALLEL_LAUNCHED(estate)	0
#endif

/*
 * Constant locations of the jumble.  18 records the length of a squashed
 * IN list (and marks it), and marks external parameters, which are already
 * written as $n in the text and must be kept as they are.
 */
#if PG_VERSION_NUM >= 180000
#define NG_LOC_SQUASHED(loc)		((loc)->squashed)
#define NG_LOC_EXTERN_PARAM(loc)	((loc)->extern_param)
#else
#define NG_LOC_SQUASHED(loc)		false
#define NG_LOC_EXTERN_PARAM(loc)	false
#endif

/*
 * Rows of a statement: from 16 on, es_processed counts only the last
 * ExecutorRun (one FETCH of a cursor) and es_total_processed all of them.
 */
#if PG_VERSION_NUM >= 160000
#define NG_ROWS_PROCESSED(estate)	((estate)->es_total_processed)
#else
#define NG_ROWS_PROCESSED(estate)	((estate)->es_processed)
#endif

/*
 * The queryId parse analysis gives a utility statement: until 15 a hash of
 * its text, from 16 on a jumble of its parse tree.  JumbleQuery computes
 * either from a Query that holds only what analysis puts into a utility
 * statement's Query.
 */
static inline uint64
ng_utility_queryid_compat(PlannedStmt *pstmt, const char *query_string)
{
	Query	   *query = makeNode(Query);
	uint64		queryid;

	query->commandType = CMD_UTILITY;
	query->utilityStmt = pstmt->utilityStmt;
	query->stmt_location = pstmt->stmt_location;
	query->stmt_len = pstmt->stmt_len;
	query->canSetTag = true;
#if PG_VERSION_NUM >= 160000
	(void) JumbleQuery(query);
#else
	(void) JumbleQuery(query, query_string);
#endif
	queryid = query->queryId;
	pfree(query);
	return queryid;
}

/* ---- a GUC check hook's "extra": malloc until 15, guc_malloc from 16 ---- */
static inline void *
ng_guc_malloc_compat(size_t size)
{
#if PG_VERSION_NUM >= 160000
	return guc_malloc(LOG, size);
#else
	return malloc(size);
#endif
}

/*
 * ---- the postmaster's list of registered background workers
 * (postmaster/bgworker_internals.h): an slist until 17, a dlist from 18 ----
 */
#if PG_VERSION_NUM >= 180000
typedef dlist_iter ng_bgworker_iter;
#define ng_bgworker_foreach(it)	dlist_foreach(it, &BackgroundWorkerList)
#define ng_bgworker_of(it)	dlist_container(RegisteredBgWorker, rw_lnode, (it).cur)
#else
typedef slist_iter ng_bgworker_iter;
#define ng_bgworker_foreach(it)	slist_foreach(it, &BackgroundWorkerList)
#define ng_bgworker_of(it)	slist_container(RegisteredBgWorker, rw_lnode, (it).cur)
#endif

/*
 * ---- a GUC's record by its exact name, or NULL: find_option is exported
 * from 16 on; before, a scan of get_guc_variables() ----
 */
static inline struct config_generic *
ng_find_guc_compat(const char *name)
{
#if PG_VERSION_NUM >= 160000
	return find_option(name, false, true, LOG);
#else
	struct config_generic **vars = get_guc_variables();
	int			n = GetNumConfigOptions();

	for (int i = 0; i < n; i++)
		if (pg_strcasecmp(vars[i]->name, name) == 0)
			return vars[i];
	return NULL;
#endif
}

#endif							/* PGSSNG_COMPAT_H */
