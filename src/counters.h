/*-------------------------------------------------------------------------
 *
 * counters.h
 *		What is counted for a statement (counters.c): NgCounters, one
 *		sample (NgSample), recording a sample (its common part inline, in
 *		counters_record.h), merging two counter sets.  The latency
 *		histograms are hist.h's.
 *
 * Pure functions on memory the caller owns: they take no lock and touch
 * no shared state; the caller holds whatever protects the counters it
 * passes (its own slot, or the entry's partition lock exclusively).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_COUNTERS_H
#define NG_COUNTERS_H

#include "datatype/timestamp.h"
#include "executor/instrument.h"

#include "columns.h"
#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

/*
 * Everything counted for a statement but its latency histograms, which
 * are kept apart, sparse (hist.h): the K and F members of columns.h's list,
 * in its order.  The same struct accumulates in a slot, in a shared entry
 * and in a reader's result, and counters.c merges any two of them.  Times
 * are in milliseconds; last_executed_at is the start of the top-level
 * statement of the last execution or failure, changed_generation the change
 * generation of their last change (slots/count.c stamps it).
 *
 * min/max are meaningful only when there are calls and min_time is not
 * negative (ng_counters_has_minmax): a reset of min/max alone keeps the
 * calls, mean and stddev, which span all calls, and sets min and max to -1
 * until the next sample (durations are never negative).
 */
#define NG_COUNTERS_MEMBER_K(member, ctype) ctype member[NG_NUM_KINDS];
#define NG_COUNTERS_MEMBER_F(column, form, first, last, ctype, member, merge, recorded, filled) \
	ctype member;

typedef struct NgCounters
{
	NG_COLUMNS(NG_COUNTERS_MEMBER_K, NG_COUNTERS_MEMBER_F, NG_COL_NONE)
} NgCounters;


/*
 * One execution (or one planning) to be counted: what the hooks measured.
 */
/* How an execution ended, when it did not succeed */
typedef enum NgFailure
{
	NG_SUCCEEDED = 0,
	NG_FAILED_ERROR,
	NG_FAILED_CANCEL,			/* canceled by a user or an admin */
	NG_FAILED_TIMEOUT			/* canceled by statement_timeout */
} NgFailure;

typedef struct NgSample
{
	NgKind		kind;
	NgFailure	failure;
	double		time;			/* ms */
	TimestampTz started_at;		/* of the top-level statement */
	uint64		rows;
	const BufferUsage *bufusage;	/* usage, or NULL: none */
	const BufferUsage *bufusage_base;	/* if set, the usage is bufusage minus
										 * this (two snapshots) */
	const WalUsage *walusage;
	const struct JitInstrumentation *jitusage;
	int64		parallel_workers_to_launch;
	int64		parallel_workers_launched;
	/* plan statistics (plans.h): an execution's plan, or 0 (none tracked) */
	uint64		planid;
	const struct QueryDesc *qd; /* the execution, for its plan's text */
} NgSample;

/*
 * the same I/O times in two snapshots (no I/O timed between them): the
 * times end BufferUsage (compat.h), compared as bytes, without converting
 * any (a constant size: compilers compare it inline, word by word)
 */
static inline bool
ng_bufusage_times_equal(const BufferUsage *a, const BufferUsage *b)
{
	return memcmp((const char *) a + NG_BUFUSAGE_TIMES_START,
				  (const char *) b + NG_BUFUSAGE_TIMES_START,
				  sizeof(BufferUsage) - NG_BUFUSAGE_TIMES_START) == 0;
}

/* the parts of ng_counters_record (counters_record.h) kept out of line */
extern void ng_counters_record_failure(NgCounters *c, const NgSample *s);
extern void ng_counters_record_bufusage(NgCounters *c, const BufferUsage *bu);
extern void ng_counters_record_io_times_since(NgCounters *c,
											  const BufferUsage *end,
											  const BufferUsage *start);
extern void ng_counters_record_rest(NgCounters *c, const NgSample *s);

extern void ng_counters_merge(NgCounters *dst, const NgCounters *src);
extern void ng_counters_unrecord(NgCounters *c, const NgSample *s);
extern void ng_counters_clear_minmax(NgCounters *c);

/* min/max of kind k hold samples (none since the last min/max reset) */
static inline bool
ng_counters_has_minmax(const NgCounters *c, int k)
{
	return c->calls[k] > 0 && c->min_time[k] >= 0;
}

/* executions that ended in an error, a cancel or a timeout */
static inline int64
ng_counters_failed(const NgCounters *c)
{
	return c->failed_errors + c->failed_cancels + c->failed_timeouts;
}

/* anything counted at all: calls, plans or failures */
static inline bool
ng_counters_any(const NgCounters *c)
{
	return c->calls[NG_EXEC] > 0 || c->calls[NG_PLAN] > 0 ||
		ng_counters_failed(c) > 0;
}

#pragma GCC visibility pop

#endif							/* NG_COUNTERS_H */
