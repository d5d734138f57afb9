/*-------------------------------------------------------------------------
 *
 * persist.c
 *		Statistics across clean restarts: the keeper worker, which
 *		restores at startup (persist_read.c) and dumps at shutdown
 *		(persist_write.c), and the postmaster's decision whether to restore.
 *
 * Why a file of its own: the file format, and the rule that nothing read
 * from the file is trusted, belong together; and this is the one part of
 * the extension with a process of its own.
 *
 * Who does what.  The postmaster, when it creates shared memory, decides
 * whether saved statistics may be restored: only if the previous shutdown
 * was clean (pg_control says so).  After a crash, an immediate stop, or a
 * crash-restart of the server, it removes any file and says so once in the
 * log.  At its own exit it removes a file no keeper dealt with in this run
 * (keeper_start.c: the keeper could not be started): it is older than this
 * run's statistics, and restoring it later would bring back counts from
 * before them, before a reset made in this run among others.  Shared memory
 * in a DSA area can only be allocated by a child
 * process, so the rest is done by the keeper, a background worker started
 * with the postmaster: it restores the file (merging into whatever backends
 * recorded meanwhile), or under the drop-in contrib's if that one is newer
 * (persist_contrib.c), and removes it; while the server runs it applies a
 * lowered max even when no backend is busy; at shutdown (SIGTERM) it waits
 * briefly for the other backends to fold their slots and exit, then writes
 * every row to a temporary file, fsyncs it and renames it into place.
 *
 * The file: a header (magic, format version, server major, size of the
 * counters, the info figures, the entry count), the entries, the failures
 * by SQLSTATE, the plan rows (persist_internal.h), and a CRC-32C of
 * everything before it.  The loader opens the file without blocking
 * and refuses anything but a regular file, and a file larger than the
 * settings could have written (max and slot rows, query_text_memory of
 * texts, plan rows and texts within the bounds their settings allow); it
 * then reads the file in pieces, twice: the first pass checks the CRC and
 * validates every entry, bounding each length by the bytes that remain, the
 * second restores.  A file is accepted or rejected as a whole,
 * with one LOG line.  Nothing here raises an ERROR or waits on anything but
 * reading a regular file: a failure costs the saved statistics, never the
 * server start or shutdown.
 *
 * Locking: restoring inserts with the partition lock held exclusively, one
 * partition at a time; dumping reads through reader.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/timestamp.h"

#include "alloc.h"
#include "evict.h"
#include "guc.h"
#include "history.h"
#include "keeper_start.h"
#include "persist.h"
#include "persist_contrib.h"
#include "persist_internal.h"
#include "shmem.h"
#include "slots/slots.h"

/* How long the keeper waits at shutdown for backends to fold and exit */
#define NG_SHUTDOWN_WAIT_MS	10000

PGDLLEXPORT void pg_stat_statements_ng_keeper_main(Datum arg);

static volatile sig_atomic_t keeper_shutdown = false;
static volatile sig_atomic_t keeper_stopped_by_postmaster = false;

/* ---- deciding at server start, and at server exit ---- */

/*
 * persist_postmaster_exit
 *		The postmaster's on_shmem_exit callback, once every other process is
 *		gone: if no keeper ran in this run, nothing was saved, and a file an
 *		earlier run saved is removed (see the head of this file).
 */
static void
persist_postmaster_exit(int code, Datum arg)
{
	if (ng_shared == NULL || ng_keeper_ran())
		return;
	if (ng_save)
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: statistics were not saved: its keeper worker did not run"),
				 errhint("Raise max_worker_processes.")));
	if (unlink(NG_DUMP_FILE) == 0)
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: removed the statistics an earlier run saved, which no keeper restored")));
}

/*
 * ng_persist_startup
 *		Postmaster, when shared memory is created: may the saved statistics
 *		be restored?  Only after a clean shutdown; otherwise remove the file.
 */
void
ng_persist_startup(void)
{
	ControlFileData *control;
	bool		crc_ok;
	bool		clean;
	struct stat st;
	bool		have_file = (stat(NG_DUMP_FILE, &st) == 0) ||
		(ng_dropin_preloaded() && stat(NG_CONTRIB_FILE, &st) == 0);

	ng_keeper_startup();
	if (IsPostmasterEnvironment && !IsUnderPostmaster)
		on_shmem_exit(persist_postmaster_exit, (Datum) 0);
	ng_shared->restore_pending = false;
	if (!ng_save)
		return;

	control = get_controlfile(DataDir, &crc_ok);
	clean = crc_ok && (control->state == DB_SHUTDOWNED ||
					   control->state == DB_SHUTDOWNED_IN_RECOVERY);
	pfree(control);

	if (clean)
		ng_shared->restore_pending = have_file;
	else
	{
		if (have_file)
		{
			unlink(NG_DUMP_FILE);
			ng_contrib_discard_file();
		}
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: statistics start empty after an unclean shutdown")));
	}
}

/* ---- the keeper ---- */

/*
 * keeper_sigterm
 *		SIGTERM, with its sender: from the postmaster it means the server is
 *		shutting down (save); from anyone else, that the keeper was killed by
 *		hand while the server runs (exit without saving, to be restarted).
 */
static void
keeper_sigterm(int signo, siginfo_t * info, void *context)
{
	int			save_errno = errno;

	keeper_stopped_by_postmaster = (info != NULL && info->si_pid == PostmasterPid);
	keeper_shutdown = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/*
 * keeper_wait_for_backends
 *		At shutdown: wait (bounded) until no other process has slots in use,
 *		so that every count has been folded into the shared table.
 */
static void
keeper_wait_for_backends(void)
{
	TimestampTz start = GetCurrentTimestamp();

	for (;;)
	{
		bool		busy = false;

		for (int p = 0; p < ng_store_num_slot_procs() && !busy; p++)
			busy = (p != NG_MY_PROC_NUMBER() && ng_slots_of_proc(p)->active);
		if (!busy || TimestampDifferenceExceeds(start, GetCurrentTimestamp(),
												NG_SHUTDOWN_WAIT_MS))
			return;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/*
 * pg_stat_statements_ng_keeper_main
 *		The keeper: restore at start, apply a lowered max while running, dump
 *		at shutdown.
 */
void
pg_stat_statements_ng_keeper_main(Datum arg)
{
	struct sigaction act;

	memset(&act, 0, sizeof(act));
	act.sa_sigaction = keeper_sigterm;
	sigemptyset(&act.sa_mask);
	act.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGTERM, &act, NULL);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	if (!ng_store_attach())
		proc_exit(0);

	/* before the restore: it takes what it restores out of the window */
	ng_history_keeper_start();
	if (ng_shared->restore_pending)
	{
		ng_shared->restore_pending = false;
		if (NG_DEBUG_FAULT(NG_FAULT_STALL_RESTORE))
			ng_debug_stall();
		/* ours, or contrib's (persist_contrib.c) */
		ng_persist_restore_saved();
		/* every entry was put back: down to max now, by usage */
		if (pg_atomic_read_u32(&ng_shared->entry_count) > (uint32) ng_max)
			ng_evict_to_limit();
	}
	else
	{
		/* a file left by a keeper that was killed, or save is off */
		unlink(NG_DUMP_FILE);
		ng_contrib_discard_file();
	}
	ng_keeper_note_running();

	while (!keeper_shutdown)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 NG_MAINTENANCE_INTERVAL_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (pg_atomic_read_u32(&ng_shared->entry_count) > (uint32) ng_max)
			ng_evict_to_limit();
		if (pg_atomic_read_u64(&ng_shared->text_bytes) >
			(uint64) ng_query_text_memory_kb * 1024)
			ng_evict_texts_to_limit();
		ng_log_losses();
		ng_history_keeper_tick();
	}

	/*
	 * Killed by hand: do not save (a file written now would be restored,
	 * stale, at the next start if nothing saved a newer one), and exit with
	 * code 1 so that the postmaster starts a new keeper.
	 */
	if (!keeper_stopped_by_postmaster)
		proc_exit(1);

	if (ng_save)
	{
		keeper_wait_for_backends();
		ng_history_keeper_shutdown();
		ng_persist_dump();
	}
	proc_exit(0);
}
