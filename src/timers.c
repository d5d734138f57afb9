/*-------------------------------------------------------------------------
 *
 * timers.c
 *		Executions' timers: the pool, the list of live timers and the stack
 *		of open windows, and the failures of executions that an error ended
 *		while a window was open (timers.h describes how they are found).
 *
 * Why a file of its own: the hooks (hooks.c) open and close windows on the
 * hot path, inline; what happens to a window an error left open is decided
 * here, from the abort callbacks (hooks.c), a memory context callback and
 * an error context callback, away from the hooks.
 *
 * Locks: none of ours, nothing in shared memory.  The callbacks here run
 * inside error reporting and while (sub)transactions abort: they allocate
 * nothing, take no lock and raise no error; a failure is only noted
 * (failures.c records it later).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/memutils.h"

#include "failures.h"
#include "timers.h"

NgExecTimer ng_timer_pool[NG_TIMER_POOL];
NG_HOT uint32 ng_timer_pool_used = 0;
NG_HOT NgExecTimer *ng_exec_timers = NULL;
NG_HOT NgExecTimer *ng_open_window = NULL;

static void timer_forget(void *arg);
static void timer_error_seen(void *arg);

/* the fields of a timer that never change: its index and callbacks */
static void
timer_init(NgExecTimer *t, int pool_index)
{
	t->pool_index = pool_index;
	t->forget.func = timer_forget;
	t->forget.arg = t;
	t->on_error.callback = timer_error_seen;
	t->on_error.arg = t;
}

/*
 * ng_timers_init
 *		_PG_init part: the pool's timers, each set up once.
 */
void
ng_timers_init(void)
{
	for (int i = 0; i < NG_TIMER_POOL; i++)
		timer_init(&ng_timer_pool[i], i);
}

/*
 * ng_timer_alloc_extra
 *		A timer when the pool is taken, in cxt (the query's memory, which
 *		outlives it); ng_timer_begin sets the rest.
 */
NgExecTimer *
ng_timer_alloc_extra(MemoryContext cxt)
{
	NgExecTimer *t = MemoryContextAlloc(cxt, sizeof(NgExecTimer));

	timer_init(t, -1);
	return t;
}

/*
 * timer_failed
 *		t's open window was ended by an error: note the failed execution,
 *		with the time it ran until the error was raised.  The window must
 *		be off the stack already.  Not at process exit: a FATAL is not the
 *		execution's failure (and was never caught as one).
 */
static void
timer_failed(NgExecTimer *t)
{
	NgKey		key;
	instr_time	end;
	int			sqlerrcode;

	t->running = false;
	if (proc_exit_inprogress || !ng_sampled())
		return;
	if (t->error_seen)
	{
		end = t->error_at;
		sqlerrcode = t->error_code;
		key.userid = t->error_userid;
	}
	else
	{
		/* raised where our callback was not on the stack: say so now */
		INSTR_TIME_SET_CURRENT(end);
		sqlerrcode = ERRCODE_INTERNAL_ERROR;
		key.userid = GetUserId();
	}
	INSTR_TIME_SUBTRACT(end, t->start);
	INSTR_TIME_ADD(end, t->counter);
	key.dbid = MyDatabaseId;
	key.queryid = t->queryid;
	key.toplevel = (t->open_level == 0);
	ng_failure_note(&key, sqlerrcode, INSTR_TIME_GET_MILLISEC(end));
}

/*
 * timer_error_seen
 *		t's error context callback, while its window is open: errfinish calls
 *		it for every message raised under the window, before an error
 *		unwinds anything.  Keeps what a failure needs of the last one (a
 *		message that is not an error is followed by a normal close, which
 *		ignores it, or by an error, which comes later).
 */
static void
timer_error_seen(void *arg)
{
	NgExecTimer *t = (NgExecTimer *) arg;

	t->error_seen = true;
	t->error_code = geterrcode();
	t->error_userid = GetUserId();
	INSTR_TIME_SET_CURRENT(t->error_at);
}

/*
 * ng_timer_close_above
 *		Take t's open window off the stack when it is not the innermost one:
 *		the windows above it were left open by an error, and their
 *		executions failed (noted here, innermost first).  At ng_timer_stop,
 *		some code caught that error without aborting a (sub)transaction; at
 *		timer_forget, the error ends t's execution too.  (If t is not on the
 *		stack, an abort has already noted it: nothing to do.)
 */
void
ng_timer_close_above(NgExecTimer *t)
{
	NgExecTimer *w;

	for (w = ng_open_window; w != NULL && w != t; w = w->open_below)
		;
	if (w == NULL)
		return;
	while (ng_open_window != t)
	{
		w = ng_open_window;
		ng_open_window = w->open_below;
		timer_failed(w);
	}
	ng_open_window = t->open_below;
}

/*
 * ng_timers_abort
 *		A (sub)transaction aborts, and the code that goes on runs at nesting
 *		level: every window opened at that level or deeper was unwound by
 *		the error, and its execution failed.  Those are the innermost ones.
 *		(The caller records the notes: ng_failures_flush.)
 */
void
ng_timers_abort(int level)
{
	while (ng_open_window != NULL && ng_open_window->open_level >= level)
	{
		NgExecTimer *t = ng_open_window;

		ng_open_window = t->open_below;
		timer_failed(t);
	}
}

/*
 * timer_forget
 *		The memory of t's query goes (ExecutorEnd frees the executor state,
 *		or an error aborted it): forget t.  A window still open was ended by
 *		an error: the execution failed.
 */
static void
timer_forget(void *arg)
{
	NgExecTimer *t = (NgExecTimer *) arg;

	if (unlikely(t->running))
	{
		/* the windows above it were unwound by the same error: first */
		ng_timer_close_above(t);
		timer_failed(t);
	}
	/* usually the newest: executions end in the order they nest */
	if (likely(ng_exec_timers == t))
		ng_exec_timers = t->next;
	else
	{
		NgExecTimer *before = ng_exec_timers;

		while (before->next != t)
			before = before->next;
		before->next = t->next;
	}
	if (t->pool_index >= 0)
		ng_timer_pool_used &= ~(((uint32) 1) << t->pool_index);
}
