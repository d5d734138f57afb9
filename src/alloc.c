/*-------------------------------------------------------------------------
 *
 * alloc.c
 *		When memory runs out: every allocation in the DSA area, with the
 *		containment of dsm_create's errors, and the accounting of every
 *		loss (the info figures, each kind logged once).
 *
 * Why a file of its own: the promise that nothing the extension does ever
 * fails a user's query, whatever runs out, and that whatever is lost is
 * counted where the user can see it, is kept here for the whole extension.
 *
 * Growing the DSA area.  DSA_ALLOC_NO_OOM covers only DSA's own limits:
 * when dsa.c must create a segment and dsm_create fails (a full /dev/shm,
 * too many segments), it raises ERROR while holding the area's LWLocks.
 * ng_dsa_allocate contains that error (see there), blocks further growth
 * with dsa_set_size_limit(area, 0) so that other backends fail without an
 * error, counts the refusal in dsa_failures, logs it once, and after
 * NG_DSA_RETRY_MS lets one allocation try to grow the area again.
 *
 * Locking: every DSA allocation is made with no partition lock held (and
 * no other LWLock); the info figures are under the spinlock mutex, held only
 * to add to them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "alloc.h"
#include "shmem.h"

/*
 * DSA memory.
 *
 * ng_dsa_allocate is the only way this extension allocates in the DSA area.
 * dsa_allocate_extended(DSA_ALLOC_NO_OOM) returns InvalidDsaPointer when
 * the area is at its size limit, but when it must create a segment and
 * dsm_create fails (ENOSPC from a full /dev/shm, "too many dynamic shared
 * memory segments"), dsm_impl.c and dsm.c raise ERROR, and dsa.c is then
 * holding its area LWLock, and, for a small allocation, the LWLock of the
 * size class.  Catching that error is safe here, because:
 *
 * - dsa.c changes no shared state before dsm_create returns (make_new_segment
 *   only reads the control struct before it), and dsm_impl_posix backs out
 *   what it did (closes the fd, releases the external-fd reservation,
 *   unlinks the file, restores the signal mask) before raising; for "too many
 *   segments" dsm_create destroys the new segment before raising.  What is
 *   left behind is the unfinished segment's descriptor in backend memory
 *   (freed at exit) and, for a small allocation, a span descriptor in the
 *   area (dsa.c leaks it the same way when growth fails without error).
 * - The LWLocks dsa.c holds are released with LWLockReleaseAll.  That
 *   releases every LWLock this backend holds, which is correct because the
 *   caller holds none: not ours (asserted), and none of the core's, since
 *   we run from the hooks, the maintenance and the keeper, where core holds
 *   no LWLock across calls into code that can raise an error.  It is what
 *   AbortSubTransaction does when a PL/pgSQL exception block catches an
 *   error.  LWLockRelease resumes interrupts once per lock, balanced by
 *   LWLockReleaseAll's HOLD_INTERRUPTS.
 * - No resource owner is current around the call.  Before 17, dsa.c creates
 *   a segment under the current owner, and a dsm_create that fails leaves
 *   its descriptor registered there: the end of the user's transaction
 *   then warned the client of a "dynamic shared memory leak" (seen on 16
 *   by t/053).  From 17 dsa.c makes the area's owner current itself (NULL
 *   for our area, whose mapping is pinned).  Either way, success or
 *   failure, the caller's CurrentResourceOwner is restored here, or the
 *   next resource the backend tracks (a buffer pin, a cache reference)
 *   would find no owner.
 * - errfinish reset InterruptHoldoffCount and QueryCancelHoldoffCount to 0
 *   before it jumped here (the holdoffs of those LWLockAcquire calls and any
 *   of the caller's): both are restored to the values saved on entry.
 *   CritSectionCount is 0 (asserted: we never allocate in a critical
 *   section), and PG_TRY restored error_context_stack.
 *
 * An error cannot be caught where ERROR is promoted to FATAL (while the
 * process exits, proc_exit_inprogress) or to PANIC (in a critical section):
 * there nothing is allocated and the caller degrades as for any refusal (a
 * statement counts in an unbound slot).  While a (sub)transaction aborts
 * (failures.c records failed statements from the abort callbacks), the
 * error that caused the abort may still be on the error stack, and our
 * FlushErrorState discards it too.  In a client backend that is harmless:
 * every core path that aborts with an error pending has already reported
 * it and only flushes it afterwards (PostgresMain: EmitErrorReport, then
 * AbortCurrentTransaction, then FlushErrorState), or copied and flushed it
 * before aborting (PL/pgSQL and the other PLs' exception blocks, SPI's
 * commit and rollback).  Background workers are not so uniform (the
 * logical replication workers abort and then re-throw the pending error),
 * so in any other process nothing is allocated while a transaction aborts.
 *
 * After a failure, growth is blocked for everyone with
 * dsa_set_size_limit(area, 0) (dsa.c then refuses to create a segment, with
 * no error, but still allocates from the free space of existing segments),
 * so that backends do not each try dsm_create again.  Once NG_DSA_RETRY_MS
 * has passed, the next allocation lifts the limit and tries; one that fails
 * blocks growth again.  Every refused allocation is counted in dsa_failures.
 */
#define NG_DSA_RETRY_MS		1000

/* the message of the last dsm_create error caught, for the log */
static char dsa_error[256];

#ifdef USE_ASSERT_CHECKING
/*
 * store_holds_partition_lock
 *		Whether this backend holds any partition lock (for assertions).
 */
static bool
store_holds_partition_lock(void)
{
	for (int i = 0; i < NG_NUM_PARTITIONS; i++)
		if (LWLockHeldByMe(ng_shared->partitions[i].lock))
			return true;
	return false;
}
#endif

/*
 * store_dsa_block_growth / store_dsa_maybe_allow_growth
 *		Block the area's growth after a failure; lift the block, once the
 *		retry time has come, in exactly one backend.  Caller holds no lock
 *		of ours (dsa_set_size_limit takes the area's LWLock).
 */
static void
store_dsa_block_growth(void)
{
	pg_atomic_write_u64(&ng_shared->dsa_retry_at,
						(uint64) TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
															 NG_DSA_RETRY_MS));
	pg_atomic_write_u32(&ng_shared->dsa_capped, 1);
	dsa_set_size_limit(ng_area, 0);
}

static void
store_dsa_maybe_allow_growth(void)
{
	uint32		capped = 1;

	if (likely(pg_atomic_read_u32(&ng_shared->dsa_capped) == 0))
		return;
	if ((TimestampTz) pg_atomic_read_u64(&ng_shared->dsa_retry_at) >
		GetCurrentTimestamp())
		return;
	if (pg_atomic_compare_exchange_u32(&ng_shared->dsa_capped, &capped, 0))
		dsa_set_size_limit(ng_area, SIZE_MAX);
}

/*
 * ng_dsa_can_allocate
 *		Whether ng_dsa_allocate may try here (see above): false while the
 *		process exits, in a critical section, and, except in a client
 *		backend, while a (sub)transaction aborts.  Callers that can wait for
 *		a better moment check it first.
 */
bool
ng_dsa_can_allocate(void)
{
	if (proc_exit_inprogress || CritSectionCount > 0)
		return false;
	if (IsTransactionOrTransactionBlock() && !IsTransactionState())
		return MyBackendType == B_BACKEND;
	return true;
}

/*
 * ng_dsa_allocate
 *		Allocate in the DSA area, never raising an error: returns
 *		InvalidDsaPointer (counted in dsa_failures) when the area has no room
 *		and cannot grow.  flags as for dsa_allocate_extended; DSA_ALLOC_NO_OOM
 *		is implied.  Caller holds no partition lock (nor any other LWLock).
 */
dsa_pointer
ng_dsa_allocate(size_t size, int flags)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	uint32		holdoff = InterruptHoldoffCount;
	uint32		cancel_holdoff = QueryCancelHoldoffCount;
	volatile dsa_pointer dp = InvalidDsaPointer;
	volatile bool failed = false;

	Assert(!store_holds_partition_lock());
	if (!ng_dsa_can_allocate())
	{
		ng_note_loss(NG_LOSS_DSA, 1);
		return InvalidDsaPointer;
	}
	store_dsa_maybe_allow_growth();

	PG_TRY();
	{
		CurrentResourceOwner = NULL;
		dp = dsa_allocate_extended(ng_area, size, flags | DSA_ALLOC_NO_OOM);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		edata = CopyErrorData();
		FlushErrorState();
		LWLockReleaseAll();
		pgstat_report_wait_end();
		InterruptHoldoffCount = holdoff;
		QueryCancelHoldoffCount = cancel_holdoff;
		strlcpy(dsa_error, edata->message ? edata->message : "", sizeof(dsa_error));
		FreeErrorData(edata);
		dp = InvalidDsaPointer;
		failed = true;
	}
	PG_END_TRY();

	if (failed)
		store_dsa_block_growth();
	if (!DsaPointerIsValid(dp))
		ng_note_loss(NG_LOSS_DSA, 1);
	return dp;
}

/*
 * ng_count_stat
 *		Add n to one of the info view's figures.
 */
void
ng_count_stat(int64 *field, int64 n)
{
	SpinLockAcquire(&ng_shared->mutex);
	*field += n;
	SpinLockRelease(&ng_shared->mutex);
}

/* losses this backend noted and has not yet logged (bit per NgLoss) */
NG_HOT uint32 ng_pending_loss_logs = 0;

/*
 * ng_note_loss
 *		Count a degradation in the info figures, and remember to log it.
 *		Safe under a partition lock: it only takes the spinlock and sets a
 *		backend-local bit; ng_log_losses does the logging later.
 */
void
ng_note_loss(NgLoss loss, int64 n)
{
	int64	   *field;

	switch (loss)
	{
		case NG_LOSS_TEXT_MEMORY:
			field = &ng_shared->stats.texts_dropped;
			break;
		case NG_LOSS_TABLE_FULL:
			field = &ng_shared->stats.entries_refused;
			break;
		case NG_LOSS_DSA:
			field = &ng_shared->stats.dsa_failures;
			break;
		default:
			field = &ng_shared->stats.counts_discarded;
			break;
	}
	ng_count_stat(field, n);
	if ((pg_atomic_read_u32(&ng_shared->losses_logged) & (1U << loss)) == 0)
		ng_pending_loss_logs |= (1U << loss);
}

/*
 * ng_log_losses_now
 *		Log each kind of loss once per server (until a full reset), from
 *		whichever backend noted it first (ng_log_losses, when any is
 *		pending).  Caller holds no lock of ours.
 */
void
ng_log_losses_now(void)
{
	static const char *const messages[NG_NUM_LOSSES] = {
		"pg_stat_statements_ng: query text memory is full; new statements are tracked without text",
		"pg_stat_statements_ng: the statement table is full and nothing can be evicted now; new statements are counted in backend slots until there is room",
		"pg_stat_statements_ng: counts of statements that could get no entry were discarded",
		"pg_stat_statements_ng: its shared memory area could not grow; statements that need new memory are counted without entry or text until it can",
	};
	static const char *const hints[NG_NUM_LOSSES] = {
		"Raise pg_stat_statements_ng.query_text_memory.",
		"Raise pg_stat_statements_ng.max.",
		"Raise pg_stat_statements_ng.max or pg_stat_statements_ng.slots_per_backend.",
		"Make room for dynamic shared memory (the size of /dev/shm, or dynamic_shared_memory_type and max_connections).",
	};

	for (int loss = 0; loss < NG_NUM_LOSSES; loss++)
	{
		uint32		bit = 1U << loss;

		if ((ng_pending_loss_logs & bit) == 0)
			continue;
		if ((pg_atomic_fetch_or_u32(&ng_shared->losses_logged, bit) & bit) != 0)
			continue;
		if (loss == NG_LOSS_DSA && dsa_error[0] != '\0')
			ereport(LOG,
					(errmsg("%s", messages[loss]),
					 errdetail("The last error was: %s.  This is logged once; pg_stat_statements_ng_info counts every occurrence.",
							   dsa_error),
					 errhint("%s", hints[loss])));
		else
			ereport(LOG,
					(errmsg("%s", messages[loss]),
					 errdetail("This is logged once; pg_stat_statements_ng_info counts every occurrence."),
					 errhint("%s", hints[loss])));
	}
	ng_pending_loss_logs = 0;
}
