/*-------------------------------------------------------------------------
 *
 * waits.c
 *		Wait-event profiles per statement: their settings, their shared
 *		memory (what each process runs, the profile table), the lock-free
 *		copy of a row, resets, and a process's first publication.
 *
 * Why a file of its own: the hooks publish, the sampler (waits_sampler.c)
 * counts, readers (waits_sql.c), resets (reset.c) and the file
 * (waits_file.c) read; this is what they share, and it calls none of them.
 *
 * Memory: a main shared memory struct of its own, sized at start:
 * NgWaitShared, one NgWaitCurrent per process number below MaxBackends
 * (each on a cache line of its own: its process writes it at every
 * statement), and wait_profile_max NgWaitEntry rows (112 bytes each).  A
 * fixed table rather than DSA: the sampler is its only writer, the number
 * of rows is a setting fixed at start, and a full table gives up its least
 * recently sampled rows (waits_sampler.c) instead of growing.
 *
 * Locking: see waits.h.  A reset takes reset_lock exclusively; the sampler
 * never takes it while sampling (it writes only the sampled part of an
 * entry, which resets only read, by the change count); so a reset never
 * waits for the sampler nor the sampler for a reset.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "waits.h"

NgWaitShared *ng_waits = NULL;
int			ng_wait_sample_interval = 10;
int			ng_wait_profile_max = 10000;

/* this process's NgWaitCurrent, set at its first publication */
NG_HOT NgWaitCurrent *ng_wait_mine = NULL;

/*
 * where a process without a record of its own publishes, with a status
 * entry of its own whose st_query_id stays 0
 */
static NgWaitCurrent waits_dummy;
static PgBackendStatus waits_dummy_status;

#define NG_WAITS_LOCK_TRANCHE	NG_NAME "_waits"

/*
 * ng_waits_define_gucs
 *		_PG_init part: the sampler's settings.
 */
void
ng_waits_define_gucs(void)
{
	DefineCustomIntVariable("pg_stat_statements_ng.wait_sample_interval",
							"Sets how often the wait sampler looks at every process.",
							"0 turns wait sampling off.",
							&ng_wait_sample_interval,
							10,
							0,
							60000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("pg_stat_statements_ng.wait_profile_max",
							"Sets how many (statement, wait event) rows the wait profile keeps.",
							"Takes effect at server start.",
							&ng_wait_profile_max,
							10000,
							100,
							INT_MAX / 1024,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
}

static Size
waits_current_offset(void)
{
	return CACHELINEALIGN(sizeof(NgWaitShared));
}

static Size
waits_entries_offset(void)
{
	return add_size(waits_current_offset(),
					mul_size(CACHELINEALIGN(sizeof(NgWaitCurrent)),
							 MaxBackends));
}

static Size
waits_shmem_size(void)
{
	return add_size(waits_entries_offset(),
					mul_size(sizeof(NgWaitEntry), ng_wait_profile_max));
}

/*
 * ng_waits_request_shmem
 *		shmem_request_hook part.
 */
void
ng_waits_request_shmem(void)
{
	RequestAddinShmemSpace(waits_shmem_size());
	RequestNamedLWLockTranche(NG_WAITS_LOCK_TRANCHE, 2);
}

/*
 * waits_file_startup
 *		Postmaster, creating shared memory: may the saved profile be loaded?
 *		Only after a clean shutdown; otherwise remove the file (persist.c
 *		says so in the log).  The file itself is waits_file.c's.
 */
static void
waits_file_startup(void)
{
	ControlFileData *control;
	bool		crc_ok;
	struct stat st;

	ng_waits->load_pending = false;
	if (!ng_save || stat(NG_WAITS_FILE, &st) != 0)
		return;
	control = get_controlfile(DataDir, &crc_ok);
	if (crc_ok && (control->state == DB_SHUTDOWNED ||
				   control->state == DB_SHUTDOWNED_IN_RECOVERY))
		ng_waits->load_pending = true;
	else
		unlink(NG_WAITS_FILE);
	pfree(control);
}

/*
 * ng_waits_init_shmem
 *		shmem_startup_hook part: create or find the shared struct.  The
 *		creator (the postmaster) also decides whether the saved profile may
 *		be loaded (waits_file.c).
 */
void
ng_waits_init_shmem(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ng_waits = ShmemInitStruct(NG_NAME " waits", waits_shmem_size(), &found);
	if (found)
	{
		LWLockRelease(AddinShmemInitLock);
		return;
	}
	memset(ng_waits, 0, waits_shmem_size());
	ng_waits->max = ng_wait_profile_max;
	ng_waits->nprocs = MaxBackends;
	ng_waits->current_offset = waits_current_offset();
	ng_waits->entries_offset = waits_entries_offset();
	ng_waits->reset_lock = &GetNamedLWLockTranche(NG_WAITS_LOCK_TRANCHE)[0].lock;
	ng_waits->window_lock = &GetNamedLWLockTranche(NG_WAITS_LOCK_TRANCHE)[1].lock;
	pg_atomic_init_u32(&ng_waits->following, 0);
	pg_atomic_init_u32(&ng_waits->resets, 0);
	pg_atomic_init_u32(&ng_waits->sampler_pid, 0);
	pg_atomic_init_u64(&ng_waits->rounds, 0);
	pg_atomic_init_u64(&ng_waits->evicted, 0);
	waits_file_startup();
	LWLockRelease(AddinShmemInitLock);
}

NgWaitCurrent *
ng_waits_current(int procno)
{
	Assert(procno >= 0 && procno < ng_waits->nprocs);
	return (NgWaitCurrent *) ((char *) ng_waits + ng_waits->current_offset +
							  procno * CACHELINEALIGN(sizeof(NgWaitCurrent)));
}

NgWaitEntry *
ng_waits_entry(int i)
{
	Assert(i >= 0 && i < ng_waits->max);
	return (NgWaitEntry *) ((char *) ng_waits + ng_waits->entries_offset) + i;
}

/*
 * waits_attach
 *		This process's first publication: find its record and note who it
 *		is (pid, database, status entry) there.  A process without one (a
 *		process number past MaxBackends, no status entry) publishes into a
 *		dummy, which no one reads.  No lock.
 */
static NgWaitCurrent *
waits_attach(void)
{
	NgWaitCurrent *cur = &waits_dummy;
	int			procno = MyProc ? NG_MY_PROC_NUMBER() : -1;

	waits_dummy.beentry = &waits_dummy_status;

	if (ng_waits != NULL && MyBEEntry != NULL &&
		procno >= 0 && procno < ng_waits->nprocs)
	{
		cur = ng_waits_current(procno);
		cur->changecount++;
		pg_write_barrier();
		cur->pid = MyProcPid;
		cur->dbid = MyDatabaseId;
		cur->beentry = MyBEEntry;
		cur->queryid = 0;
		cur->planid = 0;
		pg_write_barrier();
		cur->changecount++;
	}
	ng_wait_mine = cur;
	return cur;
}

/*
 * ng_waits_publish
 *		At the top level: the statement of queryid (0: one not counted), of
 *		the plan planid (0: none known), is what this process runs from now
 *		on, for the sampler (waits_sampler.c) and the activity view
 *		(waits_sql.c): its queryid, planid, the user, and the core query id
 *		the process's PgBackendStatus has now.  No lock, no atomic; the write is
 *		bracketed by the record's change count.
 */
void
ng_waits_publish(uint64 queryid, uint64 planid)
{
	NgWaitCurrent *cur = ng_wait_mine;

	if (unlikely(cur == NULL))
		cur = waits_attach();
	cur->changecount++;
	pg_write_barrier();
	cur->queryid = queryid;
	cur->planid = planid;
	cur->userid = GetUserId();
	cur->core_queryid = (uint64) cur->beentry->st_query_id;
	pg_write_barrier();
	cur->changecount++;
}

/*
 * ng_waits_read_current
 *		Copy process procno's published statement (false: none, or no
 *		consistent copy in tries).  No lock.
 */
bool
ng_waits_read_current(int procno, NgWaitCurrent *copy, int tries)
{
	const volatile NgWaitCurrent *v = ng_waits_current(procno);

	for (int i = 0; i < tries; i++)
	{
		uint32		before = v->changecount;

		pg_read_barrier();
		copy->pid = v->pid;
		copy->dbid = v->dbid;
		copy->userid = v->userid;
		copy->queryid = v->queryid;
		copy->core_queryid = v->core_queryid;
		copy->planid = v->planid;
		copy->beentry = v->beentry;
		pg_read_barrier();
		if ((before & 1) == 0 && before == v->changecount)
			return copy->pid != 0 && copy->queryid != 0 &&
				copy->beentry != NULL;
	}
	return false;
}

/*
 * ng_waits_statement_runs
 *		Is the process that published cur active, still in the statement it
 *		published?  Reads its PgBackendStatus as core's readers do, at
 *		most tries times.  No lock.
 */
bool
ng_waits_statement_runs(const NgWaitCurrent *cur, int tries)
{
	volatile PgBackendStatus *be = cur->beentry;

	for (int i = 0; i < tries; i++)
	{
		int			before;
		int			after;
		int			pid;
		BackendState state;
		uint64		query_id;

		pgstat_begin_read_activity(be, before);
		pid = be->st_procpid;
		state = be->st_state;
		query_id = (uint64) be->st_query_id;
		pgstat_end_read_activity(be, after);
		if (pgstat_read_activity_complete(before, after))
			return pid == cur->pid && state == STATE_RUNNING &&
				query_id != 0 && query_id == cur->core_queryid;
	}
	return false;
}

/*
 * ng_waits_copy_entry
 *		Copy the sampled part of e (all of it but base_*) between two equal
 *		even readings of its change count, trying at most tries times
 *		(spinning: the sampler's write is a few stores).  Returns false if
 *		no consistent copy was had.  No lock.
 */
bool
ng_waits_copy_entry(const NgWaitEntry *e, NgWaitEntry *copy, int tries)
{
	const volatile NgWaitEntry *v = e;

	for (int i = 0; i < tries; i++)
	{
		uint32		before = v->changecount;

		pg_read_barrier();
		copy->incarnation = v->incarnation;
		copy->in_use = v->in_use;
		copy->key = v->key;
		copy->samples = v->samples;
		copy->time_us = v->time_us;
		copy->last_round = v->last_round;
		pg_read_barrier();
		if ((before & 1) == 0 && before == v->changecount)
			return true;
		SPIN_DELAY();
	}
	return false;
}

/*
 * ng_waits_visible
 *		Of the copy of e's sampled part, what no reset has taken: its
 *		samples (returned) and time (into *time_us).  The caller holds
 *		reset_lock (any mode), except the sampler, for which a stale base
 *		is harmless (waits.h).
 */
uint64
ng_waits_visible(const NgWaitEntry *copy, const NgWaitEntry *e,
				 uint64 *time_us)
{
	const volatile NgWaitEntry *v = e;
	uint64		samples = copy->samples;

	*time_us = copy->time_us;
	if (v->base_incarnation == copy->incarnation)
	{
		uint64		bs = v->base_samples;
		uint64		bt = v->base_time_us;

		samples = samples > bs ? samples - bs : 0;
		*time_us = *time_us > bt ? *time_us - bt : 0;
	}
	return samples;
}

/*
 * waits_copy_waiting
 *		ng_waits_copy_entry, waiting out a sampler stopped in the middle of
 *		a write for 5 s at most (the caller may hold reset_lock, under which
 *		interrupts are held).  false: no consistent copy.
 */
static bool
waits_copy_waiting(const NgWaitEntry *e, NgWaitEntry *copy)
{
	for (int waited = 0; waited < 5000; waited++)
	{
		if (ng_waits_copy_entry(e, copy, NG_WAITS_READ_SPINS))
			return true;
		pg_usleep(1000);
	}
	return false;
}

/*
 * ng_waits_snapshot
 *		Copy every row with samples into rows (room for max of them) and
 *		return how many.  Takes reset_lock in shared mode; never waits for
 *		the sampler but for a row it is writing (a row a stopped sampler
 *		leaves half written is left out after 5 s).
 */
int
ng_waits_snapshot(NgWaitRow *rows)
{
	int			n = 0;

	LWLockAcquire(ng_waits->reset_lock, LW_SHARED);
	for (int i = 0; i < ng_waits->max; i++)
	{
		NgWaitEntry *e = ng_waits_entry(i);
		NgWaitEntry copy;

		if (!waits_copy_waiting(e, &copy) || !copy.in_use)
			continue;
		rows[n].key = copy.key;
		rows[n].samples = ng_waits_visible(&copy, e, &rows[n].time_us);
		if (rows[n].samples > 0)
			n++;
	}
	LWLockRelease(ng_waits->reset_lock);
	return n;
}

/*
 * ng_waits_reset
 *		With the statistics: take what the rows matching (userid, dbid,
 *		queryid) (0: any) hold now out of what readers see, by moving their
 *		base up to it; a full reset (all 0) also clears the evicted figure.
 *		Takes reset_lock exclusively; never waits for the sampler but for a
 *		row it is writing, as ng_waits_snapshot (a row a stopped sampler
 *		leaves half written is not reset, with a WARNING).
 */
void
ng_waits_reset(Oid userid, Oid dbid, uint64 queryid)
{
	int			skipped = 0;

	if (ng_waits == NULL)
		return;
	LWLockAcquire(ng_waits->reset_lock, LW_EXCLUSIVE);
	pg_atomic_fetch_add_u32(&ng_waits->resets, 1);
	if (userid == InvalidOid && dbid == InvalidOid && queryid == 0)
		pg_atomic_write_u64(&ng_waits->evicted, 0);
	for (int i = 0; i < ng_waits->max; i++)
	{
		NgWaitEntry *e = ng_waits_entry(i);
		NgWaitEntry copy;

		if (!waits_copy_waiting(e, &copy))
		{
			skipped++;
			continue;
		}
		if (!copy.in_use ||
			(userid != InvalidOid && copy.key.userid != userid) ||
			(dbid != InvalidOid && copy.key.dbid != dbid) ||
			(queryid != 0 && copy.key.queryid != queryid))
			continue;
		e->base_incarnation = copy.incarnation;
		e->base_samples = copy.samples;
		e->base_time_us = copy.time_us;
	}
	LWLockRelease(ng_waits->reset_lock);
	if (skipped > 0)
		ereport(WARNING,
				(errmsg("pg_stat_statements_ng: %d wait profile rows were not reset",
						skipped),
				 errdetail("The wait sampler did not finish writing them within 5 seconds.")));
}
