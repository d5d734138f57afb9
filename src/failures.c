/*-------------------------------------------------------------------------
 *
 * failures.c
 *		Counting executions that end in an error, a cancel or a
 *		statement_timeout.
 *
 * Why a file of its own: failures are noticed where nothing may be done
 * safely (a PG_CATCH block, on the way to aborting the transaction), so
 * they are only noted there, in a small static array, and recorded later,
 * when the transaction (or subtransaction) has been aborted, or at the next
 * hook call, whichever comes first.  Recording uses the ordinary slot path
 * (slots.c), as a sample that adds to the failure counters and not to
 * calls, since pg_stat_statements counts successful executions only.
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

#include "pg_stat_statements_ng.h"

#define NG_MAX_PENDING_FAILURES	16

typedef struct NgPendingFailure
{
	NgKey		key;
	NgFailure	failure;
	double		time;
	TimestampTz started_at;
} NgPendingFailure;

static NgPendingFailure pending[NG_MAX_PENDING_FAILURES];
static int	npending = 0;
static int64 overflowed = 0;
static bool flushing = false;

/* true while anything is noted and not yet recorded (see ng_failures_flush) */
bool		ng_failures_pending = false;

/*
 * ng_failure_classify
 *		Inside PG_CATCH: how did the statement end?  A cancel is a timeout
 *		when statement_timeout is set and the statement has run that long.
 */
NgFailure
ng_failure_classify(void)
{
	if (geterrcode() != ERRCODE_QUERY_CANCELED)
		return NG_FAILED_ERROR;
	if (StatementTimeout > 0 &&
		TimestampDifferenceExceeds(GetCurrentStatementStartTimestamp(),
								   GetCurrentTimestamp(), StatementTimeout - 1))
		return NG_FAILED_TIMEOUT;
	return NG_FAILED_CANCEL;
}

/*
 * ng_failure_note
 *		Note a failed execution.  Safe in PG_CATCH: no allocation, no lock,
 *		no error.  If too many failures pile up before they can be recorded
 *		(a loop of failing statements in one transaction), the extra ones
 *		are counted as discarded.
 */
void
ng_failure_note(const NgKey *key, NgFailure failure, double time)
{
	ng_failures_pending = true;
	if (npending >= NG_MAX_PENDING_FAILURES)
	{
		overflowed++;
		return;
	}
	pending[npending].key = *key;
	pending[npending].failure = failure;
	pending[npending].time = time;
	pending[npending].started_at = GetCurrentStatementStartTimestamp();
	npending++;
}

/*
 * ng_failures_record
 *		Record the failures noted so far.  Called (through ng_failures_flush)
 *		at the next hook call and from the transaction abort callbacks, never
 *		from inside PG_CATCH.
 */
void
ng_failures_record(void)
{
	NgTextSource src = {0};

	if (flushing)
		return;
	flushing = true;
	for (int i = 0; i < npending; i++)
	{
		NgSample	sample = {0};

		if (NG_DEBUG_FAULT(NG_FAULT_FAILURES_RECORD_ERROR))
		{
			ng_debug_fault_armed = false;
			elog(ERROR, "pg_stat_statements_ng: injected fault while recording a failure");
		}
		sample.kind = NG_EXEC;
		sample.failure = pending[i].failure;
		sample.time = pending[i].time;
		sample.started_at = pending[i].started_at;
		ng_slots_count(&pending[i].key, &sample, &src);
	}
	npending = 0;
	if (overflowed > 0)
	{
		ng_note_loss(NG_LOSS_COUNTS, overflowed);
		overflowed = 0;
	}
	ng_failures_pending = false;
	flushing = false;
}

static void
failures_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		ng_failures_flush();
}

static void
failures_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		ng_failures_flush();
}

/*
 * ng_failures_init
 *		_PG_init part: record failures when (sub)transactions abort.
 */
void
ng_failures_init(void)
{
	RegisterXactCallback(failures_xact_callback, NULL);
	RegisterSubXactCallback(failures_subxact_callback, NULL);
}
