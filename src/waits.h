/*-------------------------------------------------------------------------
 *
 * waits.h
 *		Wait-event profiles per statement (waits.c, waits_sampler.c,
 *		waits_file.c): what each process publishes of the top-level
 *		statement it runs, the shared profile table the sampler fills, and
 *		the inline publication the hooks call.
 *
 * Owns: NgWaitShared, its NgWaitCurrent per process and its NgWaitEntry
 * table, in main shared memory of its own.
 *
 * Locks.  NgWaitCurrent is written by its process only, bracketed by its
 * change count; the sampler copies it without lock.  An entry's sampled
 * part (key, samples, time) is written by the sampler only, bracketed by
 * the entry's change count; readers copy it without lock.  An entry's
 * reset part (base_*) is written only by resets, holding reset_lock
 * exclusively, and read under it in shared mode (the sampler, which never
 * waits for it, reads it without lock where a stale value only changes
 * which entry it gives up first).  The sampler takes no lock while it
 * samples: nothing a backend could wait for.  An entry's window part
 * (seen_*) and the handover are under window_lock, which only the keeper
 * (taking the window's samples, waits_window.c) and the sampler (giving
 * entries up, loading the file) take: no backend waits for it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_WAITS_H
#define NG_WAITS_H

#include "port/atomics.h"
#include "storage/lwlock.h"
#include "utils/backend_status.h"

#include "guc.h"
#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

/* the key of a profile row; pad is zero, so that the key hashes as bytes */
typedef struct NgWaitKey
{
	Oid			userid;
	Oid			dbid;
	uint64		queryid;
	uint32		wait_event_info;	/* 0: CPU */
	uint32		pad;
} NgWaitKey;

/*
 * What a process runs at the top level, as it published it last.  Written
 * by the process only (change count as NgSlot's); pid, dbid and beentry at
 * its first publication.  The key is valid for as long as its PgBackendStatus
 * says the process is active with the core query id it had when it was
 * published (waits_sampler.c): that tells a statement whose key is not yet
 * published (being parsed) from the one before it.
 */
typedef struct NgWaitCurrent
{
	uint32		changecount;	/* odd while the owner writes */
	int			pid;
	Oid			dbid;
	Oid			userid;
	uint64		queryid;		/* our key's; 0: not counted */
	uint64		core_queryid;	/* its st_query_id when published */
	uint64		planid;			/* its plan's (planid.c); 0: none known */
	volatile PgBackendStatus *beentry;	/* the owner's MyBEEntry (never NULL
										 * once set) */
} NgWaitCurrent;

/* one profile row */
typedef struct NgWaitEntry
{
	/* the sampler's part: written by the sampler only, in changecount */
	uint32		changecount;
	uint32		incarnation;	/* moves when the entry takes another key */
	bool		in_use;
	NgWaitKey	key;
	uint64		samples;
	uint64		time_us;		/* each sample weighed by its round's time */
	uint64		last_round;		/* the last round that counted here */

	/* the resets' part: under reset_lock */
	uint32		base_incarnation;	/* the incarnation the base is of */
	uint64		base_samples;
	uint64		base_time_us;

	/* the history's part: what the keeper has taken, under window_lock */
	uint32		seen_incarnation;	/* the incarnation seen_* is of */
	uint64		seen_samples;
	uint64		seen_time_us;
} NgWaitEntry;

/* a row as readers see it: what no reset took of an entry */
typedef struct NgWaitRow
{
	NgWaitKey	key;
	uint64		samples;
	uint64		time_us;
} NgWaitRow;

/* rows handed over to the keeper by the sampler's evictions, at most */
#define NG_WAITS_HANDOVER_MAX	1024

typedef struct NgWaitShared
{
	int			max;			/* entries, fixed at start */
	int			nprocs;			/* NgWaitCurrent, one per process number */
	bool		load_pending;	/* the postmaster's decision; sampler clears */
	LWLock	   *reset_lock;		/* resets exclusive, readers shared */
	pg_atomic_uint32 resets;	/* resets since start: void the saved file */
	pg_atomic_uint32 sampler_pid;
	pg_atomic_uint64 rounds;	/* sampling rounds since start */
	pg_atomic_uint64 evicted;	/* samples of entries given up; a full reset
								 * clears it */
	LWLock	   *window_lock;	/* the keeper and the sampler only */
	pg_atomic_uint32 following; /* a keeper takes the windows' samples */
	int			nhandover;		/* window_lock: rows in handover */
	uint64		handover_lost;	/* window_lock: samples that found it full */
	NgWaitRow	handover[NG_WAITS_HANDOVER_MAX];	/* window_lock */
	Size		current_offset; /* from this struct to current[0] */
	Size		entries_offset; /* to entries[0] */
} NgWaitShared;

/* spins of a reader on one row before it sleeps (as NG_SLOT_READ_SPINS) */
#define NG_WAITS_READ_SPINS		1000

extern NgWaitShared *ng_waits;
extern int	ng_wait_sample_interval;
extern int	ng_wait_profile_max;

/* Functions in waits.c */
extern void ng_waits_define_gucs(void);
extern void ng_waits_request_shmem(void);
extern void ng_waits_init_shmem(void);
extern NgWaitCurrent *ng_waits_current(int procno);
extern NgWaitEntry *ng_waits_entry(int i);
extern bool ng_waits_copy_entry(const NgWaitEntry *e, NgWaitEntry *copy,
								int tries);
extern uint64 ng_waits_visible(const NgWaitEntry *copy, const NgWaitEntry *e,
							   uint64 *time_us);
extern void ng_waits_reset(Oid userid, Oid dbid, uint64 queryid);
extern int	ng_waits_snapshot(NgWaitRow *rows);
extern void ng_waits_publish(uint64 queryid, uint64 planid);
extern bool ng_waits_read_current(int procno, NgWaitCurrent *copy,
								  int tries);
extern bool ng_waits_statement_runs(const NgWaitCurrent *cur, int tries);

/* Functions in waits_sampler.c */
extern void ng_waits_register_sampler(void);

/* Functions in waits_window.c */
typedef void (*NgWaitsTakeFn) (const NgWaitKey *key, uint64 samples,
							   uint64 time_us, void *arg);
extern void ng_waits_window_open(void);
extern uint64 ng_waits_window_take(NgWaitsTakeFn add, void *arg);
extern void ng_waits_window_stop(void);
extern void ng_waits_window_handover(NgWaitEntry *e);
extern void ng_waits_window_mark(NgWaitEntry *e);

/* Functions in waits_file.c */
#define NG_WAITS_FILE		"pg_stat/pg_stat_statements_ng_waits.stat"
extern int64 ng_waits_file_load(void (*add) (const NgWaitKey *key,
											 uint64 samples, uint64 time_us));
extern void ng_waits_file_save(void);

/* this process's NgWaitCurrent (a dummy when it has none), or NULL */
extern NgWaitCurrent *ng_wait_mine;

/*
 * ng_waits_publish_if_new
 *		At the top level, in the planner: the statement of queryid is what
 *		this process runs from now on, its plan not yet known (planid 0).  Publishes it (ng_waits_publish,
 *		waits.c) unless the record already holds it: the same queryid and
 *		core query id (the same statement runs again; the user is not
 *		compared, see docs/design.md).  Four loads
 *		and two compares: no call, no lock, no atomic, no store.  beentry is
 *		never NULL once ng_wait_mine is set (the dummy has one of its own).
 */
static inline void
ng_waits_publish_if_new(uint64 queryid)
{
	NgWaitCurrent *cur = ng_wait_mine;

	if (likely(cur != NULL) && cur->queryid == queryid &&
		cur->core_queryid == (uint64) cur->beentry->st_query_id)
		return;
	ng_waits_publish(queryid, 0);
}

/*
 * ng_waits_publish_plan_if_new
 *		As ng_waits_publish_if_new, at ExecutorStart, with the plan's id
 *		(planid.h) compared and published too.  A statement that planning
 *		published has planid 0 until then, and one planned again under the
 *		same queryid keeps the planid of its last execution while it plans.
 */
static inline void
ng_waits_publish_plan_if_new(uint64 queryid, uint64 planid)
{
	NgWaitCurrent *cur = ng_wait_mine;

	if (likely(cur != NULL) && cur->queryid == queryid &&
		cur->planid == planid &&
		cur->core_queryid == (uint64) cur->beentry->st_query_id)
		return;
	ng_waits_publish(queryid, planid);
}

#pragma GCC visibility pop

#endif							/* NG_WAITS_H */
