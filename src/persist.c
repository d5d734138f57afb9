/*-------------------------------------------------------------------------
 *
 * persist.c
 *		Statistics across clean restarts: the keeper worker, the dump at
 *		shutdown and the restore at startup.
 *
 * Why a file of its own: the file format, and the rule that nothing read
 * from the file is trusted, belong together; and this is the one part of
 * the extension with a process of its own.
 *
 * Who does what.  The postmaster, when it creates shared memory, decides
 * whether saved statistics may be restored: only if the previous shutdown
 * was clean (pg_control says so).  After a crash, an immediate stop, or a
 * crash-restart of the server, it removes any file and says so once in the
 * log.  Shared memory in a DSA area can only be allocated by a child
 * process, so the rest is done by the keeper, a background worker started
 * with the postmaster: it restores the file (merging into whatever backends
 * recorded meanwhile) and removes it; while the server runs it applies a
 * lowered max even when no backend is busy; at shutdown (SIGTERM) it waits
 * briefly for the other backends to fold their slots and exit, then writes
 * every row to a temporary file, fsyncs it and renames it into place.
 *
 * The file: a header (magic, format version, server major, size of the
 * counters, the info figures, the entry count), the entries, and a CRC-32C
 * of everything before it.  The loader opens the file without blocking
 * and refuses anything but a regular file, and a file larger than the
 * settings could have written (max and slot rows, query_text_memory of
 * texts); it then reads the file in pieces, twice: the first pass checks
 * the CRC and validates every entry, bounding each length by the bytes that
 * remain, the second restores.  A file is accepted or rejected as a whole,
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
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "alloc.h"
#include "counters.h"
#include "evict.h"
#include "guc.h"
#include "persist.h"
#include "persist_internal.h"
#include "qtext.h"
#include "reader.h"
#include "shmem.h"
#include "slots.h"
#include "store.h"

/* How long the keeper waits at shutdown for backends to fold and exit */
#define NG_SHUTDOWN_WAIT_MS	10000

PGDLLEXPORT void pg_stat_statements_ng_keeper_main(Datum arg);

static volatile sig_atomic_t keeper_shutdown = false;
static volatile sig_atomic_t keeper_stopped_by_postmaster = false;

/* ---- deciding at server start ---- */

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
	bool		have_file = (stat(NG_DUMP_FILE, &st) == 0);

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
			unlink(NG_DUMP_FILE);
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: statistics start empty after an unclean shutdown")));
	}
}

/* ---- the dump ---- */

typedef struct DumpWriter
{
	FILE	   *file;
	pg_crc32c	crc;
	bool		failed;
} DumpWriter;

static void
dump_write(DumpWriter *w, const void *data, size_t len)
{
	if (w->failed || len == 0)
		return;
	COMP_CRC32C(w->crc, data, len);
	if (fwrite(data, 1, len, w->file) != len)
		w->failed = true;
}

/*
 * persist_dump
 *		Write every row (shared entries plus slots) to the dump file, via a
 *		temporary file that is fsynced and renamed.  Logs one line and leaves
 *		no file on failure.
 */
static void
persist_dump(void)
{
	DumpWriter	w;
	NgDumpHeader hdr;
	MemoryContext cxt;
	MemoryContext oldcxt;
	uint64		nentries = 0;
	int			save_errno;

	cxt = AllocSetContextCreate(TopMemoryContext, "pg_stat_statements_ng dump",
								ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);

	w.file = AllocateFile(NG_DUMP_TMP_FILE, PG_BINARY_W);
	if (w.file == NULL)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("pg_stat_statements_ng: could not save statistics: could not create file \"%s\": %m",
						NG_DUMP_TMP_FILE)));
		goto done;
	}
	w.failed = false;
	INIT_CRC32C(w.crc);

	/* the header, with the entry count patched in at the end */
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = NG_DUMP_MAGIC;
	hdr.format = NG_DUMP_FORMAT;
	hdr.pg_major = PG_VERSION_NUM / 100;
	hdr.counters_size = sizeof(NgCounters);
	SpinLockAcquire(&ng_shared->mutex);
	hdr.stats = ng_shared->stats;
	SpinLockRelease(&ng_shared->mutex);

	/*
	 * The CRC covers the header as finally written, so write the entries
	 * first into the CRC of a second pass: simpler to count them first.
	 */
	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		HTAB	   *rows = ng_read_rows_create();

		ng_read_partition(p, rows, false);
		nentries += hash_get_num_entries(rows);
		hash_destroy(rows);
	}
	hdr.nentries = nentries;
	dump_write(&w, &hdr, sizeof(hdr));

	nentries = 0;
	for (int p = 0; p < NG_NUM_PARTITIONS && !w.failed; p++)
	{
		HTAB	   *rows = ng_read_rows_create();
		HASH_SEQ_STATUS seq;
		NgRow	   *row;

		ng_read_partition(p, rows, true);
		hash_seq_init(&seq, rows);
		while ((row = hash_seq_search(&seq)) != NULL)
		{
			NgDumpEntry de;

			/* rows that appeared since the count are left for next time */
			if (nentries == hdr.nentries)
				continue;
			memset(&de, 0, sizeof(de));
			de.key = row->key;
			de.counters = row->counters;
			de.stats_since = row->stats_since;
			de.minmax_stats_since = row->minmax_stats_since;
			de.text_stored_at = row->text_stored_at;
			de.usage = row->usage;
			de.encoding = row->encoding;
			de.text_len = row->qtext ? row->qtext_len : -1;
			dump_write(&w, &de, sizeof(de));
			if (row->qtext)
				dump_write(&w, row->qtext, row->qtext_len);
			nentries++;
		}
		hash_destroy(rows);
	}

	/* pad with empty rows if some disappeared since the count */
	while (nentries < hdr.nentries && !w.failed)
	{
		NgDumpEntry de;

		memset(&de, 0, sizeof(de));
		de.text_len = -1;
		de.encoding = GetDatabaseEncoding();
		dump_write(&w, &de, sizeof(de));
		nentries++;
	}

	FIN_CRC32C(w.crc);
	if (!w.failed && fwrite(&w.crc, 1, sizeof(w.crc), w.file) != sizeof(w.crc))
		w.failed = true;
	save_errno = errno;
	if (FreeFile(w.file) != 0 && !w.failed)
	{
		w.failed = true;
		save_errno = errno;
	}
	if (w.failed)
	{
		errno = save_errno;
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("pg_stat_statements_ng: could not save statistics: could not write file \"%s\": %m",
						NG_DUMP_TMP_FILE)));
		unlink(NG_DUMP_TMP_FILE);
		goto done;
	}
	/* fsyncs the file, renames it, fsyncs the directory */
	if (durable_rename(NG_DUMP_TMP_FILE, NG_DUMP_FILE, LOG) != 0)
		unlink(NG_DUMP_TMP_FILE);

done:
	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(cxt);
}

/* ---- the restore ---- */

/* The loader reads the file in pieces of this size */
#define NG_DUMP_READ_CHUNK	(64 * 1024)

/*
 * A sequential reader of the dump file: hands out the bytes of the body (the
 * file but its CRC trailer) in order, keeping the CRC of what it handed out.
 * Memory: one chunk, whatever the file's size.
 */
typedef struct DumpReader
{
	int			fd;
	char	   *buf;			/* NG_DUMP_READ_CHUNK bytes */
	size_t		buf_pos;		/* next byte of buf to hand out */
	size_t		buf_len;		/* bytes read into buf */
	size_t		file_left;		/* bytes of the file not yet read into buf */
	size_t		left;			/* bytes of the body not yet handed out */
	pg_crc32c	crc;
	bool		io_error;		/* a read failed or the file was shorter */
} DumpReader;

static bool
dump_reader_start(DumpReader *r, size_t size)
{
	r->buf_pos = r->buf_len = 0;
	r->file_left = size;
	r->left = size - sizeof(pg_crc32c);
	r->io_error = false;
	INIT_CRC32C(r->crc);
	return lseek(r->fd, 0, SEEK_SET) == 0;
}

static bool
dump_fill(DumpReader *r)
{
	size_t		want = Min(NG_DUMP_READ_CHUNK, r->file_left);
	ssize_t		n;

	if (want == 0)
	{
		r->io_error = true;
		return false;
	}
	do
	{
		n = read(r->fd, r->buf, want);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
	{
		r->io_error = true;
		return false;
	}
	r->buf_pos = 0;
	r->buf_len = n;
	r->file_left -= n;
	return true;
}

/*
 * dump_read
 *		Hand out the next len bytes of the body into out (or nowhere, if out
 *		is NULL), adding them to the CRC; sets *nul if one of them is a zero
 *		byte (nul may be NULL).  False if fewer than len bytes are left or
 *		the file cannot be read (then io_error is set).
 */
static bool
dump_read(DumpReader *r, void *out, size_t len, bool *nul)
{
	char	   *to = out;

	if (len > r->left)
		return false;
	while (len > 0)
	{
		size_t		n;

		if (r->buf_pos == r->buf_len && !dump_fill(r))
			return false;
		n = Min(len, r->buf_len - r->buf_pos);
		COMP_CRC32C(r->crc, r->buf + r->buf_pos, n);
		if (nul != NULL && memchr(r->buf + r->buf_pos, '\0', n) != NULL)
			*nul = true;
		if (to != NULL)
		{
			memcpy(to, r->buf + r->buf_pos, n);
			to += n;
		}
		r->buf_pos += n;
		r->left -= n;
		len -= n;
	}
	return true;
}

/*
 * dump_read_trailer
 *		Once the body is handed out: read the CRC trailer.
 */
static bool
dump_read_trailer(DumpReader *r, pg_crc32c *stored)
{
	pg_crc32c	crc = r->crc;
	bool		ok;

	Assert(r->left == 0);
	r->left = sizeof(pg_crc32c);
	ok = dump_read(r, stored, sizeof(pg_crc32c), NULL);
	r->crc = crc;
	return ok;
}

/*
 * persist_check_entry
 *		Read one entry's fixed part and its text, checking every field that
 *		could make it unsafe to use.  With qtext, the text is returned in
 *		*qtext (palloc'd, NUL-terminated; NULL if none); without, it is only
 *		checked.  Returns NULL if it is fine, else why not.
 */
static const char *
persist_check_entry(DumpReader *r, NgDumpEntry *de, char **qtext)
{
	bool		nul = false;
	char	   *tbuf = NULL;

	if (qtext != NULL)
		*qtext = NULL;
	if (!dump_read(r, de, sizeof(*de), NULL))
		return "truncated entry";
	if (de->text_len < -1 || (de->text_len >= 0 && (size_t) de->text_len > r->left))
		return "invalid text length";
	if (!PG_VALID_ENCODING(de->encoding))
		return "invalid encoding";
	if (de->counters.calls[NG_PLAN] < 0 || de->counters.calls[NG_EXEC] < 0 ||
		de->counters.minmax_calls[NG_PLAN] < 0 ||
		de->counters.minmax_calls[NG_EXEC] < 0)
		return "invalid counters";
	if (de->text_len < 0)
		return NULL;
	if (qtext != NULL)
	{
		/* no larger than the file, which is bounded by the settings */
		tbuf = palloc_extended((Size) de->text_len + 1,
							   MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
		if (tbuf == NULL)
			return "out of memory";
		tbuf[de->text_len] = '\0';
	}
	if (!dump_read(r, tbuf, de->text_len, &nul) || nul)
	{
		if (tbuf)
			pfree(tbuf);
		return nul ? "invalid text" : "truncated entry";
	}
	if (qtext != NULL)
		*qtext = tbuf;
	return NULL;
}

/*
 * persist_restore_entry
 *		Put one saved entry into the table, merging with an entry a backend
 *		created meanwhile.  Returns false if there was no room.
 */
static bool
persist_restore_entry(const NgDumpEntry *de, const char *qtext)
{
	uint32		hash = ng_key_hash(&de->key);
	NgSharedPartition *part = ng_partition(hash);
	dsa_pointer tdp = InvalidDsaPointer;
	dsa_pointer dp;
	NgSharedEntry *entry;
	bool		found;

	if (de->key.queryid == 0)
		return true;			/* padding of a dump that shrank */
	if (!ng_entry_reserve())
		return false;
	if (qtext != NULL)
	{
		tdp = ng_qtext_store(qtext, de->text_len);
		if (!DsaPointerIsValid(tdp))
			ng_note_loss(NG_LOSS_TEXT_MEMORY, 1);
	}
	(void) ng_entry_prepare(part);

	LWLockAcquire(part->lock, LW_EXCLUSIVE);
	dp = ng_entry_insert(part, &de->key, hash, tdp, de->text_len, de->encoding,
						 &found);
	if (DsaPointerIsValid(dp))
	{
		entry = dsa_get_address(ng_area, dp);
		if (found)
			ng_counters_merge(&entry->counters, &de->counters);
		else
		{
			entry->counters = de->counters;
			/* generations of the previous run mean nothing in this one */
			entry->counters.changed_generation = 1;
			entry->usage = de->usage;
			entry->stats_since = de->stats_since;
			entry->minmax_stats_since = de->minmax_stats_since;
			if (DsaPointerIsValid(entry->qtext))
				entry->text_stored_at = de->text_stored_at;
			else
				entry->text_dropped = (qtext != NULL);
			tdp = InvalidDsaPointer;	/* the entry owns it */
		}
	}
	LWLockRelease(part->lock);
	ng_entry_prepared_release();

	if (!DsaPointerIsValid(dp) || found)
		ng_entry_unreserve();
	if (DsaPointerIsValid(tdp))
		ng_qtext_free(tdp, de->text_len);
	return DsaPointerIsValid(dp);
}

/*
 * persist_merge_stats
 *		Add the saved info figures to those counted since the start (backends
 *		may have evicted, dropped or refused before the keeper got here), so
 *		that every loss stays counted.  The reset time is the saved one: the
 *		figures now count from it.
 */
static void
persist_merge_stats(const NgSharedStats *saved, int64 refused)
{
	NgSharedStats *st = &ng_shared->stats;

	SpinLockAcquire(&ng_shared->mutex);
	st->dealloc += saved->dealloc;
	st->evicted_calls += saved->evicted_calls;
	st->evicted_exec_time += saved->evicted_exec_time;
	st->last_eviction_time = Max(st->last_eviction_time,
								 saved->last_eviction_time);
	st->texts_dropped += saved->texts_dropped;
	st->entries_refused += saved->entries_refused + refused;
	st->counts_discarded += saved->counts_discarded;
	st->unadmitted_calls += saved->unadmitted_calls;
	st->lock_misses += saved->lock_misses;
	st->stats_reset = saved->stats_reset;
	SpinLockRelease(&ng_shared->mutex);
}

static void
persist_reject(const char *why)
{
	ereport(LOG,
			(errmsg("pg_stat_statements_ng: ignoring saved statistics in \"%s\": %s",
					NG_DUMP_FILE, why)));
}

/*
 * persist_max_file_size
 *		The largest file the current settings could have written: a row per
 *		entry (at most max) and per slot (a dump taken while backends still
 *		held unbound slots), and texts of at most query_text_memory bytes.
 */
static uint64
persist_max_file_size(void)
{
	uint64		rows = (uint64) ng_max +
		(uint64) ng_store_num_slot_procs() * ng_slots_per_backend;

	return sizeof(NgDumpHeader) + rows * sizeof(NgDumpEntry) +
		(uint64) ng_query_text_memory_kb * 1024 + sizeof(pg_crc32c);
}

/*
 * persist_validate
 *		First pass over the file: the header, every entry, and the CRC of the
 *		whole, which decides when it fails.  Returns NULL if the file is
 *		sound, else why not; *hdr gets the header.
 */
static const char *
persist_validate(DumpReader *r, NgDumpHeader *hdr)
{
	const char *why = NULL;
	pg_crc32c	stored_crc;

	if (!dump_read(r, hdr, sizeof(*hdr), NULL))
		why = "truncated header";
	else if (hdr->magic != NG_DUMP_MAGIC)
		why = "not a pg_stat_statements_ng file";
	else if (hdr->format != NG_DUMP_FORMAT)
		why = psprintf("format version %u, expected %u", hdr->format, NG_DUMP_FORMAT);
	else if (hdr->pg_major != PG_VERSION_NUM / 100)
		why = psprintf("written by PostgreSQL major %u, this is %u",
					   hdr->pg_major, PG_VERSION_NUM / 100);
	else if (hdr->counters_size != sizeof(NgCounters))
		why = "counters of another layout";
	else if (hdr->nentries > r->left / sizeof(NgDumpEntry))
		why = "entry count exceeds the file";

	for (uint64 i = 0; why == NULL && i < hdr->nentries; i++)
	{
		NgDumpEntry de;

		why = persist_check_entry(r, &de, NULL);
	}
	if (why == NULL && r->left != 0)
		why = "trailing bytes after the entries";

	/* the checksum goes first: read what is left of the body into it */
	if (r->io_error || !dump_read(r, NULL, r->left, NULL) ||
		!dump_read_trailer(r, &stored_crc))
		return "could not read the file";
	FIN_CRC32C(r->crc);
	if (!EQ_CRC32C(r->crc, stored_crc))
		return "checksum mismatch";
	return why;
}

/*
 * ng_persist_load_file
 *		Validate the dump file as a whole and, if it is sound, restore it.
 *		Removes the file in every case.  Returns the number of entries
 *		restored, or -1 if the file was rejected or could not be read.
 *		Caller: the keeper at startup.
 *
 *		Nothing here blocks but on reading a regular file: the file is opened
 *		without waiting (a FIFO would wait for a writer) and refused if it is
 *		not a regular file.  Memory is bounded whatever the file: a file
 *		larger than the settings could have written is refused by its size;
 *		the others are read in pieces, twice: once to check everything, once
 *		to restore.
 */
int64
ng_persist_load_file(void)
{
	int			fd;
	struct stat st;
	DumpReader	r;
	NgDumpHeader hdr;
	const char *why = NULL;
	int64		restored = -1;
	int64		refused = 0;
	uint64		max_size = persist_max_file_size();

	fd = OpenTransientFile(NG_DUMP_FILE, O_RDONLY | O_NONBLOCK | PG_BINARY);
	if (fd < 0)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("pg_stat_statements_ng: could not open file \"%s\": %m",
							NG_DUMP_FILE)));
		unlink(NG_DUMP_FILE);
		return -1;
	}
	unlink(NG_DUMP_FILE);		/* read through fd from here on */
	r.fd = fd;
	r.buf = NULL;
	if (fstat(fd, &st) != 0)
		why = "could not stat the file";
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if ((size_t) st.st_size < sizeof(NgDumpHeader) + sizeof(pg_crc32c))
		why = "file too short";
	else if ((uint64) st.st_size > max_size)
		why = psprintf("file too large (" UINT64_FORMAT " bytes, at most "
					   UINT64_FORMAT " bytes for these settings)",
					   (uint64) st.st_size, max_size);
	if (why != NULL)
		goto out;

	r.buf = palloc(NG_DUMP_READ_CHUNK);
	if (!dump_reader_start(&r, (size_t) st.st_size))
		why = "could not read the file";
	else
		why = persist_validate(&r, &hdr);
	if (why != NULL)
		goto out;

	/* the second pass restores; it checks each entry again as it reads */
	if (!dump_reader_start(&r, (size_t) st.st_size) ||
		!dump_read(&r, &hdr, sizeof(hdr), NULL))
	{
		why = "could not read the file";
		goto out;
	}
	restored = 0;
	for (uint64 i = 0; i < hdr.nentries; i++)
	{
		NgDumpEntry de;
		char	   *qtext;

		why = persist_check_entry(&r, &de, &qtext);
		if (why != NULL)
		{
			why = psprintf("%s, after " INT64_FORMAT " statements were restored",
						   r.io_error ? "could not read the file" : why,
						   restored);
			break;
		}
		if (persist_restore_entry(&de, qtext))
			restored++;
		else
			refused++;
		if (qtext)
			pfree(qtext);
	}
	persist_merge_stats(&hdr.stats, refused);
	if (refused > 0)
		ng_note_loss(NG_LOSS_TABLE_FULL, 0);

out:
	CloseTransientFile(fd);
	if (why != NULL)
		persist_reject(why);
	if (r.buf)
		pfree(r.buf);
	return why != NULL ? -1 : restored;
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

	if (ng_shared->restore_pending)
	{
		int64		n;

		ng_shared->restore_pending = false;
		if (NG_DEBUG_FAULT(NG_FAULT_STALL_RESTORE))
			ng_debug_stall();
		n = ng_persist_load_file();
		if (n >= 0)
			ereport(LOG,
					(errmsg("pg_stat_statements_ng: restored statistics of " INT64_FORMAT " statements",
							n)));
	}
	else
		unlink(NG_DUMP_FILE);	/* a file left by a keeper that was killed */

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
		persist_dump();
	}
	proc_exit(0);
}

/*
 * ng_persist_register_keeper
 *		_PG_init part: start the keeper with the postmaster.
 */
void
ng_persist_register_keeper(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 5;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, NG_NAME);
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "pg_stat_statements_ng_keeper_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "pg_stat_statements_ng keeper");
	snprintf(worker.bgw_type, BGW_MAXLEN, "pg_stat_statements_ng keeper");
	RegisterBackgroundWorker(&worker);
}
