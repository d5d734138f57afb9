/*-------------------------------------------------------------------------
 *
 * keeper_start.c
 *		Getting the keeper (persist.c) started, and knowing when it is not.
 *
 * Why a file of its own: the keeper needs a background worker slot, which
 * the server may not have; what then happens (a warning, a count, retries
 * by the backends) is one concern, apart from what the keeper does.
 *
 * The keeper is registered in _PG_init, as a static worker: the postmaster
 * sets a slot aside for it out of max_worker_processes and restarts it if it
 * dies.  Core refuses that registration (logging "too many background
 * workers") when the static workers registered before it, the logical
 * replication launcher's and other preloaded libraries', already take
 * every slot max_worker_processes allows.  Then:
 *	- the postmaster, creating shared memory, logs a WARNING that names
 *	  max_worker_processes and counts the failure (keeper_start_failures in
 *	  the info view: each absence once, however often backends retry);
 *	- backends, at their periodic maintenance (slots/life.c), apply a
 *	  lowered max and query_text_memory as the keeper would, and try to
 *	  register the keeper as a dynamic worker, at most once every
 *	  NG_KEEPER_RETRY_MS across the server: that succeeds once a slot is free
 *	  (a worker that exited for good gives its slot back);
 *	- at shutdown, if no keeper ran, nothing is saved, and the postmaster
 *	  removes a file an earlier run saved (persist.c): it holds statistics
 *	  older than this run's, which must not come back at a later start.
 *
 * Locking: atomics only; nothing here takes a lock of ours.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "postmaster/bgworker_internals.h"

#include "compat.h"
#include "keeper_start.h"
#include "shmem.h"

/* How often backends try to start a missing keeper, at most */
#define NG_KEEPER_RETRY_MS	10000

#define NG_KEEPER_FUNCTION	"pg_stat_statements_ng_keeper_main"

/*
 * keeper_worker_fill
 *		The keeper's worker description, static or dynamic alike.
 */
static void
keeper_worker_fill(BackgroundWorker *worker)
{
	memset(worker, 0, sizeof(*worker));
	worker->bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker->bgw_start_time = BgWorkerStart_PostmasterStart;
	worker->bgw_restart_time = 5;
	snprintf(worker->bgw_library_name, BGW_MAXLEN, NG_NAME);
	snprintf(worker->bgw_function_name, BGW_MAXLEN, NG_KEEPER_FUNCTION);
	snprintf(worker->bgw_name, BGW_MAXLEN, "pg_stat_statements_ng keeper");
	snprintf(worker->bgw_type, BGW_MAXLEN, "pg_stat_statements_ng keeper");
}

/*
 * ng_keeper_register
 *		_PG_init part: register the keeper as a static worker (core logs and
 *		drops it if it would exceed max_worker_processes).
 */
void
ng_keeper_register(void)
{
	BackgroundWorker worker;

	keeper_worker_fill(&worker);
	RegisterBackgroundWorker(&worker);
}

/*
 * keeper_registered
 *		Postmaster: does its list of background workers hold a keeper?  At
 *		the first start, only static workers are in it; after a crash, also
 *		a keeper a backend registered dynamically, which is started again.
 */
static bool
keeper_registered(void)
{
	ng_bgworker_iter it;

	ng_bgworker_foreach(it)
	{
		RegisteredBgWorker *rw = ng_bgworker_of(it);

		if (strcmp(rw->rw_worker.bgw_library_name, NG_NAME) == 0 &&
			strcmp(rw->rw_worker.bgw_function_name, NG_KEEPER_FUNCTION) == 0)
			return true;
	}
	return false;
}

/*
 * ng_keeper_startup
 *		Postmaster (or a standalone backend, which runs no worker), creating
 *		shared memory: set up the keeper's state; if the keeper could not be
 *		registered, say so and count it.
 */
void
ng_keeper_startup(void)
{
	bool		missing = IsPostmasterEnvironment && !keeper_registered();

	pg_atomic_init_u32(&ng_shared->keeper_missing, missing ? 1 : 0);
	pg_atomic_init_u32(&ng_shared->keeper_ran, 0);
	pg_atomic_init_u64(&ng_shared->keeper_retry_at, 0);
	pg_atomic_init_u64(&ng_shared->keeper_start_failures, missing ? 1 : 0);
	if (missing)
		ereport(WARNING,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("pg_stat_statements_ng: its keeper worker could not be registered: no background worker slot is free"),
				 errdetail("Until the keeper starts, statistics are not saved at shutdown, and backends apply a lowered pg_stat_statements_ng.max or query_text_memory as they run statements; they try to start the keeper every %d seconds.",
						   NG_KEEPER_RETRY_MS / 1000),
				 errhint("Raise max_worker_processes (now %d).",
						 max_worker_processes)));
}

/*
 * ng_keeper_note_running
 *		The keeper, once it has dealt with the saved file: a keeper ran in
 *		this run (whatever file is left at shutdown is its own).
 */
void
ng_keeper_note_running(void)
{
	pg_atomic_write_u32(&ng_shared->keeper_missing, 0);
	pg_atomic_write_u32(&ng_shared->keeper_ran, 1);
}

/*
 * ng_keeper_ran
 *		Did a keeper run (and deal with the saved file) since shared memory
 *		was made?
 */
bool
ng_keeper_ran(void)
{
	return pg_atomic_read_u32(&ng_shared->keeper_ran) != 0;
}

/*
 * ng_keeper_start_failures
 *		For the info view: how many times the keeper could not be started.
 */
int64
ng_keeper_start_failures(void)
{
	return (int64) pg_atomic_read_u64(&ng_shared->keeper_start_failures);
}

/*
 * ng_keeper_retry_start
 *		A backend at maintenance, the keeper missing: register it as a
 *		dynamic worker, if no backend tried in the last NG_KEEPER_RETRY_MS.
 *		now is the statement's start.  Takes the postmaster's
 *		BackgroundWorkerLock (RegisterDynamicBackgroundWorker); caller holds
 *		no lock.  Raises no error: a refusal only waits for the next try.
 */
void
ng_keeper_retry_start(TimestampTz now)
{
	uint64		at = pg_atomic_read_u64(&ng_shared->keeper_retry_at);
	BackgroundWorker worker;

	if ((uint64) now < at ||
		!pg_atomic_compare_exchange_u64(&ng_shared->keeper_retry_at, &at,
										(uint64) now + NG_KEEPER_RETRY_MS * (uint64) 1000))
		return;
	keeper_worker_fill(&worker);
	if (!RegisterDynamicBackgroundWorker(&worker, NULL))
		return;
	pg_atomic_write_u32(&ng_shared->keeper_missing, 0);
	ereport(LOG,
			(errmsg("pg_stat_statements_ng: registered its keeper worker, a background worker slot being free"),
			 errhidestmt(true)));
}
