/*-------------------------------------------------------------------------
 *
 * failures.h
 *		Failed executions (failures.c): noted in error paths, where nothing
 *		may be allocated, and recorded later through the slots; their
 *		SQLSTATEs counted in the entries (failures_sqlstate.c).
 *
 * Locks: ng_failure_note is called inside PG_CATCH, from abort callbacks
 * and from memory context callbacks; it takes no lock, allocates nothing
 * and raises no error (a note goes into a small static array).
 * ng_failures_record, ng_failures_flush and the ng_failures_sqlstate_
 * functions: no lock of ours held (they count through slots/count.c, and try
 * the partition lock of each failed statement for its SQLSTATE, without
 * waiting but at exit).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_FAILURES_H
#define NG_FAILURES_H

#include "counters.h"

#pragma GCC visibility push(hidden)

/* failures.c */
extern void ng_failure_note(const NgKey *key, int sqlerrcode, double time);
extern void ng_failures_record(void);
extern bool ng_failures_pending;

/* failures_sqlstate.c */
extern void ng_failures_sqlstate_record(const NgKey *key, int sqlerrcode,
										TimestampTz failed_at);
extern void ng_failures_sqlstate_retry(void);
extern bool ng_failures_sqlstate_deferred(void);
extern void ng_failures_sqlstate_discard(void);

/* record noted failures, if any: a test of one flag on the hot path */
static inline void
ng_failures_flush(void)
{
	if (unlikely(ng_failures_pending))
		ng_failures_record();
}

#pragma GCC visibility pop

#endif							/* NG_FAILURES_H */
