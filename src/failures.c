/*-------------------------------------------------------------------------
 *
 * failures.c
 *		Counting executions that end in an error, a cancel or a
 *		statement_timeout.
 *
 * Why a file of its own: failures are noticed where nothing may be done
 * safely (a PG_CATCH block, an abort callback, a memory context going: see
 * timers.h), so they are only noted there, in a small static array, and
 * recorded later, when the transaction (or subtransaction) has been
 * aborted, or at the next hook call, whichever comes first.  Recording
 * uses the ordinary slot path (slots/count.c), as a sample that adds to the
 * failure counters and not to calls, since pg_stat_statements counts
 * successful executions only.
 *
 * Failures are never taken from emit_log_hook: a hook that runs inside
 * error reporting and takes locks is a known source of self-deadlocks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "storage/proc.h"
#include "utils/elog.h"
#include "utils/timestamp.h"

#include "alloc.h"
#include "counters.h"
#include "failures.h"
#include "guc.h"
#include "qtext.h"
#include "slots/slots.h"

#define NG_MAX_PENDING_FAILURES	16

typedef struct NgPendingFailure
{
	NgKey		key;
	NgFailure	failure;
	int			sqlerrcode;
	double		time;
	TimestampTz started_at;
	TimestampTz failed_at;
} NgPendingFailure;

static NgPendingFailure pending[NG_MAX_PENDING_FAILURES];
static int	npending = 0;
static int64 overflowed = 0;
static bool flushing = false;

static void failures_record_all(NgTextSource *src, volatile bool *recording);

/* true while anything is noted and not yet recorded (see ng_failures_flush) */
NG_HOT bool ng_failures_pending = false;

/*
 * failure_classify
 *		How did a statement that raised sqlerrcode end?  A cancel is a
 *		timeout when statement_timeout is set and the statement has run
 *		that long.  No allocation, no lock, no error.
 */
static NgFailure
failure_classify(int sqlerrcode)
{
	if (sqlerrcode != ERRCODE_QUERY_CANCELED)
		return NG_FAILED_ERROR;
	if (StatementTimeout > 0 &&
		TimestampDifferenceExceeds(GetCurrentStatementStartTimestamp(),
								   GetCurrentTimestamp(), StatementTimeout - 1))
		return NG_FAILED_TIMEOUT;
	return NG_FAILED_CANCEL;
}

/*
 * ng_failure_note
 *		Note a failed execution, which raised sqlerrcode after running for
 *		time ms.  Safe in PG_CATCH and while aborting: no
 *		allocation, no lock, no error.  If too many failures pile up before
 *		they can be recorded (a failure deep in nested statements, noted at
 *		every level on the way out), the last place keeps the failure noted
 *		last and the one it displaces is counted as discarded: an error
 *		propagates from the innermost statement outwards, so the top-level
 *		statement's failure, the one a DBA needs, is always kept.
 */
void
ng_failure_note(const NgKey *key, int sqlerrcode, double time)
{
	ng_failures_pending = true;
	if (npending >= NG_MAX_PENDING_FAILURES)
	{
		overflowed++;
		npending = NG_MAX_PENDING_FAILURES - 1;
	}
	pending[npending].key = *key;
	pending[npending].failure = failure_classify(sqlerrcode);
	pending[npending].sqlerrcode = sqlerrcode;
	pending[npending].time = time;
	pending[npending].started_at = GetCurrentStatementStartTimestamp();
	pending[npending].failed_at = GetCurrentTimestamp();
	npending++;
}

/*
 * ng_failures_record
 *		Record the failures noted so far.  Called (through ng_failures_flush)
 *		at the next hook call and from the transaction abort callbacks, never
 *		from inside PG_CATCH.
 *
 *		Each failure leaves the array before it is recorded.  Should recording
 *		one raise an ERROR (anything in the slot path that can: backend
 *		memory, mapping a DSA segment), that failure and those still pending
 *		are counted as discarded and the state is left clean, so that the
 *		abort that follows has nothing left to record (and no error to raise
 *		again).
 */
void
ng_failures_record(void)
{
	NgTextSource src = {0};
	volatile bool recording = false;

	if (flushing)
		return;
	flushing = true;
	PG_TRY();
	{
		failures_record_all(&src, &recording);
	}
	PG_CATCH();
	{
		/*
		 * The others still pending go too, counted: what raised the ERROR
		 * would likely raise it again for them, and each would be raised from
		 * the abort that follows this one, piling errors up (five nested are
		 * a PANIC).  So do the deferred SQLSTATEs (in sqlstates_lost).
		 */
		int64		lost = (recording ? 1 : 0) + npending + overflowed;

		flushing = false;
		if (lost > 0)
			ng_note_loss(NG_LOSS_COUNTS, lost);
		npending = 0;
		overflowed = 0;
		ng_failures_sqlstate_discard();
		ng_failures_pending = false;
		PG_RE_THROW();
	}
	PG_END_TRY();
	flushing = false;
}

/*
 * failures_record_all
 *		ng_failures_record's loop; *recording is true while a failure that
 *		has left the array is being recorded.  SQLSTATEs deferred by a busy
 *		partition are tried again first; while some remain, the flag stays
 *		set, so that the next hook call tries again.
 */
static void
failures_record_all(NgTextSource *src, volatile bool *recording)
{
	ng_failures_sqlstate_retry();
	while (npending > 0)
	{
		NgSample	sample = {0};
		NgPendingFailure pf = pending[0];

		/* oldest first: the order they ran in */
		npending--;
		memmove(&pending[0], &pending[1], npending * sizeof(NgPendingFailure));
		if (npending == 0 && overflowed == 0)
			ng_failures_pending = false;
		*recording = true;
		if (NG_DEBUG_FAULT(NG_FAULT_FAILURES_RECORD_ERROR))
		{
			ng_debug_fault_armed = false;
			elog(ERROR, "pg_stat_statements_ng: injected fault while recording a failure");
		}
		sample.kind = NG_EXEC;
		sample.failure = pf.failure;
		sample.time = pf.time;
		sample.started_at = pf.started_at;
		ng_slots_count(&pf.key, &sample, src);
		*recording = false;
		ng_failures_sqlstate_record(&pf.key, pf.sqlerrcode, pf.failed_at);
	}
	if (overflowed > 0)
	{
		ng_note_loss(NG_LOSS_COUNTS, overflowed);
		overflowed = 0;
	}
	ng_failures_pending = ng_failures_sqlstate_deferred();
}
