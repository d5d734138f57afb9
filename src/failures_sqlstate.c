/*-------------------------------------------------------------------------
 *
 * failures_sqlstate.c
 *		Counting a recorded failure's SQLSTATE in its statement's entry
 *		(entry_errors.h), once failures.c has counted the failure in the
 *		slots.
 *
 * Why a file of its own: failures.c notes and records failures through
 * the slots, without a lock; this is the part of recording that takes the
 * statement's partition lock, and what to do when it is busy.
 *
 * Locking: the partition lock, exclusive, taken without waiting
 * (LWLockConditionalAcquire): a failure never waits for a reader or a
 * fold.  A SQLSTATE whose partition is busy is deferred in a small static
 * array and tried again at the next hook call (failures.c keeps its flag
 * set); at exit, each is tried for up to 100 ms.  A block for an entry's
 * first failure is allocated before the lock (ng_dsa_allocate: no error).
 * Whatever cannot be kept (no entry, no block, the array full, still busy
 * at exit) is counted in sqlstates_lost.  Nothing here raises an error but
 * what mapping a DSA segment may (see design.md, Known costs and limits).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"

#include "alloc.h"
#include "entry_errors.h"
#include "failures.h"
#include "store.h"

#define NG_MAX_DEFERRED_SQLSTATES	16
#define NG_EXIT_LOCK_TRIES			100 /* 1 ms apart */

typedef enum NgSqlstateOutcome
{
	NG_SQLSTATE_KEPT,
	NG_SQLSTATE_LOST,
	NG_SQLSTATE_BUSY
} NgSqlstateOutcome;

typedef struct NgDeferredSqlstate
{
	NgKey		key;
	NgErrorCount add;
} NgDeferredSqlstate;

static NgDeferredSqlstate deferred[NG_MAX_DEFERRED_SQLSTATES];
static int	ndeferred = 0;
static bool exit_registered = false;

static void sqlstate_at_exit(int code, Datum arg);

/*
 * sqlstate_lock
 *		Take part's lock exclusively without waiting; at exit, try for up to
 *		NG_EXIT_LOCK_TRIES ms.  Returns false if it stayed busy.
 */
static bool
sqlstate_lock(NgSharedPartition *part)
{
	for (int i = 0;; i++)
	{
		if (LWLockConditionalAcquire(part->lock, LW_EXCLUSIVE))
			return true;
		if (!proc_exit_inprogress || i >= NG_EXIT_LOCK_TRIES)
			return false;
		pg_usleep(1000L);
	}
}

/*
 * sqlstate_try
 *		Count add for key's entry.  An entry's first failure finds no block:
 *		the lock is released, one is allocated, and the entry looked up
 *		again.
 */
static NgSqlstateOutcome
sqlstate_try(const NgKey *key, const NgErrorCount *add)
{
	uint32		hash = ng_key_hash(key);
	NgSharedPartition *part = ng_partition(hash);
	dsa_pointer spare = InvalidDsaPointer;
	NgSqlstateOutcome outcome = NG_SQLSTATE_LOST;

	for (int attempt = 0; attempt < 2; attempt++)
	{
		NgSharedEntry *entry;
		dsa_pointer dp;
		bool		kept = false;

		if (attempt == 1 &&
			!DsaPointerIsValid(spare = ng_dsa_allocate(sizeof(NgEntryErrors), 0)))
			break;
		if (!sqlstate_lock(part))
		{
			outcome = NG_SQLSTATE_BUSY;
			break;
		}
		entry = ng_entry_lookup(part, key, hash, &dp);
		if (entry != NULL)
			kept = ng_entry_errors_add(part, entry, dp, add, &spare);
		LWLockRelease(part->lock);
		if (kept)
			outcome = NG_SQLSTATE_KEPT;
		if (kept || entry == NULL)
			break;
	}
	if (DsaPointerIsValid(spare))
		dsa_free(ng_area, spare);
	return outcome;
}

/*
 * ng_failures_sqlstate_record
 *		Count a recorded failure of key, which raised sqlerrcode at
 *		failed_at, in its entry, which the failure's count has just bound or
 *		found (a statement counting in an unbound slot, or refused an
 *		entry, has none: counted in sqlstates_lost).  Deferred if the
 *		partition is busy.
 */
void
ng_failures_sqlstate_record(const NgKey *key, int sqlerrcode,
							TimestampTz failed_at)
{
	NgErrorCount add = {0};

	add.sqlstate = sqlerrcode;
	add.errors = 1;
	add.last_error_at = failed_at;
	switch (sqlstate_try(key, &add))
	{
		case NG_SQLSTATE_KEPT:
			return;
		case NG_SQLSTATE_LOST:
			ng_entry_errors_lost(1);
			return;
		case NG_SQLSTATE_BUSY:
			break;
	}
	if (ndeferred >= NG_MAX_DEFERRED_SQLSTATES || proc_exit_inprogress)
	{
		ng_entry_errors_lost(1);
		return;
	}
	if (!exit_registered)
	{
		before_shmem_exit(sqlstate_at_exit, (Datum) 0);
		exit_registered = true;
	}
	deferred[ndeferred].key = *key;
	deferred[ndeferred].add = add;
	ndeferred++;
}

/*
 * ng_failures_sqlstate_retry
 *		Try the deferred SQLSTATEs again; those whose partition is still
 *		busy stay deferred.
 */
void
ng_failures_sqlstate_retry(void)
{
	int			kept_deferred = 0;

	for (int i = 0; i < ndeferred; i++)
	{
		NgSqlstateOutcome outcome = sqlstate_try(&deferred[i].key,
												 &deferred[i].add);

		if (outcome == NG_SQLSTATE_LOST ||
			(outcome == NG_SQLSTATE_BUSY && proc_exit_inprogress))
			ng_entry_errors_lost(1);
		else if (outcome == NG_SQLSTATE_BUSY)
			deferred[kept_deferred++] = deferred[i];
	}
	ndeferred = kept_deferred;
}

/* are SQLSTATEs deferred, to be tried again? */
bool
ng_failures_sqlstate_deferred(void)
{
	return ndeferred > 0;
}

/*
 * ng_failures_sqlstate_discard
 *		Give the deferred SQLSTATEs up, counted in sqlstates_lost: recording
 *		a failure raised an error (failures.c), which trying them again
 *		might raise at every hook call.
 */
void
ng_failures_sqlstate_discard(void)
{
	if (ndeferred > 0)
		ng_entry_errors_lost(ndeferred);
	ndeferred = 0;
}

/*
 * sqlstate_at_exit
 *		before_shmem_exit callback, registered at the first deferral (so it
 *		runs before the slots' exit callback, registered earlier): the
 *		deferred SQLSTATEs, each tried for a while, else counted lost.
 */
static void
sqlstate_at_exit(int code, Datum arg)
{
	ng_failures_sqlstate_retry();
}
