/*-------------------------------------------------------------------------
 *
 * timers.h
 *		An execution's timer (timers.c): the time and the buffer and WAL
 *		usage of one QueryDesc over its windows, and the failure of an
 *		execution that an error ended while one of its windows was open.
 *
 * The executor hooks (hooks.c) take a timer at ExecutorStart
 * (ng_timer_begin), open and close a window around each ExecutorRun and a
 * timed ExecutorFinish (ng_timer_start, ng_timer_stop), and count the
 * execution at ExecutorEnd.  Those are inline here: every execution runs
 * them.
 *
 * Failures without a PG_TRY frame.  An open window is on a stack of open
 * windows (their ExecutorRun calls nest) and has an error context callback
 * on error_context_stack, which notes the SQLSTATE, the user and the time
 * of an error raised while it is open (errfinish calls it before the error
 * unwinds anything).  An error that ends the execution leaves its window
 * open; the window is then noted as a failed execution (ng_failure_note)
 * by whichever comes first:
 * - the (sub)transaction's abort (ng_timers_abort, from hooks.c's abort
 *   callbacks): the windows opened at the nesting level that continues
 *   after it (measure.c) or deeper, that is every window the error unwound;
 * - its query's memory going (the timer's reset callback): a portal's
 *   executor memory goes at the start of the abort, before the callbacks;
 * - the close of an outer window, which finds it still open above it on
 *   the stack (an error caught by some code that aborted nothing).
 * A window open when the process exits (a FATAL) is not a failure: the
 * execution was not allowed to end, as with a PG_CATCH, which a FATAL
 * never reaches.
 *
 * Locks: none of ours, nothing in shared memory.  Nothing here allocates
 * but a timer when the pool is taken (in the query's memory, at
 * ExecutorStart), or raises an error.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_TIMERS_H
#define NG_TIMERS_H

#include "executor/execdesc.h"
#include "executor/instrument.h"
#include "port/pg_bitutils.h"
#include "utils/elog.h"

#include "measure.h"

#pragma GCC visibility push(hidden)

/*
 * An execution being measured: the sum of its windows (ExecutorRun calls and
 * ExecutorFinish) in time, buffer and WAL usage, as totaltime would have
 * them.  From ExecutorStart until its query's memory goes (ExecutorEnd, or
 * an error), in the list of live timers.
 */
typedef struct NgExecTimer
{
	QueryDesc  *queryDesc;
	uint64		queryid;		/* queryDesc's, for a failure noted once the
								 * QueryDesc is gone */
	struct NgExecTimer *next;	/* the list of live timers */
	MemoryContextCallback forget;	/* the query's memory goes: forget it */
	ErrorContextCallback on_error;	/* in error_context_stack while open */
	int			pool_index;		/* in ng_timer_pool, or -1 */
	bool		running;		/* a window is open */
	bool		wal_written;	/* walusage is set: some window wrote WAL */

	/* while a window is open */
	struct NgExecTimer *open_below; /* the window open when it opened */
	int			open_level;		/* ng_nesting_level when it opened */
	bool		error_seen;		/* an error (or message) was raised in it */
	int			error_code;		/* then: its SQLSTATE, */
	Oid			error_userid;	/* the user then, */
	instr_time	error_at;		/* and the time */

	int			windows;		/* closed windows */
	instr_time	start;
	instr_time	counter;		/* closed windows' time */
	BufferUsage bufusage_start; /* at the start of the open or last window */
	BufferUsage bufusage_end;	/* at the end of the first, while it is the
								 * only one */
	BufferUsage bufusage;		/* closed windows' usage, from the second */
	WalUsage	walusage_start;
	WalUsage	walusage;		/* closed windows' WAL usage */
} NgExecTimer;

/*
 * Timers come from a small pool in backend memory (no allocation per
 * execution), and from the query's memory only when nesting or open cursors
 * take the whole pool.
 */
#define NG_TIMER_POOL	8
extern NgExecTimer ng_timer_pool[NG_TIMER_POOL];
extern uint32 ng_timer_pool_used;	/* bit i: ng_timer_pool[i] is taken */
extern NgExecTimer *ng_exec_timers; /* the live timers, newest first */
extern NgExecTimer *ng_open_window; /* the innermost open window */

extern void ng_timers_init(void);
extern NgExecTimer *ng_timer_alloc_extra(MemoryContext cxt);
extern void ng_timer_close_above(NgExecTimer *t);
extern void ng_timers_abort(int level);

/*
 * ng_timer_begin
 *		Measure queryDesc's execution (ExecutorStart, after the standard
 *		one): a timer, in the list, forgotten when the query's memory goes.
 */
static inline void
ng_timer_begin(QueryDesc *queryDesc)
{
	MemoryContext cxt = queryDesc->estate->es_query_cxt;
	uint32		free_slots = ~ng_timer_pool_used &
		((((uint32) 1) << NG_TIMER_POOL) - 1);
	NgExecTimer *t;

	if (likely(free_slots != 0))
	{
		/* its pool_index and callbacks are set once (ng_timers_init) */
		int			i = pg_rightmost_one_pos32(free_slots);

		ng_timer_pool_used |= ((uint32) 1) << i;
		t = &ng_timer_pool[i];
	}
	else
		t = ng_timer_alloc_extra(cxt);
	t->queryDesc = queryDesc;
	t->queryid = queryDesc->plannedstmt->queryId;
	t->running = false;
	t->windows = 0;
	INSTR_TIME_SET_ZERO(t->counter);
	t->wal_written = false;
	t->next = ng_exec_timers;
	ng_exec_timers = t;
	MemoryContextRegisterResetCallback(cxt, &t->forget);
}

/* the timer of queryDesc, or NULL if it is not measured */
static inline NgExecTimer *
ng_timer_find(QueryDesc *queryDesc)
{
	for (NgExecTimer *t = ng_exec_timers; t != NULL; t = t->next)
		if (t->queryDesc == queryDesc)
			return t;
	return NULL;
}

/*
 * ng_timer_start
 *		Open a window, as InstrStartNode does, at the current nesting level
 *		(before the call it measures raises it).  The first window's usage,
 *		kept as two snapshots while it was the only one, becomes a sum when
 *		a second opens.
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
	t->open_below = ng_open_window;
	ng_open_window = t;
	t->open_level = ng_nesting_level;
	t->error_seen = false;
	t->on_error.previous = error_context_stack;
	error_context_stack = &t->on_error;
	INSTR_TIME_SET_CURRENT(t->start);
	t->running = true;
}

/*
 * ng_timer_stop
 *		Close it, as InstrStopNode does, when the call returns: the first
 *		window's buffer usage is kept as its two snapshots (the execution's
 *		only window, usually: its sample then adds their difference), later
 *		ones are summed (a diff only if usage changed).
 */
static pg_attribute_always_inline void
ng_timer_stop(NgExecTimer *t)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	/* what the call pushed, it popped, or a PG_TRY in it restored */
	Assert(error_context_stack == &t->on_error);
	error_context_stack = t->on_error.previous;
	if (likely(ng_open_window == t))
		ng_open_window = t->open_below;
	else
		ng_timer_close_above(t);
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

#pragma GCC visibility pop

#endif							/* NG_TIMERS_H */
