/*-------------------------------------------------------------------------
 *
 * history.h
 *		The history: closed time windows of per-statement deltas, each with
 *		its own exec percentiles, kept by the keeper (history_keeper.c) in
 *		the DSA area; what evictions and resets take out of the table
 *		during a window (history_capture.c); each window's wait samples
 *		(history_waits.c); each window's per-plan deltas of the statements
 *		it keeps (history_plans.c); the SQL functions (history_funcs.c);
 *		the file that keeps the windows over a clean restart
 *		(history_persist.c).
 *
 * Locks:
 *   ng_history_keep_evicted, ng_history_keep_unbound: the partition lock,
 *   exclusive.
 *   ng_history_capture_begin and the rest: see history_capture.c.
 *   ng_history_plans_of_entry, ng_history_plan_of_slot: the entry's
 *   partition lock, any mode (or the keeper owns the unlinked entry).
 *   everything else: no lock of ours held; the windows' list is under
 *   NgHistoryShared.lock, taken and released inside.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_HISTORY_H
#define NG_HISTORY_H

#include "storage/condition_variable.h"
#include "storage/lwlock.h"
#include "utils/dsa.h"

#include "counters.h"
#include "hist.h"
#include "store.h"
#include "waits.h"

#pragma GCC visibility push(hidden)

/*
 * The counters a window keeps, each the delta over the window: name, type
 * (I: int64, D: double), and the NgCounters member it comes from.  The
 * struct, the arithmetic, the SQL columns (in this order) and the file
 * are all made from this list.
 */
#define NG_HISTORY_COUNTERS(I, D) \
	I(calls, calls[NG_EXEC]) \
	D(total_exec_time, total_time[NG_EXEC]) \
	I(rows, rows) \
	I(plans, calls[NG_PLAN]) \
	D(total_plan_time, total_time[NG_PLAN]) \
	I(shared_blks_hit, shared_blks_hit) \
	I(shared_blks_read, shared_blks_read) \
	I(shared_blks_dirtied, shared_blks_dirtied) \
	I(shared_blks_written, shared_blks_written) \
	I(local_blks_hit, local_blks_hit) \
	I(local_blks_read, local_blks_read) \
	I(local_blks_dirtied, local_blks_dirtied) \
	I(local_blks_written, local_blks_written) \
	I(temp_blks_read, temp_blks_read) \
	I(temp_blks_written, temp_blks_written) \
	D(shared_blk_read_time, shared_blk_read_time) \
	D(shared_blk_write_time, shared_blk_write_time) \
	D(local_blk_read_time, local_blk_read_time) \
	D(local_blk_write_time, local_blk_write_time) \
	D(temp_blk_read_time, temp_blk_read_time) \
	D(temp_blk_write_time, temp_blk_write_time) \
	I(wal_records, wal_records) \
	I(wal_fpi, wal_fpi) \
	I(wal_bytes, wal_bytes) \
	I(wal_buffers_full, wal_buffers_full) \
	I(errors, failed_errors) \
	I(cancels, failed_cancels) \
	I(timeouts, failed_timeouts) \
	D(failed_exec_time, failed_time)

#define NG_HC_FIELD_I(name, src) int64 name;
#define NG_HC_FIELD_D(name, src) double name;
typedef struct NgHistoryCounts
{
	NG_HISTORY_COUNTERS(NG_HC_FIELD_I, NG_HC_FIELD_D)
} NgHistoryCounts;

#define NG_HC_ONE(name, src) + 1
#define NG_HISTORY_NCOUNTERS (0 NG_HISTORY_COUNTERS(NG_HC_ONE, NG_HC_ONE))

/* a statement's counts with its exec histogram, dense (history.c) */
typedef struct NgHistoryTotals
{
	NgHistoryCounts c;
	int64		hist[NG_HIST_BUCKETS];	/* exec durations */
} NgHistoryTotals;

/* the most statements a window keeps (history_statements' maximum) */
#define NG_HISTORY_STATEMENTS_MAX	10000

/* the exec percentiles a window keeps */
#define NG_HISTORY_NPCT 3

/* One row of a closed window */
typedef struct NgHistoryRow
{
	NgKey		key;
	bool		others;			/* the row of all statements not kept */
	NgHistoryCounts c;
	double		pct[NG_HISTORY_NPCT];	/* exec p50, p95, p99; NaN: none */
} NgHistoryRow;

/*
 * One wait row of a closed window: the wait samples of a statement the
 * window keeps (any toplevel), or of all others (others; key's userid,
 * dbid and queryid 0), for one wait event (history_waits.c)
 */
typedef struct NgHistoryWaitRow
{
	NgWaitKey	key;
	bool		others;
	uint64		samples;
	uint64		time_us;
} NgHistoryWaitRow;

/* a plan's counts: the executions of one plan of a statement */
typedef struct NgHistoryPlanCounts
{
	int64		calls;
	double		total_exec_time;
	int64		rows;
} NgHistoryPlanCounts;

/*
 * A plan of a statement and its counts: planid, or other (planid 0) for the
 * plans its plan array counts together (plans.h)
 */
typedef struct NgHistoryPlan
{
	uint64		planid;
	bool		other;
	NgHistoryPlanCounts c;
} NgHistoryPlan;

/* dst += sign * src */
static inline void
ng_history_plan_add(NgHistoryPlanCounts *dst, const NgHistoryPlanCounts *src,
					int sign)
{
	dst->calls += sign * src->calls;
	dst->total_exec_time += sign * src->total_exec_time;
	dst->rows += sign * src->rows;
}

/* One plan row of a closed window: a plan of a statement it keeps */
typedef struct NgHistoryPlanRow
{
	NgKey		key;
	NgHistoryPlan p;
} NgHistoryPlanRow;

/*
 * A closed window, one DSA allocation, in the list oldest first: its
 * statement rows, then its wait rows, then its plan rows
 */
typedef struct NgHistoryWindow
{
	dsa_pointer next;			/* history lock */
	TimestampTz start;
	TimestampTz end;
	int32		nrows;
	int32		nwaits;
	int32		nplans;
	NgHistoryRow rows[FLEXIBLE_ARRAY_MEMBER];
} NgHistoryWindow;

#define NG_HISTORY_WINDOW_SIZE(n, nw, np) \
	(offsetof(NgHistoryWindow, rows) + (Size) (n) * sizeof(NgHistoryRow) + \
	 (Size) (nw) * sizeof(NgHistoryWaitRow) + \
	 (Size) (np) * sizeof(NgHistoryPlanRow))

/* a window's wait rows, after its statement rows */
#define NG_HISTORY_WINDOW_WAITS(w) \
	((NgHistoryWaitRow *) ((char *) (w)->rows + \
						   (Size) (w)->nrows * sizeof(NgHistoryRow)))

/* a window's plan rows, after its wait rows */
#define NG_HISTORY_WINDOW_PLANS(w) \
	((NgHistoryPlanRow *) ((char *) NG_HISTORY_WINDOW_WAITS(w) + \
						   (Size) (w)->nwaits * sizeof(NgHistoryWaitRow)))

/*
 * What a reset took out of the table: one statement's totals, and its
 * plans' counts (nplans of them)
 */
typedef struct NgHistoryDeparted
{
	dsa_pointer next;			/* partition lock, exclusive (or the keeper) */
	NgKey		key;
	NgHistoryTotals t;
	int32		nplans;
	NgHistoryPlan plans[FLEXIBLE_ARRAY_MEMBER];
} NgHistoryDeparted;

#define NG_HISTORY_DEPARTED_SIZE(np) \
	(offsetof(NgHistoryDeparted, plans) + (Size) (np) * sizeof(NgHistoryPlan))

/*
 * The counts of an unbound slot whose statement never got an entry, given
 * up by its fold (slots/fold.c) under the partition lock, which cannot
 * allocate: kept in main shared memory, a few per partition.  Their
 * durations are not kept (no histogram).
 */
#define NG_HISTORY_UNBOUND_KEPT	32

/* the plans an unbound fold's key keeps apart (a plan more: counts lost) */
#define NG_HISTORY_UNBOUND_PLANS	4

typedef struct NgHistoryUnbound
{
	NgKey		key;
	NgHistoryCounts c;
	int32		nplans;
	NgHistoryPlan plans[NG_HISTORY_UNBOUND_PLANS];
} NgHistoryUnbound;

/* what a partition keeps of its unbound folds; partition lock */
typedef struct NgHistoryUnboundList
{
	int			n;
	int64		lost;			/* folds that found the list full */
	NgHistoryUnbound v[NG_HISTORY_UNBOUND_KEPT];
} NgHistoryUnboundList;

/* In main shared memory */
typedef struct NgHistoryShared
{
	LWLock	   *lock;			/* the list and what follows, to the atomics */
	dsa_pointer first;			/* lock: the oldest window */
	dsa_pointer last;			/* lock: the newest */
	int64		nwindows;		/* lock */
	int64		bytes;			/* lock: the windows' memory */
	int64		windows_dropped;	/* lock: by retention or memory */
	int64		windows_skipped;	/* lock: no memory for the window */
	int64		counts_lost;	/* lock: departed counts that found no memory,
								 * wait samples the handover had no room for */
	TimestampTz open_since;		/* lock: start of the open window; 0: none */

	/* written by the keeper only */
	bool		loaded;			/* the saved windows were looked for */
	pg_atomic_uint32 capturing; /* the keeper keeps what departs */
	pg_atomic_uint32 keeper_procno; /* INVALID_PROC_NUMBER-like: none */
	pg_atomic_uint64 requested; /* take_window requests (any backend) */
	pg_atomic_uint64 closed;	/* requests served (keeper) */
	ConditionVariable cv;		/* closed moved */

	/* each under its partition's lock, exclusive (the keeper: any mode) */
	NgHistoryUnboundList unbound[NG_NUM_PARTITIONS];
} NgHistoryShared;

struct NgSlot;					/* slots/slots.h */

/* Functions in history.c */
extern int	ng_history_interval_s;
extern int	ng_history_memory_kb;
extern int	ng_history_retention_s;
extern int	ng_history_statements;
extern NgHistoryShared *ng_history;
extern void ng_history_define_gucs(void);
extern Size ng_history_shmem_size(void);
extern void ng_history_request_shmem(void);
extern void ng_history_init_shmem(void);
extern void ng_history_totals_add_counters(NgHistoryTotals *t,
										   const NgCounters *c, int sign);
extern void ng_history_totals_add_hist(NgHistoryTotals *t, NgHistView h,
									   int sign);
extern void ng_history_totals_add(NgHistoryTotals *dst,
								  const NgHistoryTotals *src, int sign);
extern void ng_history_counts_add(NgHistoryCounts *dst,
								  const NgHistoryCounts *src);
extern bool ng_history_totals_any(const NgHistoryTotals *t);
extern void ng_history_percentiles(const NgHistoryTotals *t, double *pct);
extern void ng_history_link(dsa_pointer dp, Size size);
extern void ng_history_trim(void);
extern void ng_history_free_all(void);
extern bool ng_history_keep_evicted(NgSharedPartition *part,
									NgSharedEntry *entry, dsa_pointer dp);
extern void ng_history_keep_unbound(int p, const NgKey *key,
									const NgCounters *counts, uint64 planid);

/* Functions in history_capture.c */
extern void *ng_history_capture_begin(void);
extern void ng_history_capture_entry(void *cap, int p,
									 const NgSharedEntry *entry,
									 dsa_pointer dp);
extern void ng_history_capture_slots(void *cap, int p,
									 uint32 old_generation);
extern void ng_history_capture_end(void *cap);

/* Functions in history_keeper.c */
extern void ng_history_keeper_start(void);
extern void ng_history_keeper_restored(const NgKey *key, const NgCounters *c,
									   NgHistView h);
extern void ng_history_keeper_tick(void);
extern void ng_history_keeper_shutdown(void);

/* Functions in history_waits.c */
extern void ng_history_waits_open(void);
extern void ng_history_waits_take(void);
extern NgHistoryWaitRow *ng_history_waits_rows(const NgKey *kept, int nkeep,
											   int *nwaits);
extern void ng_history_waits_stop(void);

/* Functions in history_plans.c */
extern int	ng_history_plans_of_entry(const NgSharedEntry *entry,
									  NgHistoryPlan *out, int max);
extern bool ng_history_plan_of_slot(const NgSharedEntry *entry,
									const struct NgSlot *copy,
									NgHistoryPlan *out);
extern void ng_history_plans_start(MemoryContext cxt);
extern void ng_history_plans_departed(const NgKey *key,
									  const NgHistoryPlan *plans, int n);
extern void ng_history_plans_evicted(const NgSharedEntry *entry);
extern void ng_history_plans_read(const NgKey *keys,
								  const NgHistoryPlan *plans, int n,
								  uint64 read);
extern NgHistoryPlanRow *ng_history_plans_close(uint64 read, bool opening,
												const NgKey *kept, int nkeep,
												int *nplans);

/* Functions in history_persist.c */
extern void ng_history_save(void);
extern void ng_history_load(void);

#pragma GCC visibility pop

#endif							/* NG_HISTORY_H */
