/*-------------------------------------------------------------------------
 *
 * waits_sampler.c
 *		The wait sampler: a background worker of its own that, every
 *		wait_sample_interval, looks at every process running a top-level
 *		statement and counts one sample for (user, database, queryid, wait
 *		event) in the shared profile (waits.h); at start it loads the saved
 *		profile, at shutdown it saves it (waits_file.c).
 *
 * Why a file of its own: the only process that writes the profile; its
 * loop, its backend-local index of the table and its choice of rows to
 * give up are nobody else's business.  Not the keeper: a sampler that dies
 * is restarted by the postmaster within a second (bgw_restart_time), and
 * what the keeper does (restore, evict, dump) never delays a round.
 *
 * What a round reads, and that it takes no lock.  For each process number
 * below MaxBackends: the process's NgWaitCurrent (what it published at its
 * top-level statement's planner, ExecutorStart or ProcessUtility hook),
 * copied by its change count; the PgBackendStatus it published along
 * (state, query id, pid), copied by that entry's own change count as core's
 * readers do; its PGPROC's pid and wait_event_info, plain 32-bit loads.
 * The sample counts if the status is active, the pids agree, and the
 * status's query id is the one the process had when it published: that
 * id is zeroed when a statement starts and set by parse analysis, so a
 * statement whose key is not yet published (parsed, rewritten, or planned
 * for a bind before our hook ran) is not counted under the key of the
 * statement before it.  Idle and idle-in-transaction processes are not
 * active; a process that waits on nothing while active counts as CPU
 * (wait_event_info 0).  A copy that does not settle in a few tries (its
 * writer stopped in the middle) skips that process for the round.
 *
 * Writing the profile: the sampler alone writes an entry's key and counts,
 * bracketed by its change count; it keeps a backend-local hash from key to
 * entry and a list of free entries, both rebuilt from shared memory when
 * it starts.  A full table gives up a sixteenth of its rows at once:
 * those a reset emptied first, then the least recently sampled; what they
 * held goes to the evicted figure, and what the keeper has not yet taken
 * of them to the keeper's handover (waits_window.c), under window_lock,
 * which only the keeper and the sampler take (giving rows up, loading).  Each sample weighs the time since the
 * previous round (the interval, when the sampler keeps up; more, when the
 * machine made it late), summed per row as its estimated time.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "waits.h"

PGDLLEXPORT void pg_stat_statements_ng_waits_main(Datum arg);

/* tries of a copy of a process's records before it is skipped */
#define SAMPLER_COPY_TRIES		8

typedef struct SamplerMapEntry
{
	NgWaitKey	key;
	int			index;
} SamplerMapEntry;

typedef struct SamplerVictim
{
	uint64		order;			/* 0: emptied by a reset, else last round */
	int			index;
} SamplerVictim;

static volatile sig_atomic_t sampler_shutdown = false;
static volatile sig_atomic_t sampler_stopped_by_postmaster = false;

static HTAB *sampler_map = NULL;
static int *sampler_free = NULL;
static int	sampler_nfree = 0;
static uint64 sampler_round = 0;

static void
sampler_sigterm(int signo, siginfo_t * info, void *context)
{
	int			save_errno = errno;

	sampler_stopped_by_postmaster = (info != NULL &&
									 info->si_pid == PostmasterPid);
	sampler_shutdown = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/* write the sampled part of e: begin, end (change count, as NgSlot's) */
static inline void
sampler_write_begin(NgWaitEntry *e)
{
	e->changecount++;
	pg_write_barrier();
}

static inline void
sampler_write_end(NgWaitEntry *e)
{
	pg_write_barrier();
	e->changecount++;
}

/*
 * sampler_build_map
 *		At start: index the rows in use (a sampler that died left them, or
 *		none), and list the free ones.
 */
static void
sampler_build_map(void)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(NgWaitKey);
	ctl.entrysize = sizeof(SamplerMapEntry);
	ctl.hcxt = TopMemoryContext;
	sampler_map = hash_create("pg_stat_statements_ng wait profile",
							  ng_waits->max, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	sampler_free = MemoryContextAlloc(TopMemoryContext,
									  sizeof(int) * ng_waits->max);
	sampler_nfree = 0;
	for (int i = ng_waits->max - 1; i >= 0; i--)
	{
		NgWaitEntry *e = ng_waits_entry(i);
		SamplerMapEntry *m;

		if (!e->in_use)
		{
			sampler_free[sampler_nfree++] = i;
			continue;
		}
		m = hash_search(sampler_map, &e->key, HASH_ENTER, NULL);
		m->index = i;
		sampler_round = Max(sampler_round, e->last_round);
	}
}

static int
sampler_victim_cmp(const void *a, const void *b)
{
	const SamplerVictim *va = a;
	const SamplerVictim *vb = b;

	if (va->order != vb->order)
		return va->order < vb->order ? -1 : 1;
	return va->index - vb->index;
}

/*
 * sampler_evict
 *		The table is full: give up a sixteenth of its rows, those a reset
 *		emptied first, then the least recently sampled, adding what they
 *		held to the evicted figure, and handing what the keeper has not
 *		taken of them to it (waits_window.c), under window_lock.
 */
static void
sampler_evict(void)
{
	int			n = ng_waits->max;
	int			batch = Max(1, n / 16);
	SamplerVictim *v = palloc(sizeof(SamplerVictim) * n);
	uint64		lost = 0;

	for (int i = 0; i < n; i++)
	{
		NgWaitEntry *e = ng_waits_entry(i);
		uint64		time_us;

		v[i].index = i;
		v[i].order = ng_waits_visible(e, e, &time_us) == 0 ? 0 :
			e->last_round;
	}
	qsort(v, n, sizeof(SamplerVictim), sampler_victim_cmp);
	LWLockAcquire(ng_waits->window_lock, LW_EXCLUSIVE);
	for (int k = 0; k < batch; k++)
	{
		NgWaitEntry *e = ng_waits_entry(v[k].index);
		uint64		time_us;

		lost += ng_waits_visible(e, e, &time_us);
		ng_waits_window_handover(e);
		hash_search(sampler_map, &e->key, HASH_REMOVE, NULL);
		sampler_write_begin(e);
		e->in_use = false;
		sampler_write_end(e);
		sampler_free[sampler_nfree++] = v[k].index;
	}
	LWLockRelease(ng_waits->window_lock);
	pfree(v);
	pg_atomic_fetch_add_u64(&ng_waits->evicted, lost);
}

/*
 * sampler_entry
 *		The row of key: found, or a free one given the key (after an
 *		eviction when none is free).
 */
static NgWaitEntry *
sampler_entry(const NgWaitKey *key)
{
	SamplerMapEntry *m;
	NgWaitEntry *e;
	bool		found;

	m = hash_search(sampler_map, key, HASH_FIND, NULL);
	if (m != NULL)
		return ng_waits_entry(m->index);
	if (sampler_nfree == 0)
		sampler_evict();
	m = hash_search(sampler_map, key, HASH_ENTER, &found);
	m->index = sampler_free[--sampler_nfree];
	e = ng_waits_entry(m->index);
	sampler_write_begin(e);

	/*
	 * a new incarnation, never the one a base (of resets) or the keeper's
	 * mark is left for (a free row's mark is not written: waits_window.c)
	 */
	do
		e->incarnation++;
	while (e->incarnation == 0 || e->incarnation == e->base_incarnation ||
		   e->incarnation == e->seen_incarnation);
	e->key = *key;
	e->samples = 0;
	e->time_us = 0;
	e->last_round = sampler_round;
	e->in_use = true;
	sampler_write_end(e);
	return e;
}

/* add samples weighing time_us in all to key's row */
static void
sampler_add(const NgWaitKey *key, uint64 samples, uint64 time_us)
{
	NgWaitEntry *e = sampler_entry(key);

	sampler_write_begin(e);
	e->samples += samples;
	e->time_us += time_us;
	e->last_round = sampler_round;
	sampler_write_end(e);
}

/*
 * the loader's callback (waits_file.c): a saved row, counted before the
 * start, in none of the history's windows
 */
static void
sampler_load_row(const NgWaitKey *key, uint64 samples, uint64 time_us)
{
	sampler_add(key, samples, time_us);
	ng_waits_window_mark(sampler_entry(key));
}

/*
 * sampler_run_round
 *		One sample of every process in a top-level statement, each weighing
 *		weight_us.  No lock.
 */
static void
sampler_run_round(uint64 weight_us)
{
	sampler_round++;
	for (int p = 0; p < ng_waits->nprocs; p++)
	{
		volatile PGPROC *proc = &ProcGlobal->allProcs[p];
		NgWaitCurrent cur;
		NgWaitKey	key;
		uint32		wait_event_info;

		if (!ng_waits_read_current(p, &cur, SAMPLER_COPY_TRIES) ||
			proc->pid != cur.pid)
			continue;
		wait_event_info = proc->wait_event_info;
		if (!ng_waits_statement_runs(&cur, SAMPLER_COPY_TRIES))
			continue;
		key.userid = cur.userid;
		key.dbid = cur.dbid;
		key.queryid = cur.queryid;
		key.wait_event_info = wait_event_info;
		key.pad = 0;
		sampler_add(&key, 1, weight_us);
	}
	pg_atomic_fetch_add_u64(&ng_waits->rounds, 1);
}

/*
 * sampler_load
 *		At the first start since the server's: the saved profile, unless a
 *		reset came first (it would undo it).  reset_lock held exclusively
 *		meanwhile, so that no reset runs in the middle.
 */
static void
sampler_load(void)
{
	int64		n;

	LWLockAcquire(ng_waits->reset_lock, LW_EXCLUSIVE);
	if (!ng_waits->load_pending)
	{
		LWLockRelease(ng_waits->reset_lock);
		return;
	}
	ng_waits->load_pending = false;
	if (pg_atomic_read_u32(&ng_waits->resets) != 0)
		n = -2;
	else
		n = ng_waits_file_load(sampler_load_row);
	LWLockRelease(ng_waits->reset_lock);
	if (n >= 0)
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: restored " INT64_FORMAT " wait profile rows",
						n)));
	else if (n == -2)
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: saved wait profile discarded: statistics were reset since the start")));
}

/*
 * sampler_wait
 *		Sleep until the next round is due at next (or, sampling off, until
 *		woken), handling a reload.  Returns the time now.
 */
static TimestampTz
sampler_wait(TimestampTz next)
{
	long		timeout = -1;
	int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;
	TimestampTz now = GetCurrentTimestamp();

	if (ng_wait_sample_interval > 0)
	{
		timeout = (long) ((next - now + 999) / 1000);
		events |= WL_TIMEOUT;
	}
	if (timeout != 0)
		(void) WaitLatch(MyLatch, events, Max(timeout, 0), PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
	}
	return GetCurrentTimestamp();
}

/*
 * pg_stat_statements_ng_waits_main
 *		The sampler's loop.
 */
void
pg_stat_statements_ng_waits_main(Datum arg)
{
	struct sigaction act;
	TimestampTz last = 0;
	TimestampTz next = GetCurrentTimestamp();

	memset(&act, 0, sizeof(act));
	act.sa_sigaction = sampler_sigterm;
	sigemptyset(&act.sa_mask);
	act.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGTERM, &act, NULL);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	if (ng_waits == NULL)
		proc_exit(0);
	pg_atomic_write_u32(&ng_waits->sampler_pid, (uint32) MyProcPid);
	sampler_build_map();
	sampler_load();

	while (!sampler_shutdown)
	{
		TimestampTz now = sampler_wait(next);
		int64		interval_us = (int64) ng_wait_sample_interval * 1000;

		if (sampler_shutdown || interval_us == 0)
		{
			last = 0;
			continue;
		}
		if (now < next)
			continue;
		/* the time since the last round; the interval for the first */
		sampler_run_round((uint64) (last == 0 ? interval_us :
									Min(Max(now - last, 0), 10 * interval_us)));
		last = now;
		next += interval_us;
		if (next <= now)
			next = now + interval_us;	/* late: no rounds to catch up */
	}

	pg_atomic_write_u32(&ng_waits->sampler_pid, 0);
	/* killed by hand: exit 1 so that the postmaster starts a new one */
	if (!sampler_stopped_by_postmaster)
		proc_exit(1);
	if (ng_save)
		ng_waits_file_save();
	proc_exit(0);
}

/*
 * ng_waits_register_sampler
 *		_PG_init part: start the sampler with the postmaster, and again 1 s
 *		after it dies.
 */
void
ng_waits_register_sampler(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, NG_NAME);
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "pg_stat_statements_ng_waits_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "pg_stat_statements_ng waits sampler");
	snprintf(worker.bgw_type, BGW_MAXLEN, "pg_stat_statements_ng waits sampler");
	RegisterBackgroundWorker(&worker);
}
