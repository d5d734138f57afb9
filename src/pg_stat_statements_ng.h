/*-------------------------------------------------------------------------
 *
 * pg_stat_statements_ng.h
 *		Types shared by the files of pg_stat_statements_ng, and the
 *		functions each file offers the others.
 *
 * The architecture in one paragraph (docs/design.md has the long form):
 * statistics live in two places.  Shared entries (store.c) sit in a
 * partitioned hash table in a DSA area; each partition has one LWLock.
 * Every backend also owns a fixed array of slots in main shared memory
 * (slots.c), which accumulate the counts of the statements it runs; only
 * the owner writes its slots, bracketing each write with a change count so
 * that readers copy them consistently without a lock.  A reader
 * (funcs.c) adds, partition by partition and under that partition's lock
 * in shared mode, the entries and every slot bound to the partition.  A
 * backend moves ("folds") a slot's counts into its entry only while
 * holding the partition lock exclusively, so a read sees each execution
 * exactly once.  Entries are evicted by a clock sweep (evict.c) that never
 * waits for a lock and never takes an entry a slot is bound to.  Query
 * texts are normalized and kept in the same DSA area (qtext.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_STAT_STATEMENTS_NG_H
#define PG_STAT_STATEMENTS_NG_H

#include "compat.h"

#include "fmgr.h"

#include "datatype/timestamp.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/dsa.h"

#define NG_NAME					"pg_stat_statements_ng"

/* Partitions of the shared table: a power of two */
#define NG_NUM_PARTITIONS		32

/* Bytes of main shared memory given to the DSA area's first segment */
#define NG_DSA_INITIAL_SIZE		(1024 * 1024)

/* How often (at most) a backend runs its slot maintenance, in ms */
#define NG_MAINTENANCE_INTERVAL_MS	1000

/*
 * Latency histograms: bucket 0 holds durations under NG_HIST_MIN_MS; bucket
 * b >= 1 holds [NG_HIST_MIN_MS * r^(b-1), NG_HIST_MIN_MS * r^b) with
 * r = NG_HIST_RATIO, up to about ten hours; the last bucket takes the rest.
 * A percentile is reported as its bucket's geometric midpoint, within
 * sqrt(r) - 1 = 4.9% of the true value.
 */
#define NG_HIST_BUCKETS		256
#define NG_HIST_MIN_MS		0.001
#define NG_HIST_RATIO		1.1

/* Largest usage an entry can earn; halved by each pass of the clock */
#define NG_USAGE_MAX			(1U << 30)

/* The key of a statistics row: one per (user, database, queryid, toplevel) */
typedef struct NgKey
{
	Oid			userid;
	Oid			dbid;
	uint64		queryid;
	bool		toplevel;
	/* padding is always zeroed: keys are hashed and compared as bytes */
} NgKey;

typedef enum NgKind
{
	NG_PLAN = 0,
	NG_EXEC,
	NG_NUM_KINDS
} NgKind;

/*
 * Everything counted for a statement.  The same struct accumulates in a
 * slot, in a shared entry and in a reader's result, and counters.c merges
 * any two of them.  Times are in milliseconds.
 *
 * min/max are meaningful only when minmax_calls > 0: that is the number of
 * samples since the last min/max reset (a reset of min/max alone keeps the
 * mean and stddev, which span all calls).
 */
typedef struct NgCounters
{
	int64		calls[NG_NUM_KINDS];	/* plans, calls */
	int64		minmax_calls[NG_NUM_KINDS];
	double		total_time[NG_NUM_KINDS];
	double		min_time[NG_NUM_KINDS];
	double		max_time[NG_NUM_KINDS];
	double		mean_time[NG_NUM_KINDS];
	double		sum_var_time[NG_NUM_KINDS]; /* sum of squared deviations */
	int64		rows;
	int64		shared_blks_hit;
	int64		shared_blks_read;
	int64		shared_blks_dirtied;
	int64		shared_blks_written;
	int64		local_blks_hit;
	int64		local_blks_read;
	int64		local_blks_dirtied;
	int64		local_blks_written;
	int64		temp_blks_read;
	int64		temp_blks_written;
	double		shared_blk_read_time;
	double		shared_blk_write_time;
	double		local_blk_read_time;
	double		local_blk_write_time;
	double		temp_blk_read_time;
	double		temp_blk_write_time;
	int64		wal_records;
	int64		wal_fpi;
	uint64		wal_bytes;
	int64		wal_buffers_full;
	int64		jit_functions;
	double		jit_generation_time;
	int64		jit_inlining_count;
	double		jit_inlining_time;
	int64		jit_optimization_count;
	double		jit_optimization_time;
	int64		jit_emission_count;
	double		jit_emission_time;
	int64		jit_deform_count;
	double		jit_deform_time;
	int64		parallel_workers_to_launch;
	int64		parallel_workers_launched;

	/* executions that ended in an error, by cause, and their time (ms) */
	int64		failed_errors;
	int64		failed_cancels;
	int64		failed_timeouts;
	double		failed_time;

	/* durations of successful plannings and executions, log-scaled */
	uint32		hist[NG_NUM_KINDS][NG_HIST_BUCKETS];

	/* start of the top-level statement of the last execution or failure */
	TimestampTz last_executed_at;
	/* the change generation when these counts last changed (see funcs.c) */
	uint64		changed_generation;
} NgCounters;

/*
 * One execution (or one planning) to be counted: what the hooks measured.
 */
/* How an execution ended, when it did not succeed */
typedef enum NgFailure
{
	NG_SUCCEEDED = 0,
	NG_FAILED_ERROR,
	NG_FAILED_CANCEL,			/* canceled by a user or an admin */
	NG_FAILED_TIMEOUT			/* canceled by statement_timeout */
} NgFailure;

typedef struct NgSample
{
	NgKind		kind;
	NgFailure	failure;
	double		time;			/* ms */
	TimestampTz started_at;		/* of the top-level statement */
	uint64		rows;
	const BufferUsage *bufusage;
	const WalUsage *walusage;
	const struct JitInstrumentation *jitusage;
	int64		parallel_workers_to_launch;
	int64		parallel_workers_launched;
} NgSample;

/*
 * Where the text of a statement comes from, as the hooks see it.
 */
typedef struct NgTextSource
{
	const char *query;			/* the whole source string */
	int			location;		/* statement's offset in it, or -1 */
	int			len;			/* statement's length, or <= 0 for the rest */
	JumbleState *jstate;		/* constants to replace, or NULL */
	bool		utility;		/* a utility statement: replace every literal
								 * the scanner finds, too */
} NgTextSource;

/*
 * A shared entry, allocated in the DSA area and chained in its partition's
 * hash table.
 */
typedef struct NgSharedEntry
{
	NgKey		key;			/* immutable */
	uint32		hash;			/* immutable: hash of key */
	dsa_pointer next;			/* partition lock: next in bucket chain */

	/*
	 * Number of backend slots bound to this entry.  Changed with the
	 * partition lock held in at least shared mode; read under the partition
	 * lock in exclusive mode by eviction and reset, so it cannot change while
	 * they look.
	 */
	pg_atomic_uint32 pins;

	/*
	 * Set, with the partition lock held exclusively, when a reset removes an
	 * entry that slots are still bound to: the entry is out of the hash and
	 * its memory is freed by whoever drops the last pin.  Bound slots read it
	 * without a lock.
	 */
	bool		dead;

	/*
	 * Partition lock: a text was dropped for this entry (text memory full)
	 * and counted in texts_dropped; cleared when a text is stored, so each
	 * statement kept without text is counted once.
	 */
	bool		text_dropped;

	/* partition lock; read without lock by bound slots */
	uint32		minmax_generation;

	uint32		usage;			/* partition lock, exclusive to write */
	dsa_pointer qtext;			/* partition lock; InvalidDsaPointer: none */
	int			text_len;		/* partition lock */
	int			encoding;		/* partition lock */
	TimestampTz stats_since;	/* partition lock */
	TimestampTz minmax_stats_since; /* partition lock */
	TimestampTz text_stored_at; /* partition lock; 0 if no text */
	NgCounters	counters;		/* partition lock: the folded counts */
} NgSharedEntry;

/*
 * One partition of the shared table: two cache lines (engineer "hot": the
 * layout only).  The first holds what tracked statements read unlocked at
 * parse and execution, written only by resets; the second what inserts and
 * eviction write, so that they do not invalidate the first in the caches
 * of backends that run other statements.
 */
typedef struct NgSharedPartition
{
	/* ---- read-mostly: read without lock on the hot path ---- */
	LWLock	   *lock;			/* set at startup */

	/*
	 * Bumped (exclusive lock) by a full reset, and by a partial reset that
	 * matches the key of an unbound slot of this partition; read unlocked by
	 * backends.  Counts of slots not bound to an entry are void once this
	 * differs from what the slot saw.
	 */
	uint32		generation;

	/*
	 * Bumped (exclusive lock) whenever texts may have been removed from
	 * entries of this partition (resets that remove entries, text memory
	 * shrinking); read unlocked by backends, which then look again before
	 * trusting that an entry has its text.
	 */
	uint32		text_epoch;
	char		pad_read[PG_CACHE_LINE_SIZE - sizeof(LWLock *) - 2 * sizeof(uint32)];

	/* ---- written by inserts and eviction, under the lock ---- */
	dsa_pointer buckets;		/* lock: array of nbuckets dsa_pointer */
	uint32		nbuckets;		/* lock: a power of two, or 0 */
	uint32		nentries;		/* lock: live entries */
	uint32		clock_bucket;	/* lock (exclusive): eviction hand */
	char		pad_write[PG_CACHE_LINE_SIZE - sizeof(dsa_pointer) - 3 * sizeof(uint32)];
} NgSharedPartition;

StaticAssertDecl(sizeof(NgSharedPartition) == 2 * PG_CACHE_LINE_SIZE,
				 "NgSharedPartition is two cache lines");

/* Figures of the info view, under NgSharedState.mutex */
typedef struct NgSharedStats
{
	int64		dealloc;		/* entries evicted */
	int64		evicted_calls;	/* calls those entries had */
	double		evicted_exec_time;	/* their total_exec_time */
	TimestampTz last_eviction_time;
	int64		texts_dropped;	/* entries kept without text: memory full
								 * (once each: NgSharedEntry.text_dropped) */
	int64		entries_refused;	/* entries not created: table full */
	int64		counts_discarded;	/* executions lost (see design.md) */
	int64		unadmitted_calls;	/* calls of statements that got no entry */
	int64		lock_misses;	/* conditional lock attempts that failed */
	int64		dsa_failures;	/* DSA allocations refused: the area could not
								 * grow (store.c, ng_dsa_allocate) */
	TimestampTz stats_reset;
} NgSharedStats;

/*
 * The fixed part in main shared memory, cache-line aligned (ShmemInitStruct).
 * Layout (engineer "hot"): the partitions first (each two cache lines, see
 * above), then change_generation on a line of its own (read by every tracked
 * execution, written only by changed_since calls), then the fields that
 * inserts, evictions, folds and text storage write.
 */
typedef struct NgSharedState
{
	NgSharedPartition partitions[NG_NUM_PARTITIONS];
	pg_atomic_uint64 change_generation; /* advanced by each changed_since */
	char		pad_change_generation[PG_CACHE_LINE_SIZE - sizeof(pg_atomic_uint64)];

	int			dsa_tranche;	/* set by postmaster */
	pg_atomic_uint32 entry_count;	/* live entries in all partitions */
	pg_atomic_uint64 text_bytes;	/* DSA bytes held by texts */
	pg_atomic_uint32 clock_partition;	/* eviction: next partition */
	pg_atomic_uint32 losses_logged; /* NgLoss bits already logged */
	pg_atomic_uint64 folds;		/* slot folds, for the info view */
	pg_atomic_uint32 dsa_capped;	/* 1: growth of the DSA area is blocked
									 * (size limit 0) after a failure */
	pg_atomic_uint64 dsa_retry_at;	/* when capped: TimestampTz after which
									 * one backend lifts the cap and retries */
	bool		restore_pending;	/* set by postmaster, cleared by keeper */
	slock_t		mutex;			/* protects stats */
	NgSharedStats stats;
	/* the DSA area's first segment follows, then the slot areas */
} NgSharedState;

StaticAssertDecl(offsetof(NgSharedState, change_generation) % PG_CACHE_LINE_SIZE == 0 &&
				 offsetof(NgSharedState, dsa_tranche) % PG_CACHE_LINE_SIZE == 0,
				 "change_generation has a cache line of its own");

/* ----------------------------------------------------------------
 * Per-backend slots (slots.c)
 * ----------------------------------------------------------------
 */

/* A slot: counts of one statement, written by its owning backend only */
typedef struct NgSlot
{
	/*
	 * Odd while the owner writes.  The owner increments it (a plain store)
	 * before and after every change, with write barriers; readers retry until
	 * they see the same even value before and after their copy.
	 */
	uint32		changecount;
	uint32		partition_generation;	/* for unbound slots */
	uint32		minmax_generation;	/* entry's, when counts began */
	bool		in_use;
	uint8		partition;		/* of key */
	NgKey		key;
	dsa_pointer entry;			/* bound entry, or InvalidDsaPointer */
	NgCounters	counters;		/* since last fold */
} NgSlot;

/* Slot area of one process (indexed by its PGPROC number) */
typedef struct NgBackendSlots
{
	uint32		nslots;			/* ng_slots_per_backend, for readers */
	bool		active;			/* owner counts here: set at first use,
								 * cleared at exit after folding */

	/*
	 * Which partition each slot counts for (0xFF: free).  Written by the
	 * owner before a slot's counts begin; readers scan it to find the slots
	 * of one partition without touching every slot.
	 */
	uint8		partition_of[FLEXIBLE_ARRAY_MEMBER];
} NgBackendSlots;

#define NG_SLOT_FREE			0xFF

/* ----------------------------------------------------------------
 * GUCs (guc.c)
 * ----------------------------------------------------------------
 */
typedef enum NgTrackLevel
{
	NG_TRACK_NONE,
	NG_TRACK_TOP,
	NG_TRACK_ALL
} NgTrackLevel;

extern int	ng_max;
extern int	ng_track;
extern bool ng_track_utility;
extern bool ng_track_planning;
extern bool ng_save;
extern int	ng_query_text_memory_kb;
extern int	ng_slots_per_backend;
#ifdef USE_ASSERT_CHECKING
extern bool ng_debug_fail_at_exit;
#endif
extern double ng_sample_rate;

extern void ng_define_gucs(void);

/*
 * Faults that tests inject, in assertion builds only (the setting
 * pg_stat_statements_ng.debug_fault does not exist in release builds, and
 * NG_DEBUG_FAULT is then false): an ERROR inside the recording of failures,
 * or a stall, while the file "pgssng_stall" exists in the data directory
 * (at most 60 s), at a point a real process can be stopped at.
 */
typedef enum NgDebugFault
{
	NG_FAULT_NONE = 0,
	NG_FAULT_FAILURES_RECORD_ERROR, /* once, when recording a failure */
	NG_FAULT_STALL_WRITE,		/* a backend, inside a slot write section */
	NG_FAULT_STALL_READ,		/* a reader, holding every partition lock
								 * shared */
	NG_FAULT_STALL_RESTORE		/* the keeper, before it restores the file */
} NgDebugFault;

extern int	ng_debug_fault;
extern bool ng_debug_fault_armed;
#ifdef USE_ASSERT_CHECKING
#define NG_DEBUG_FAULT(f)	unlikely(ng_debug_fault == (f) && ng_debug_fault_armed)
extern void ng_debug_stall(void);
#else
#define NG_DEBUG_FAULT(f)	false
#define ng_debug_stall()	((void) 0)
#endif

/* ----------------------------------------------------------------
 * Functions in store.c
 * ----------------------------------------------------------------
 */
extern NgSharedState *ng_shared;
extern dsa_area *ng_area;

extern void ng_store_request_shmem(void);
extern void ng_store_init_shmem(void);
extern bool ng_store_attach(void);
extern int	ng_store_num_slot_procs(void);
extern char *ng_store_slot_area_base(void);

extern uint32 ng_key_hash(const NgKey *key);
#define ng_partition_of_hash(h)	((h) & (NG_NUM_PARTITIONS - 1))
extern NgSharedPartition *ng_partition(uint32 hash);
extern NgSharedEntry *ng_entry_lookup(NgSharedPartition *part,
									  const NgKey *key, uint32 hash,
									  dsa_pointer *dp);
extern bool ng_dsa_can_allocate(void);
extern dsa_pointer ng_dsa_allocate(size_t size, int flags);
extern bool ng_entry_prepare(NgSharedPartition *part);
extern void ng_entry_prepared_release(void);
extern dsa_pointer ng_entry_insert(NgSharedPartition *part, const NgKey *key,
								   uint32 hash, dsa_pointer qtext, int text_len,
								   int encoding, bool *found);
extern void ng_entry_unlink(NgSharedPartition *part, NgSharedEntry *entry,
							dsa_pointer dp);
extern void ng_entry_release_memory(NgSharedEntry *entry, dsa_pointer dp);
extern void ng_entry_drop(NgSharedPartition *part, NgSharedEntry *entry,
						  dsa_pointer dp);
extern bool ng_entry_reserve(void);
extern void ng_entry_unreserve(void);
extern TimestampTz ng_store_reset(Oid userid, Oid dbid, uint64 queryid,
								  bool minmax_only);
extern void ng_count_stat(int64 *field, int64 n);

/* Kinds of degradation, each logged once per server until the next reset */
typedef enum NgLoss
{
	NG_LOSS_TEXT_MEMORY = 0,	/* a text did not fit query_text_memory */
	NG_LOSS_TABLE_FULL,			/* no entry could be made room for */
	NG_LOSS_COUNTS,				/* counts were discarded */
	NG_LOSS_DSA,				/* the DSA area could not grow */
	NG_NUM_LOSSES
} NgLoss;

extern void ng_note_loss(NgLoss loss, int64 n);
extern void ng_log_losses(void);

/* ----------------------------------------------------------------
 * Functions in evict.c
 * ----------------------------------------------------------------
 */
extern bool ng_evict_make_room(void);
extern void ng_evict_to_limit(void);
extern void ng_evict_texts_to_limit(void);
extern void ng_evict_earn_usage(NgSharedEntry *entry, int64 calls);

/* ----------------------------------------------------------------
 * Functions in qtext.c
 * ----------------------------------------------------------------
 */
extern char *ng_qtext_prepare(const NgTextSource *src, int *len);
extern dsa_pointer ng_qtext_store(const char *qtext, int len);
extern void ng_qtext_free(dsa_pointer qtext, int len);

/* ----------------------------------------------------------------
 * Functions in counters.c
 * ----------------------------------------------------------------
 */
extern void ng_counters_record(NgCounters *c, const NgSample *s);
extern void ng_counters_merge(NgCounters *dst, const NgCounters *src);
extern void ng_counters_clear_minmax(NgCounters *c);

/* executions that ended in an error, a cancel or a timeout */
static inline int64
ng_counters_failed(const NgCounters *c)
{
	return c->failed_errors + c->failed_cancels + c->failed_timeouts;
}

/* anything counted at all: calls, plans or failures */
static inline bool
ng_counters_any(const NgCounters *c)
{
	return c->calls[NG_EXEC] > 0 || c->calls[NG_PLAN] > 0 ||
		ng_counters_failed(c) > 0;
}

/* engineer "hot": functions in hist.c (were in counters.c) */
extern int	ng_hist_bucket(double ms);
extern double ng_hist_lower(int bucket);
extern int	ng_hist_check(void);
extern bool ng_hist_percentiles(const NgCounters *c, int kind,
								const double *fractions, int nfractions,
								double *ms);

/* ----------------------------------------------------------------
 * Functions in slots.c
 * ----------------------------------------------------------------
 */
extern Size ng_slots_shmem_size(void);
extern void ng_slots_init_shmem(char *base);
extern NgBackendSlots *ng_slots_of_proc(int procno);
extern NgSlot *ng_slot_at(NgBackendSlots *area, int index);
#define NG_SLOT_READ_SPINS		1000
extern bool ng_slot_try_read(const NgSlot *slot, NgSlot *copy);
extern void ng_slots_count(const NgKey *key, const NgSample *sample,
						   const NgTextSource *src);
extern void ng_slots_note_parse(const NgKey *key, const NgTextSource *src);
extern void ng_slots_maintenance(void);

/* ----------------------------------------------------------------
 * Functions in reader.c
 * ----------------------------------------------------------------
 */

/* One row being assembled from an entry and the slots counting for it */
typedef struct NgRow
{
	NgKey		key;			/* hash key: must be first */
	dsa_pointer entry;			/* InvalidDsaPointer: slots only */
	uint32		minmax_generation;
	uint32		usage;
	NgCounters	counters;
	char	   *qtext;			/* palloc'd, or NULL */
	int			qtext_len;
	int			encoding;
	TimestampTz stats_since;
	TimestampTz minmax_stats_since;
	TimestampTz text_stored_at;
} NgRow;

extern struct HTAB *ng_read_rows_create(void);
extern void ng_read_partition(int p, struct HTAB *rows, bool with_text);

/* ----------------------------------------------------------------
 * Functions in funcs.c
 * ----------------------------------------------------------------
 */

/*
 * Shapes of the statement-listing functions: pg_stat_statements' API
 * versions (each adds columns to the one before; see funcs.c), and ours.
 */
typedef enum NgApi
{
	NG_API_PGSS_1_0,
	NG_API_PGSS_1_1,
	NG_API_PGSS_1_2,
	NG_API_PGSS_1_3,
	NG_API_PGSS_1_8,
	NG_API_PGSS_1_9,
	NG_API_PGSS_1_10,
	NG_API_PGSS_1_11,
	NG_API_PGSS_1_12,
	NG_API_NG_1_0				/* pg_stat_statements_ng 1.0: 1.12's shape */
} NgApi;

extern void ng_check_loaded(void);
extern Datum ng_sql_statements(FunctionCallInfo fcinfo, NgApi api,
							   bool showtext);
extern Datum ng_sql_statements_since(FunctionCallInfo fcinfo, NgApi api,
									 bool showtext, int64 since,
									 uint64 generation);

/* ----------------------------------------------------------------
 * Functions in persist.c
 * ----------------------------------------------------------------
 */
extern void ng_persist_startup(void);
extern void ng_persist_register_keeper(void);
extern int64 ng_persist_load_file(void);

/* ----------------------------------------------------------------
 * Functions in failures.c
 * ----------------------------------------------------------------
 */
extern NgFailure ng_failure_classify(void);
extern void ng_failure_note(const NgKey *key, NgFailure failure, double time);
extern void ng_failures_record(void);
extern void ng_failures_init(void);
extern bool ng_failures_pending;

/* record noted failures, if any: a test of one flag on the hot path */
static inline void
ng_failures_flush(void)
{
	if (unlikely(ng_failures_pending))
		ng_failures_record();
}

/* ----------------------------------------------------------------
 * Functions in hooks.c
 * ----------------------------------------------------------------
 */
extern void ng_install_hooks(void);

/* engineer "hot": shared by hooks.c and utility.c */
extern int	ng_nesting_level;

/* is a statement at this nesting level tracked? */
#define ng_enabled(level) \
	((ng_track == NG_TRACK_ALL || (ng_track == NG_TRACK_TOP && (level) == 0)) && \
	 !IsParallelWorker())

extern bool ng_sampled(void);
extern void ng_make_key(NgKey *key, uint64 queryid);
extern void ng_count(uint64 queryid, const char *query, int location, int len,
					 bool utility, NgSample *sample);
extern void ng_usage_since(NgSample *sample, BufferUsage *bufusage,
						   const BufferUsage *bufusage_start,
						   WalUsage *walusage, const WalUsage *walusage_start);

/* Functions in utility.c */
extern void ng_install_utility_hook(void);

#endif							/* PG_STAT_STATEMENTS_NG_H */
