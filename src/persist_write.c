/*-------------------------------------------------------------------------
 *
 * persist_write.c
 *		The dump: every row (shared entries plus slots) written to the
 *		file at shutdown, by the keeper (persist.c).
 *
 * Why a file of its own: the writer of the format (persist_internal.h);
 * its reader, which trusts nothing it reads, is persist_read.c.
 *
 * With the drop-in, contrib's file is written first, in contrib's format
 * (persist_contrib.c), and this file's header records its size and CRC.
 *
 * Locking: rows are read through reader.c, one partition at a time under
 * that partition's lock in shared mode; nothing else is locked.  A failure
 * is logged in one line and leaves no file; nothing raises an ERROR.
 * Nothing waits on what is found at the file's names: anything but a
 * regular file there is removed (and logged) before the temporary file is
 * created, exclusively.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "mb/pg_wchar.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "counters.h"
#include "guc.h"
#include "persist_contrib.h"
#include "persist_internal.h"
#include "plans.h"
#include "reader.h"
#include "shmem.h"
#include "slots/slots.h"

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
	if (NG_DEBUG_FAULT(NG_FAULT_DUMP_FULL))
	{
		errno = ENOSPC;			/* as a full disk would */
		w->failed = true;
		return;
	}
	COMP_CRC32C(w->crc, data, len);
	if (fwrite(data, 1, len, w->file) != len)
		w->failed = true;
}

/*
 * dump_count_rows
 *		How many rows there are now (they are counted before they are
 *		written, for the header).
 */
static uint64
dump_count_rows(void)
{
	uint64		nentries = 0;

	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		HTAB	   *rows = ng_read_rows_create();

		ng_read_partition(p, rows, false);
		nentries += hash_get_num_entries(rows);
		hash_destroy(rows);
	}
	return nentries;
}

/*
 * dump_write_rows
 *		Write exactly count entries: every row, up to count of them.
 */
static void
dump_write_rows(DumpWriter *w, uint64 count)
{
	uint64		nentries = 0;

	for (int p = 0; p < NG_NUM_PARTITIONS && !w->failed; p++)
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
			if (nentries == count)
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
			de.hist_mask = row->hist_mask;
			dump_write(w, &de, sizeof(de));
			dump_write(w, row->hist, ng_hist_groups_size(row->hist_mask));
			if (row->qtext)
				dump_write(w, row->qtext, row->qtext_len);
			nentries++;
		}
		hash_destroy(rows);
	}

	/* pad with empty rows if some disappeared since the count */
	while (nentries < count && !w->failed)
	{
		NgDumpEntry de;

		memset(&de, 0, sizeof(de));
		de.text_len = -1;
		de.encoding = GetDatabaseEncoding();
		dump_write(w, &de, sizeof(de));
		nentries++;
	}
}

/*
 * dump_write_errors
 *		Write the failures by SQLSTATE (format 6): the lost figure and the
 *		blocks of every partition, counted first; blocks made since the
 *		count are left out, and the count is padded with empty ones if some
 *		went meanwhile.  Each partition's blocks are copied under its lock,
 *		shared (ng_entry_errors_copy).
 */
static void
dump_write_errors(DumpWriter *w)
{
	NgDumpErrorsHead head;
	int			room = 64;
	NgEntryErrors *buf = palloc(sizeof(NgEntryErrors) * room);
	uint64		written = 0;

	head.sqlstates_lost = (int64) pg_atomic_read_u64(&ng_shared->sqlstates_lost);
	head.nerrors = 0;
	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
		head.nerrors += ng_entry_errors_copy(p, NULL, 0);
	dump_write(w, &head, sizeof(head));
	for (int p = 0; p < NG_NUM_PARTITIONS && !w->failed; p++)
	{
		int			n = ng_entry_errors_copy(p, buf, room);

		if (n > room)
		{
			room = n * 2;
			buf = repalloc(buf, sizeof(NgEntryErrors) * room);
			p--;				/* copy this partition again */
			continue;
		}
		for (int i = 0; i < n && written < head.nerrors; i++, written++)
		{
			NgDumpErrors de;

			memset(&de, 0, sizeof(de));
			de.key = buf[i].key;
			memcpy(de.counts, buf[i].counts, sizeof(de.counts));
			dump_write(w, &de, sizeof(de));
		}
	}
	for (; written < head.nerrors && !w->failed; written++)
	{
		NgDumpErrors de;

		memset(&de, 0, sizeof(de));
		dump_write(w, &de, sizeof(de));
	}
	pfree(buf);
}

/*
 * dump_write_plans
 *		Write the plan statistics (format 7): the plan info figures, then
 *		every row of pg_stat_statements_ng_plans, read as the view reads
 *		them (plans_funcs.c: one partition lock at a time, shared), all
 *		read before the head is written, which counts them.
 */
static void
dump_write_plans(DumpWriter *w)
{
	NgDumpPlansHead head;
	NgPlanDumpRow *rows[NG_NUM_PARTITIONS];
	int			nrows[NG_NUM_PARTITIONS];

	memset(&head, 0, sizeof(head));
	head.plan_texts_dropped =
		(int64) pg_atomic_read_u64(&ng_shared->plan_texts_dropped);
	head.plan_calls_lost = (int64) pg_atomic_read_u64(&ng_shared->plan_calls_lost);
	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
	{
		nrows[p] = ng_plans_dump_rows(p, &rows[p]);
		head.nplans += nrows[p];
	}
	dump_write(w, &head, sizeof(head));
	for (int p = 0; p < NG_NUM_PARTITIONS; p++)
		for (int i = 0; i < nrows[p]; i++)
		{
			const NgPlanDumpRow *row = &rows[p][i];
			NgDumpPlan	dp;

			memset(&dp, 0, sizeof(dp));
			dp.key.userid = row->key.userid;
			dp.key.dbid = row->key.dbid;
			dp.key.queryid = row->key.queryid;
			dp.key.toplevel = row->key.toplevel;
			dp.planid = row->other ? 0 : row->rec.planid;
			dp.calls = row->rec.calls;
			dp.total_time = row->rec.total_time;
			dp.min_time = row->rec.min_time;
			dp.max_time = row->rec.max_time;
			dp.rows = row->rec.rows;
			dp.first_seen = row->rec.first_seen;
			dp.last_seen = row->rec.last_seen;
			dp.text_len = row->other ? -1 : row->text_len;
			dp.encoding = row->encoding;
			dump_write(w, &dp, sizeof(dp));
			if (dp.text_len > 0)
				dump_write(w, row->text, dp.text_len);
		}
}

/*
 * dump_clear_path
 *		Make sure nothing but a regular file (or nothing) is at path: a
 *		FIFO, a socket, a device, a symbolic link or an empty directory is
 *		removed, and logged.  Returns false, having logged why, if
 *		something other than a regular file is still there.
 */
static bool
dump_clear_path(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0 || S_ISREG(st.st_mode))
		return true;
	if ((S_ISDIR(st.st_mode) ? rmdir(path) : unlink(path)) != 0)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("pg_stat_statements_ng: could not save statistics: \"%s\" is not a regular file and could not be removed: %m",
						path)));
		return false;
	}
	ereport(LOG,
			(errmsg("pg_stat_statements_ng: removed \"%s\", which was not a regular file",
					path)));
	return true;
}

/*
 * ng_persist_dump
 *		Write every row (shared entries plus slots) to the dump file, via a
 *		temporary file that is fsynced and renamed.  Logs one line and leaves
 *		no file on failure.
 */
void
ng_persist_dump(void)
{
	DumpWriter	w;
	NgDumpHeader hdr;
	MemoryContext cxt;
	MemoryContext oldcxt;
	int			save_errno;

	cxt = AllocSetContextCreate(TopMemoryContext, "pg_stat_statements_ng dump",
								ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);

	/*
	 * The temporary file is created anew, exclusively ("x": O_CREAT |
	 * O_EXCL): whatever is found at its name is removed first, and a FIFO or
	 * a link put there meanwhile makes the open fail instead of blocking or
	 * writing elsewhere.  The stats file's name must not be a directory, or
	 * the rename fails.
	 */
	if (!dump_clear_path(NG_DUMP_TMP_FILE) || !dump_clear_path(NG_DUMP_FILE))
		goto done;
	(void) unlink(NG_DUMP_TMP_FILE);	/* a regular file a failed save left */
	w.file = AllocateFile(NG_DUMP_TMP_FILE, PG_BINARY_W "x");
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
	ng_stats_read(&hdr.stats);

	/* contrib's file first: this one names it (persist_contrib.c) */
	(void) ng_contrib_dump(&hdr.contrib_size, &hdr.contrib_crc);

	/*
	 * The CRC covers the header as finally written, so write the entries
	 * first into the CRC of a second pass: simpler to count them first.
	 */
	hdr.nentries = dump_count_rows();
	dump_write(&w, &hdr, sizeof(hdr));
	dump_write_rows(&w, hdr.nentries);
	dump_write_errors(&w);		/* format 6: after the entries */
	dump_write_plans(&w);		/* format 7: after the failures */

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
