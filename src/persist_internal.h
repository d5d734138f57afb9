/*-------------------------------------------------------------------------
 *
 * persist_internal.h
 *		The dump file's format, shared by the keeper (persist.c), the
 *		writer (persist_write.c) and the loader (persist_read.c); nothing
 *		else includes it.
 *
 * Locks: both functions are called by the keeper holding no lock of ours;
 * the writer reads through reader.c, the loader inserts under each
 * partition's lock, exclusive, one partition at a time.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_PERSIST_INTERNAL_H
#define NG_PERSIST_INTERNAL_H

#include "port/pg_crc32c.h"

#include "counters.h"
#include "entry_errors.h"
#include "hist.h"
#include "shmem.h"

#pragma GCC visibility push(hidden)

#define NG_DUMP_FILE		"pg_stat/pg_stat_statements_ng.stat"
#define NG_DUMP_TMP_FILE	NG_DUMP_FILE ".tmp"
#define NG_DUMP_MAGIC		0x4E475353	/* "SSGN" */
/*
 * The format version names one layout of the header and of the entries'
 * fixed part; any change to NgDumpHeader, NgSharedStats, NgDumpEntry (but
 * NgCounters, whose size the header carries) needs a new one, and the
 * loader fuzzer's corpus written again (fuzz/make-loader-corpus.sh; the
 * fuzz mode fails on a corpus of another format).
 *   1: first layout (96-byte header)
 *   2: NgSharedStats gained unadmitted_calls (104-byte header), entries
 *	    text_stored_at
 *   3: NgSharedStats gained dsa_failures (112-byte header)
 *   4: histograms apart from NgCounters, sparse: an entry's hist_mask, and
 *      its groups (hist.h) after the fixed part, before the text
 *   5: NgSharedStats gained admissions_refused; the header names the
 *      file written in contrib's format beside it (persist_contrib.c), in
 *      16 bytes before the entry count (136-byte header)
 *   6: failures by SQLSTATE after the entries: NgDumpErrorsHead, then
 *      its count of NgDumpErrors.  The loader also reads format 5 (the
 *      same file without them).
 *   7: plan statistics after the failures: NgDumpPlansHead, then its
 *      count of NgDumpPlan, each followed by its plan text.  The loader
 *      also reads formats 5 and 6 (their statements; no plans).
 */
#define NG_DUMP_FORMAT		7
#define NG_DUMP_FORMAT_OLDEST	5

/* The fixed part at the head of the file */
typedef struct NgDumpHeader
{
	uint32		magic;
	uint32		format;
	uint32		pg_major;
	uint32		counters_size;
	NgSharedStats stats;
	/* contrib's file written with this one: its size (0: none) and CRC-32C */
	uint64		contrib_size;
	uint32		contrib_crc;
	uint32		pad;
	uint64		nentries;		/* last, as in every format */
} NgDumpHeader;

/*
 * The fixed part of each entry; its histogram groups
 * (ng_hist_groups_size(hist_mask) bytes), then its text (text_len bytes)
 * follow
 */
typedef struct NgDumpEntry
{
	NgKey		key;
	NgCounters	counters;
	TimestampTz stats_since;
	TimestampTz minmax_stats_since;
	TimestampTz text_stored_at;
	uint32		usage;
	int32		encoding;
	int32		text_len;		/* -1: no text */
	uint32		hist_mask;
} NgDumpEntry;

/* Format 6: what follows the entries (entry_errors.h) */
typedef struct NgDumpErrorsHead
{
	int64		sqlstates_lost; /* the info figure */
	uint64		nerrors;		/* NgDumpErrors that follow */
} NgDumpErrorsHead;

/* one entry's failures by SQLSTATE (a zero queryid: padding) */
typedef struct NgDumpErrors
{
	NgKey		key;
	NgErrorCount counts[NG_ERROR_SQLSTATES + 1];
} NgDumpErrors;

/* Format 7: what follows the failures (plans.h) */
typedef struct NgDumpPlansHead
{
	int64		plan_texts_dropped; /* the info figures */
	int64		plan_calls_lost;
	uint64		nplans;			/* NgDumpPlan that follow */
} NgDumpPlansHead;

/*
 * One row of pg_stat_statements_ng_plans, then its text (text_len bytes).
 * A statement's rows follow each other, in the order its records were
 * taken, its "other" row (planid 0) last.
 */
typedef struct NgDumpPlan
{
	NgKey		key;
	uint64		planid;			/* 0: the statement's "other" row */
	int64		calls;
	double		total_time;
	double		min_time;		/* below 0: none */
	double		max_time;
	int64		rows;
	TimestampTz first_seen;
	TimestampTz last_seen;
	int32		text_len;		/* -1: no text */
	int32		encoding;
} NgDumpPlan;

/*
 * The most plan text bytes a dump may hold: those it was saved with were
 * within plan_text_memory then, which may have been lowered since
 */
#define NG_DUMP_PLAN_TEXT_FLOOR	((uint64) 64 * 1024 * 1024)

/* The loader reads a dump in pieces of this size */
#define NG_DUMP_READ_CHUNK	(64 * 1024)

/*
 * A sequential reader of a dump: hands out the bytes of the body (the dump
 * but its CRC trailer) in order, keeping the CRC of what it handed out.
 * Its bytes come from fd, or from mem if that is set (assertion builds'
 * fuzz entry point).  Memory: one chunk, whatever the dump's size.
 */
typedef struct NgDumpReader
{
	int			fd;
	const char *mem;			/* size bytes, or NULL: read fd */
	char	   *buf;			/* NG_DUMP_READ_CHUNK bytes */
	size_t		buf_pos;		/* next byte of buf to hand out */
	size_t		buf_len;		/* bytes read into buf */
	size_t		size;			/* bytes of the dump */
	size_t		file_left;		/* bytes of the dump not yet read into buf */
	size_t		left;			/* bytes of the body not yet handed out */
	pg_crc32c	crc;
	bool		io_error;		/* a read failed or the dump was shorter */
} NgDumpReader;

/* persist_reader.c: the sequential reader */
extern bool ng_dump_reader_start(NgDumpReader *r, size_t size);
extern bool ng_dump_read(NgDumpReader *r, void *out, size_t len, bool *nul);
extern bool ng_dump_read_trailer(NgDumpReader *r, pg_crc32c *stored);

/* persist_write.c: write every row to the file (the keeper, at shutdown) */
extern void ng_persist_dump(void);

/* persist_read.c: validate and restore the file (the keeper, at startup) */
extern int64 ng_persist_load_file(void);
#ifdef USE_ASSERT_CHECKING
#include "common/pg_prng.h"

extern const char *ng_persist_check_buffer(const char *data, size_t size,
										   bool *past_header);
#endif

#ifdef USE_ASSERT_CHECKING
/*
 * persist_fuzz_mutate.c: the loader fuzzer's mutations (assertion builds).
 * Where the entries of a dump of the current format lie: the offset of
 * each entry's fixed part, and of the CRC trailer after the last.
 */
typedef struct NgFuzzDump
{
	uint64		nentries;
	size_t	   *entry_at;		/* nentries + 1 offsets */
	size_t		max_entries;	/* room in entry_at, but one */
	size_t		plans_at;		/* the plans' head (format 7) */
	uint64		nplans;
	size_t	   *plan_at;		/* nplans + 1 offsets */
	size_t		max_plans;		/* room in plan_at, but one */
} NgFuzzDump;

/* the dump being mutated */
typedef struct NgFuzzBuf
{
	char	   *data;
	size_t		len;			/* bytes of the dump */
	size_t		cap;			/* room at data */
} NgFuzzBuf;

extern void ng_fuzz_mutate_raw(pg_prng_state *rng, char *buf, size_t *len,
							   size_t cap, const char *other, size_t other_len);
extern void ng_fuzz_mutate_dump(pg_prng_state *rng, NgFuzzBuf *b,
								NgFuzzDump *d, const char *other,
								size_t other_len);
extern void ng_fuzz_fix_crc(char *buf, size_t len);
#endif

/* persist_restore.c: validated rows into the table (the keeper, at startup) */
extern void ng_persist_restore_begin(void);
extern bool ng_persist_restore_entry(const NgDumpEntry *de, const uint64 *hist,
									 const char *qtext);
extern bool ng_persist_restore_voided(void);
extern void ng_persist_restore_errors(const NgDumpErrors *de);
extern void ng_persist_restore_errors_lost(int64 lost);
extern void ng_persist_restore_plan(const NgDumpPlan *dp, const char *text);
extern void ng_persist_restore_plans_end(const NgDumpPlansHead *head);
extern void ng_persist_merge_stats(const NgSharedStats *saved);

#pragma GCC visibility pop

#endif							/* NG_PERSIST_INTERNAL_H */
