/*-------------------------------------------------------------------------
 *
 * persist_contrib.c
 *		contrib's saved statistics: imported at the first start of the
 *		drop-in, and written in contrib's format beside our own file at
 *		each clean shutdown, so that a switch in either direction keeps the
 *		statistics and never brings back older ones.
 *
 * Why a file of its own: the format is contrib's, one layout per major,
 * and nothing in it is trusted; its checks belong together, apart from
 * those of our own format (persist_read.c).
 *
 * contrib's file (pg_stat/pg_stat_statements.stat), as contrib 15 to 18
 * writes it at a clean shutdown: a magic number and the server major (two
 * uint32), the entry count (int32); each entry as contrib's entry struct
 * lies in memory: its key (user, database, queryid, toplevel: 24 bytes),
 * its counters (8-byte integers and doubles only, so no padding, in an
 * order of each major's: the word tables below), the text's offset,
 * length and encoding, from 17 on stats_since and minmax_stats_since, and
 * a spinlock, padded to 8 bytes; then the entry's text and a zero byte.
 * After the entries: dealloc and stats_reset.  contrib keeps texts in
 * pg_stat_tmp/pgss_query_texts.stat while it runs and puts them into this
 * file only at shutdown; at start it reads the file and removes it.
 *
 * Which file the keeper restores, when contrib's library is not loaded in
 * this server (with it, the file is contrib's, and we leave it alone).  At
 * a clean shutdown the keeper writes contrib's file first, then ours,
 * whose header records the size and CRC-32C of contrib's (or none, if it
 * could not be written: then contrib's file is removed).  So, at start:
 * - contrib's file is the one ours names: ours is restored, both removed;
 * - contrib's file is another (contrib wrote it since, or it predates the
 *   drop-in): it is imported, and ours, older, removed;
 * - no contrib file, but ours names one: contrib read it since (it ran in
 *   between), so ours is older than what contrib counted: removed, the
 *   statistics start empty;
 * - no contrib file, and ours names none: ours is restored.
 *
 * The import trusts nothing: the file is read whole (it must be a regular
 * file, no larger than max entries and twice query_text_memory of text
 * allow), checked as a whole (every length within the file, the text's
 * zero byte, a valid encoding, non-negative calls) before anything is
 * restored, and a text is stored only through our normalizer, which
 * replaces every constant the SQL scanner finds; a text whose literals
 * depend on standard_conforming_strings (it holds \') or that is not valid
 * in its encoding is dropped, its counts kept.
 *
 * Locking: none of ours is held by the callers; restoring goes through
 * persist_read.c (partition locks, exclusive, one at a time), writing
 * reads rows through reader.c.  Nothing here raises an ERROR: a failure
 * is one LOG line and costs the saved statistics, never the start or the
 * shutdown.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "mb/pg_wchar.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "storage/spin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "counters.h"
#include "entry_hist.h"
#include "evict.h"
#include "guc.h"
#include "persist_contrib.h"
#include "persist_internal.h"
#include "qtext.h"
#include "reader.h"
#include "slots/slots.h"
#include "store.h"

/*
 * contrib_check_entry
 *		Decode the entry at *pos (the body ends at end) into *e with its
 *		text, and check it; advances *pos past its text.  Returns NULL if
 *		it is fine, else why not.
 */
static const char *
contrib_check_entry(const ContribLayout *l, const char *buf, size_t end,
					size_t *pos, ContribEntry *e)
{
	size_t		left;

	if (end - *pos < l->entry_size)
		return "truncated entry";
	ng_contrib_decode(l, buf + *pos, e);
	/* a bool from the file: read as the byte it is before it is used */
	if (*(const uint8 *) (buf + *pos + offsetof(ContribKey, toplevel)) > 1)
		return "invalid key";
	*pos += l->entry_size;
	left = end - *pos;
	if (e->tail.query_len < 0 || (size_t) e->tail.query_len >= left)
		return "invalid text length";
	e->query = buf + *pos;
	if (e->query[e->tail.query_len] != '\0' ||
		memchr(e->query, '\0', e->tail.query_len) != NULL)
		return "invalid text";
	if (!PG_VALID_BE_ENCODING(e->tail.encoding))
		return "invalid encoding";
	if (e->counters.calls[NG_PLAN] < 0 || e->counters.calls[NG_EXEC] < 0)
		return "invalid counters";
	*pos += e->tail.query_len + 1;
	return NULL;
}

/*
 * contrib_check_file
 *		The whole file: header, every entry, the figures at the end, and
 *		nothing after them.  Returns NULL if sound, else why not.
 */
static const char *
contrib_check_file(const ContribLayout *l, const char *buf, size_t size,
				   int32 *count)
{
	uint32		head[2];
	size_t		end = size - sizeof(ContribGlobal);
	size_t		pos = NG_CONTRIB_HEAD_SIZE;

	if (size < NG_CONTRIB_HEAD_SIZE + sizeof(ContribGlobal))
		return "file too short";
	memcpy(head, buf, sizeof(head));
	memcpy(count, buf + 2 * sizeof(uint32), sizeof(int32));
	if (head[0] != NG_CONTRIB_MAGIC)
		return "not a file of contrib's pg_stat_statements";
	if (head[1] != NG_CONTRIB_MAJOR)
		return psprintf("written by PostgreSQL major %u, this is %u",
						head[1] / 100, NG_CONTRIB_MAJOR / 100);
	if (*count < 0 || (size_t) *count > (end - pos) / l->entry_size)
		return "entry count exceeds the file";
	for (int32 i = 0; i < *count; i++)
	{
		ContribEntry e;
		const char *why = contrib_check_entry(l, buf, end, &pos, &e);

		if (why != NULL)
			return why;
	}
	if (pos != end)
		return "trailing bytes after the entries";
	return NULL;
}

/*
 * contrib_text
 *		The text to store for an imported entry, or NULL: through our
 *		normalizer, as a utility statement's (every constant the scanner
 *		finds replaced).  NULL for a text not valid in its encoding, or
 *		holding \' (a quote ends a string or not depending on
 *		standard_conforming_strings, unknown here, so its literals cannot
 *		be found with certainty).
 */
static char *
contrib_text(const ContribEntry *e, int *len)
{
	NgTextSource src;
	char	   *qtext;

	if (e->tail.query_len == 0 || strstr(e->query, "\\'") != NULL ||
		!pg_verify_mbstr(e->tail.encoding, e->query, e->tail.query_len, true))
		return NULL;
	memset(&src, 0, sizeof(src));
	src.query = e->query;
	src.location = -1;
	src.len = e->tail.query_len;
	src.utility = true;
	qtext = ng_qtext_prepare(&src, len);
	if (qtext != NULL && *len == 0)
	{
		pfree(qtext);
		qtext = NULL;
	}
	return qtext;
}

/*
 * contrib_import_entry
 *		Put one checked entry of contrib's into the table.  Returns true if
 *		it was.
 */
static bool
contrib_import_entry(const ContribEntry *e, TimestampTz since, TimestampTz now)
{
	NgDumpEntry de;
	uint64		hist[1] = {0};
	char	   *qtext;
	bool		ok;

	memset(&de, 0, sizeof(de));
	de.key.userid = e->key.userid;
	de.key.dbid = e->key.dbid;
	de.key.queryid = e->key.queryid;
	de.key.toplevel = e->key.toplevel;
	de.counters = e->counters;
	/* contrib marks "no sample since a min/max reset" by min = max = 0 */
	for (int k = 0; k < NG_NUM_KINDS; k++)
		if (de.counters.calls[k] > 0 && de.counters.min_time[k] == 0 &&
			de.counters.max_time[k] == 0)
			de.counters.min_time[k] = de.counters.max_time[k] = -1;
	de.counters.changed_generation =
		pg_atomic_read_u64(&ng_shared->change_generation);
	de.stats_since = e->tail.stats_since > 0 ? e->tail.stats_since : since;
	de.minmax_stats_since = e->tail.minmax_stats_since > 0 ?
		e->tail.minmax_stats_since : since;
	de.text_stored_at = now;
	de.usage = ng_evict_usage_from_contrib(e->usage);
	de.encoding = e->tail.encoding;
	qtext = contrib_text(e, &de.text_len);
	if (qtext == NULL)
		de.text_len = -1;
	ok = ng_persist_restore_entry(&de, hist, qtext);
	if (!ok && !ng_persist_restore_voided())
		ng_evict_count_removed(de.counters.calls[NG_EXEC],
							   de.counters.total_time[NG_EXEC]);
	if (qtext != NULL)
		pfree(qtext);
	return ok;
}

/*
 * contrib_import
 *		Restore the entries of contrib's file (buf, checked whole by
 *		contrib_check_file) and its figures: dealloc adds to ours,
 *		stats_reset is contrib's.  stats_since of an entry is contrib's
 *		from 17 on; 15 and 16 keep none, so it is the file's stats_reset,
 *		the earliest it can be.  Returns the entries restored.
 */
static int64
contrib_import(const ContribLayout *l, const char *buf, size_t size,
			   int32 count)
{
	ContribGlobal global;
	NgSharedStats saved;
	TimestampTz now = GetCurrentTimestamp();
	size_t		end = size - sizeof(ContribGlobal);
	size_t		pos = NG_CONTRIB_HEAD_SIZE;
	int64		restored = 0;

	memcpy(&global, buf + end, sizeof(global));
	ng_persist_restore_begin();
	for (int32 i = 0; i < count; i++)
	{
		ContribEntry e;

		if (contrib_check_entry(l, buf, end, &pos, &e) != NULL)
			break;				/* cannot happen: checked before */
		/* contrib's own loader skips entries never run nor planned */
		if (e.counters.calls[NG_PLAN] == 0 && e.counters.calls[NG_EXEC] == 0)
			continue;
		if (contrib_import_entry(&e, global.stats_reset > 0 ?
								 global.stats_reset : now, now))
			restored++;
		if (ng_persist_restore_voided())
			break;
	}
	memset(&saved, 0, sizeof(saved));
	saved.dealloc = Max(global.dealloc, 0);
	saved.stats_reset = global.stats_reset > 0 ? global.stats_reset : now;

	if (!ng_persist_restore_voided())
		ng_persist_merge_stats(&saved);
	if (ng_persist_restore_voided())
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: a reset during the restore discarded the rest of the saved statistics")));
	ng_hist_spares_free();
	return restored;
}

/*
 * contrib_read_file
 *		contrib's file, whole, into *buf (palloc'd; NULL if there is no
 *		file) and *size.  Opened without blocking; refused unless a regular
 *		file no larger than max entries and twice query_text_memory of
 *		text allow.  Returns NULL, or why the file cannot be used.
 */
static const char *
contrib_read_file(const ContribLayout *l, char **buf, size_t *size)
{
	struct stat st;
	uint64		max_size = NG_CONTRIB_HEAD_SIZE + sizeof(ContribGlobal) +
		(uint64) ng_max * (l->entry_size + 1) +
		(uint64) ng_query_text_memory_kb * 1024 * 2;
	const char *why = NULL;
	size_t		done = 0;
	int			fd;

	*buf = NULL;
	fd = OpenTransientFile(NG_CONTRIB_FILE, O_RDONLY | O_NONBLOCK | PG_BINARY);
	if (fd < 0)
		return errno == ENOENT ? NULL : "could not open the file";
	if (fstat(fd, &st) != 0)
		why = "could not stat the file";
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if ((uint64) st.st_size > max_size)
		why = psprintf("file too large (" UINT64_FORMAT " bytes, at most "
					   UINT64_FORMAT " bytes for these settings)",
					   (uint64) st.st_size, max_size);
	else if ((*buf = palloc_extended(st.st_size + 1, MCXT_ALLOC_HUGE |
									 MCXT_ALLOC_NO_OOM)) == NULL)
		why = "out of memory";
	while (why == NULL && done < (size_t) st.st_size)
	{
		ssize_t		n = read(fd, *buf + done, st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			why = "could not read the file";
		else
			done += n;
	}
	CloseTransientFile(fd);
	*size = done;
	if (why == NULL && *buf == NULL)
		*buf = palloc0(1);		/* an empty file: no longer "none" */
	return why;
}

/*
 * contrib_peek_ours
 *		The header of our own file, if there is one that has our magic
 *		number and format (its CRC is checked when it is restored).
 */
static bool
contrib_peek_ours(NgDumpHeader *hdr)
{
	int			fd = OpenTransientFile(NG_DUMP_FILE, O_RDONLY | O_NONBLOCK | PG_BINARY);
	struct stat st;
	bool		ok;

	if (fd < 0)
		return false;
	ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		read(fd, hdr, sizeof(*hdr)) == sizeof(*hdr) &&
		hdr->magic == NG_DUMP_MAGIC && hdr->format == NG_DUMP_FORMAT;
	CloseTransientFile(fd);
	return ok;
}

static pg_crc32c
contrib_crc(const char *buf, size_t size)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, buf, size);
	FIN_CRC32C(crc);
	return crc;
}

/* restore our own file, and say so */
static void
restore_ours(void)
{
	int64		n = ng_persist_load_file();

	if (n >= 0)
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: restored statistics of " INT64_FORMAT " statements",
						n)));
}

/* our file is older than what contrib counted: remove it, and say so */
static void
discard_ours(const char *why)
{
	unlink(NG_DUMP_FILE);
	ereport(LOG,
			(errmsg("pg_stat_statements_ng: ignoring saved statistics in \"%s\": %s",
					NG_DUMP_FILE, why)));
}

/*
 * ng_persist_restore_saved
 *		The keeper at start, a restore being due: restore our file or
 *		import contrib's, as the head of this file says, and remove both.
 */
void
ng_persist_restore_saved(void)
{
	ContribLayout l;
	NgDumpHeader hdr;
	bool		have_ours;
	char	   *buf;
	size_t		size = 0;
	const char *why;
	int32		count = 0;

	if (!ng_dropin_preloaded() || !ng_contrib_layout(&l))
	{
		restore_ours();
		return;
	}
	have_ours = contrib_peek_ours(&hdr);
	why = contrib_read_file(&l, &buf, &size);
	if (buf == NULL && why == NULL)
	{
		if (have_ours && hdr.contrib_size != 0)
			discard_ours("contrib's pg_stat_statements has read the statistics saved with them since");
		else
			restore_ours();
		return;
	}
	unlink(NG_CONTRIB_FILE);
	if (why == NULL && have_ours && hdr.contrib_size == size &&
		hdr.contrib_crc == contrib_crc(buf, size))
	{
		pfree(buf);
		restore_ours();
		return;
	}
	if (have_ours)
		discard_ours("contrib's pg_stat_statements saved statistics since");
	else if (access(NG_DUMP_FILE, F_OK) == 0)
		discard_ours("its header cannot be read; contrib's saved statistics are used instead");
	if (why == NULL)
		why = contrib_check_file(&l, buf, size, &count);
	if (why != NULL)
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: ignoring contrib's saved statistics in \"%s\": %s",
						NG_CONTRIB_FILE, why)));
	else
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: imported statistics of " INT64_FORMAT " statements from contrib's \"%s\"",
						contrib_import(&l, buf, size, count), NG_CONTRIB_FILE)));
	if (buf != NULL)
		pfree(buf);
}

/*
 * ng_contrib_discard_file
 *		The keeper at start, nothing to restore (save is off, or after a
 *		crash): contrib's file, if it is ours to manage, is removed, so
 *		that contrib never starts with statistics older than ours.
 */
void
ng_contrib_discard_file(void)
{
	if (ng_dropin_preloaded())
		unlink(NG_CONTRIB_FILE);
}
