/*-------------------------------------------------------------------------
 *
 * persist_contrib_write.c
 *		Every row written in contrib's format to contrib's file, at a clean
 *		shutdown of the drop-in, so that contrib, if it is the next to
 *		start, begins with what the drop-in counted (persist_contrib.c
 *		says which file the drop-in restores).
 *
 * Why a file of its own: the writer of a format that is not ours, with
 * its own conversions (usage, "no min/max sample"), beside its reader.
 *
 * What contrib gets: every row that has calls or plans, with its counters
 * (those contrib has; failures and histograms are ours only), its text
 * (empty if the row has none), stats_since and minmax_stats_since (17
 * on), usage as a double; a min/max reset with no sample since is written
 * as contrib marks it, min = max = 0.  dealloc is the drop-in's (entries
 * evicted and executions the admission filter refused), stats_reset ours.
 *
 * Locking: rows are read through reader.c (one partition at a time, its
 * lock shared); nothing else.  A failure logs one line, removes contrib's
 * file and leaves none: contrib then starts empty.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "mb/pg_wchar.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/hsearch.h"

#include "guc.h"
#include "persist_contrib.h"
#include "reader.h"
#include "slots/slots.h"

#define CONTRIB_TMP_FILE	NG_CONTRIB_FILE ".tmp"

typedef struct ContribWriter
{
	FILE	   *file;
	ContribLayout layout;
	pg_crc32c	crc;
	uint64		size;
	bool		failed;
} ContribWriter;

static void
contrib_write(ContribWriter *w, const void *data, size_t len)
{
	if (w->failed || len == 0)
		return;
	COMP_CRC32C(w->crc, data, len);
	w->size += len;
	if (fwrite(data, 1, len, w->file) != len)
		w->failed = true;
}

/* does contrib keep this row?  (its loader skips one never run nor planned) */
static bool
contrib_row_kept(const NgRow *row)
{
	return row->counters.calls[NG_PLAN] > 0 || row->counters.calls[NG_EXEC] > 0;
}

/*
 * contrib_write_entry
 *		One entry: the row's (NULL: an empty entry that contrib's loader
 *		skips, padding for a row gone since the count).
 */
static void
contrib_write_entry(ContribWriter *w, const NgRow *row)
{
	ContribEntry e;
	char		out[sizeof(ContribKey) + sizeof(NgCounters) + sizeof(ContribTail17)];
	static const char zero = '\0';
	const char *qtext = "";
	int			len = 0;

	Assert(w->layout.entry_size <= sizeof(out));
	memset(&e, 0, sizeof(e));
	e.tail.encoding = PG_SQL_ASCII;
	if (row != NULL)
	{
		e.key.userid = row->key.userid;
		e.key.dbid = row->key.dbid;
		e.key.queryid = row->key.queryid;
		e.key.toplevel = row->key.toplevel;
		e.counters = row->counters;
		for (int k = 0; k < NG_NUM_KINDS; k++)
			if (!ng_counters_has_minmax(&e.counters, k))
				e.counters.min_time[k] = e.counters.max_time[k] = 0;
		e.usage = row->usage;
		e.tail.stats_since = row->stats_since;
		e.tail.minmax_stats_since = row->minmax_stats_since;
		if (PG_VALID_BE_ENCODING(row->encoding))
			e.tail.encoding = row->encoding;
		if (row->qtext != NULL)
		{
			qtext = row->qtext;
			len = row->qtext_len;
		}
	}
	e.tail.query_len = len;
	ng_contrib_encode(&w->layout, &e, out);
	contrib_write(w, out, w->layout.entry_size);
	contrib_write(w, qtext, len);
	contrib_write(w, &zero, 1);
}

/*
 * contrib_write_rows
 *		count is the number of rows kept when they were counted: write
 *		that many entries exactly (rows that appeared since are left out,
 *		rows gone since are padded with empty entries).  With count NULL,
 *		only count them into *counted.
 */
static void
contrib_write_rows(ContribWriter *w, const int32 *count, int32 *counted)
{
	int32		n = 0;

	for (int p = 0; p < NG_NUM_PARTITIONS && !w->failed; p++)
	{
		HTAB	   *rows = ng_read_rows_create();
		HASH_SEQ_STATUS seq;
		NgRow	   *row;

		ng_read_partition(p, rows, count != NULL);
		hash_seq_init(&seq, rows);
		while ((row = hash_seq_search(&seq)) != NULL)
		{
			if (!contrib_row_kept(row) || n == PG_INT32_MAX ||
				(count != NULL && n == *count))
				continue;
			if (count != NULL)
				contrib_write_entry(w, row);
			n++;
		}
		hash_destroy(rows);
	}
	for (; count != NULL && n < *count && !w->failed; n++)
		contrib_write_entry(w, NULL);
	if (counted != NULL)
		*counted = n;
}

/*
 * ng_contrib_dump
 *		The keeper at a clean shutdown, with contrib's names ours: write
 *		every row to contrib's file, in the format of the running major,
 *		via a temporary file that is fsynced and renamed.  Sets *size and
 *		*crc to the file's (0 if none was written) and returns whether one
 *		was; when none is, contrib's file is removed.
 */
bool
ng_contrib_dump(uint64 *size, uint32 *crc)
{
	ContribWriter w;
	NgSharedStats stats;
	uint32		head[2] = {NG_CONTRIB_MAGIC, NG_CONTRIB_MAJOR};
	ContribGlobal global;
	int32		count;

	*size = 0;
	*crc = 0;
	if (!ng_dropin_preloaded())
		return false;
	memset(&w, 0, sizeof(w));
	/* anything left there (a FIFO would block the open) goes first */
	unlink(CONTRIB_TMP_FILE);
	if (!ng_contrib_layout(&w.layout) ||
		(w.file = AllocateFile(CONTRIB_TMP_FILE, PG_BINARY_W)) == NULL)
	{
		unlink(NG_CONTRIB_FILE);
		return false;
	}
	INIT_CRC32C(w.crc);
	ng_stats_read(&stats);
	contrib_write_rows(&w, NULL, &count);
	contrib_write(&w, head, sizeof(head));
	contrib_write(&w, &count, sizeof(count));
	contrib_write_rows(&w, &count, NULL);
	global.		dealloc = stats.dealloc + stats.admissions_refused;
	global.		stats_reset = stats.stats_reset;

	contrib_write(&w, &global, sizeof(global));
	if (FreeFile(w.file) != 0)
		w.failed = true;
	if (w.failed || durable_rename(CONTRIB_TMP_FILE, NG_CONTRIB_FILE, LOG) != 0)
	{
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: could not write contrib's file \"%s\"; contrib's pg_stat_statements will start empty",
						NG_CONTRIB_FILE)));
		unlink(CONTRIB_TMP_FILE);
		unlink(NG_CONTRIB_FILE);
		return false;
	}
	FIN_CRC32C(w.crc);
	*size = w.size;
	*crc = w.crc;
	return true;
}
