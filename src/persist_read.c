/*-------------------------------------------------------------------------
 *
 * persist_read.c
 *		The restore: the dump file validated as a whole and, if sound,
 *		merged into the shared table, by the keeper at startup (persist.c).
 *
 * Why a file of its own: nothing read from the file is trusted, and the
 * checks that make that so belong together.  The loader opens the file
 * without blocking and refuses anything but a regular file, and a file
 * larger than the settings could have written; it then reads the file in
 * pieces, twice: the first pass checks the CRC and validates every entry,
 * bounding each length by the bytes that remain, the second restores.
 *
 * Locking: restoring inserts with the partition lock held exclusively, one
 * partition at a time; allocations are made before the lock is taken.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "mb/pg_wchar.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "alloc.h"
#include "counters.h"
#include "entry_hist.h"
#include "evict.h"
#include "guc.h"
#include "persist_internal.h"
#include "qtext.h"
#include "shmem.h"
#include "slots.h"
#include "store.h"

/*
 * persist_check_entry
 *		Read one entry's fixed part, its histogram groups (into hist, room
 *		for all of them) and its text, checking every field that could make
 *		it unsafe to use.  With qtext, the text is returned in
 *		*qtext (palloc'd, NUL-terminated; NULL if none); without, it is only
 *		checked.  Returns NULL if it is fine, else why not.
 */
static const char *
persist_check_entry(NgDumpReader * r, NgDumpEntry *de, uint64 *hist,
					char **qtext)
{
	bool		nul = false;
	char	   *tbuf = NULL;

	if (qtext != NULL)
		*qtext = NULL;
	if (!ng_dump_read(r, de, sizeof(*de), NULL) ||
		!ng_dump_read(r, hist, ng_hist_groups_size(de->hist_mask), NULL))
		return "truncated entry";
	if (de->text_len < -1 || (de->text_len >= 0 && (size_t) de->text_len > r->left))
		return "invalid text length";
	if (!PG_VALID_ENCODING(de->encoding))
		return "invalid encoding";
	if (de->counters.calls[NG_PLAN] < 0 || de->counters.calls[NG_EXEC] < 0 ||
		de->usage > NG_USAGE_MAX)
		return "invalid counters";
	/* a bool from the file: read as the byte it is before it is used */
	if (*(const uint8 *) &de->key.toplevel > 1)
		return "invalid key";
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
	if (!ng_dump_read(r, tbuf, de->text_len, &nul) || nul)
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
 * persist_restore_hist
 *		Add a saved histogram (groups for mask) to entry's.  Caller holds
 *		the partition lock exclusively, and has the spares it may need.
 */
static void
persist_restore_hist(NgSharedEntry *entry, uint32 mask, const uint64 *hist)
{
	NgHistView	view = {mask, hist};

	for (int kind = 0; kind < NG_NUM_KINDS; kind++)
		for (int b = 0; b < NG_HIST_BUCKETS; b++)
		{
			uint64		n = ng_hist_count(view, kind, b);

			if (n > 0)
				(void) ng_entry_hist_add(entry, kind, b, n);
		}
}

/*
 * The full-reset generation the server started with, and whether a full
 * reset has happened since: then the rest of the file is void (the reset
 * removed what was restored before it, and what it did not see must not
 * come back after it), and so are the saved info figures.
 */
static uint32 restore_stats_generation;
static bool restore_voided;

/*
 * persist_merge_entry
 *		Under the exclusive partition lock: a backend made the entry of a
 *		restored row before the keeper got to it; it now holds both periods'
 *		counts, since the earlier start, the usage of both, and the saved
 *		text (*tdp, then cleared) if it has none; if it has none and the
 *		saved one (saved_text) did not fit, that is counted once, as at a
 *		parse.
 */
static void
persist_merge_entry(NgSharedEntry *entry, const NgDumpEntry *de,
					dsa_pointer *tdp, bool saved_text)
{
	ng_counters_merge(&entry->counters, &de->counters);
	entry->stats_since = Min(entry->stats_since, de->stats_since);
	entry->minmax_stats_since = Min(entry->minmax_stats_since,
									de->minmax_stats_since);
	ng_evict_earn_usage(entry, de->usage);
	if (!DsaPointerIsValid(entry->qtext) && DsaPointerIsValid(*tdp))
	{
		entry->qtext = *tdp;
		entry->text_len = de->text_len;
		entry->encoding = de->encoding;
		entry->text_stored_at = de->text_stored_at;
		entry->text_dropped = false;
		*tdp = InvalidDsaPointer;	/* the entry owns it */
	}
	else if (!DsaPointerIsValid(entry->qtext) && saved_text &&
			 !entry->text_dropped)
	{
		entry->text_dropped = true;
		ng_note_loss(NG_LOSS_TEXT_MEMORY, 1);
	}
}

/*
 * persist_restore_entry
 *		Put one saved entry into the table, merging with an entry a backend
 *		created meanwhile.  Returns false if there was no room.
 */
static bool
persist_restore_entry(const NgDumpEntry *de, const uint64 *hist,
					  const char *qtext)
{
	uint32		hash = ng_key_hash(&de->key);
	NgSharedPartition *part = ng_partition(hash);
	dsa_pointer tdp = InvalidDsaPointer;
	dsa_pointer dp;
	NgSharedEntry *entry;
	bool		found = false;

	if (de->key.queryid == 0)
		return true;			/* padding of a dump that shrank */
	ng_entry_reserve_past_max();	/* the keeper evicts down to max next */
	if (qtext != NULL)
		tdp = ng_qtext_store(qtext, de->text_len);
	(void) ng_entry_prepare(part);
	(void) ng_hist_spares_fill(pg_popcount32(de->hist_mask) +
							   NG_HIST_SPARES_KEPT);

	LWLockAcquire(part->lock, LW_EXCLUSIVE);
	/* a full reset bumps the generation holding every partition lock */
	restore_voided = (ng_shared->stats_generation != restore_stats_generation);
	if (restore_voided)
		dp = InvalidDsaPointer;
	else
		dp = ng_entry_insert(part, &de->key, hash, tdp, de->text_len,
							 de->encoding, &found);
	if (DsaPointerIsValid(dp))
	{
		entry = dsa_get_address(ng_area, dp);
		persist_restore_hist(entry, de->hist_mask, hist);
		if (found)
			persist_merge_entry(entry, de, &tdp, qtext != NULL);
		else
		{
			/*
			 * changed_generation is kept: the previous run's generations are
			 * below this run's (setup.c), so a collector's token from before
			 * the restart still tells which entries changed after it.
			 */
			entry->counters = de->counters;
			entry->usage = de->usage;
			entry->stats_since = de->stats_since;
			entry->minmax_stats_since = de->minmax_stats_since;
			if (DsaPointerIsValid(entry->qtext))
				entry->text_stored_at = de->text_stored_at;
			else if (qtext != NULL)
			{
				/* the text did not fit: counted once, as at a parse */
				entry->text_dropped = true;
				ng_note_loss(NG_LOSS_TEXT_MEMORY, 1);
			}
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
persist_merge_stats(const NgSharedStats *saved)
{
	NgSharedStats *st = &ng_shared->stats;

	SpinLockAcquire(&ng_shared->mutex);
	if (ng_shared->stats_generation != restore_stats_generation)
	{
		/* a full reset since the restore began: the figures start from it */
		restore_voided = true;
		SpinLockRelease(&ng_shared->mutex);
		return;
	}
	st->dealloc += saved->dealloc;
	st->evicted_calls += saved->evicted_calls;
	st->evicted_exec_time += saved->evicted_exec_time;
	st->last_eviction_time = Max(st->last_eviction_time,
								 saved->last_eviction_time);
	st->texts_dropped += saved->texts_dropped;
	st->entries_refused += saved->entries_refused;
	st->counts_discarded += saved->counts_discarded;
	st->unadmitted_calls += saved->unadmitted_calls;
	st->lock_misses += saved->lock_misses;
	st->dsa_failures += saved->dsa_failures;
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
	uint64		rows = (uint64) ng_max + ng_slots_total();

	return sizeof(NgDumpHeader) +
		rows * (sizeof(NgDumpEntry) + ng_hist_groups_size(PG_UINT32_MAX)) +
		(uint64) ng_query_text_memory_kb * 1024 + sizeof(pg_crc32c);
}

/*
 * persist_check_size
 *		NULL if a dump of size bytes could be sound, else why not.
 */
static const char *
persist_check_size(uint64 size, uint64 max_size)
{
	if (size < sizeof(NgDumpHeader) + sizeof(pg_crc32c))
		return "file too short";
	if (size > max_size)
		return psprintf("file too large (" UINT64_FORMAT " bytes, at most "
						UINT64_FORMAT " bytes for these settings)",
						size, max_size);
	return NULL;
}

/*
 * persist_validate
 *		First pass over the file: the header, every entry, and the CRC of the
 *		whole, which decides when it fails.  Returns NULL if the file is
 *		sound, else why not; *hdr gets the header.
 */
static const char *
persist_validate(NgDumpReader * r, NgDumpHeader *hdr)
{
	const char *why = NULL;
	pg_crc32c	stored_crc;

	if (!ng_dump_read(r, hdr, sizeof(*hdr), NULL))
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
		uint64		hist[NG_HIST_BUCKETS * NG_NUM_KINDS];

		why = persist_check_entry(r, &de, hist, NULL);
	}
	if (why == NULL && r->left != 0)
		why = "trailing bytes after the entries";

	/* the checksum goes first: read what is left of the body into it */
	if (r->io_error || !ng_dump_read(r, NULL, r->left, NULL) ||
		!ng_dump_read_trailer(r, &stored_crc))
		return "could not read the file";
	FIN_CRC32C(r->crc);
	if (!EQ_CRC32C(r->crc, stored_crc))
		return "checksum mismatch";
	return why;
}

/*
 * persist_restore_entries
 *		The second pass: restore nentries entries, checking each again as
 *		it is read.  Counts them in *restored; one that could not be put back
 *		(DSA memory short: counted in dsa_failures) leaves the table as an
 *		evicted entry does, its counts in dealloc and evicted_calls.
 *		Returns NULL, or why the file could not be read to the end.
 */
static const char *
persist_restore_entries(NgDumpReader * r, uint64 nentries, int64 *restored)
{
	const char *why = NULL;

	for (uint64 i = 0; i < nentries; i++)
	{
		NgDumpEntry de;
		uint64		hist[NG_HIST_BUCKETS * NG_NUM_KINDS];
		char	   *qtext;

		why = persist_check_entry(r, &de, hist, &qtext);
		if (why != NULL)
		{
			why = psprintf("%s, after " INT64_FORMAT " statements were restored",
						   r->io_error ? "could not read the file" : why,
						   *restored);
			break;
		}
		if (persist_restore_entry(&de, hist, qtext))
			(*restored)++;
		else if (!restore_voided)
		{
			/* not put back: it leaves the table as an evicted entry does */
			ng_evict_count_removed(de.counters.calls[NG_EXEC],
								   de.counters.total_time[NG_EXEC]);
		}
		if (qtext)
			pfree(qtext);
		if (restore_voided)
			break;
	}
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
	NgDumpReader r;
	NgDumpHeader hdr;
	const char *why = NULL;
	int64		restored = -1;
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
	r.mem = NULL;
	if (fstat(fd, &st) != 0)
		why = "could not stat the file";
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else
		why = persist_check_size((uint64) st.st_size, max_size);
	if (why != NULL)
		goto out;

	r.buf = palloc(NG_DUMP_READ_CHUNK);
	if (!ng_dump_reader_start(&r, (size_t) st.st_size))
		why = "could not read the file";
	else
		why = persist_validate(&r, &hdr);
	if (why != NULL)
		goto out;

	/* the second pass restores; it checks each entry again as it reads */
	if (!ng_dump_reader_start(&r, (size_t) st.st_size) ||
		!ng_dump_read(&r, &hdr, sizeof(hdr), NULL))
	{
		why = "could not read the file";
		goto out;
	}
	restored = 0;
	/* as shared memory was made (zero): a full reset since voids the file */
	restore_stats_generation = 0;
	restore_voided = false;
	why = persist_restore_entries(&r, hdr.nentries, &restored);
	if (!restore_voided)
		persist_merge_stats(&hdr.stats);
	if (restore_voided)
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: a reset during the restore discarded the rest of the saved statistics")));
	/* the spares the restore kept at hand go back (the keeper stays) */
	ng_hist_spares_free();

out:
	CloseTransientFile(fd);
	if (why != NULL)
		persist_reject(why);
	if (r.buf)
		pfree(r.buf);
	return why != NULL ? -1 : restored;
}

#ifdef USE_ASSERT_CHECKING
/*
 * ng_persist_check_buffer
 *		Assertion builds only, for the fuzz entry point (persist_fuzz.c): a
 *		dump in memory (size bytes at data) checked as ng_persist_load_file
 *		checks a file of that size: its size, the first pass, and the
 *		second pass's checks of each entry with its text, restoring
 *		nothing.  Returns NULL if it is sound, else why not.  Allocates in
 *		the current memory context; takes no lock.
 */
const char *
ng_persist_check_buffer(const char *data, size_t size)
{
	NgDumpReader r = {0};
	NgDumpHeader hdr;
	const char *why;

	r.fd = -1;
	r.mem = data;
	why = persist_check_size(size, persist_max_file_size());
	if (why != NULL)
		return why;
	r.buf = palloc(NG_DUMP_READ_CHUNK);
	if (!ng_dump_reader_start(&r, size))
		why = "could not read the file";
	else
		why = persist_validate(&r, &hdr);
	if (why == NULL && (!ng_dump_reader_start(&r, size) ||
						!ng_dump_read(&r, &hdr, sizeof(hdr), NULL)))
		why = "could not read the file";
	for (uint64 i = 0; why == NULL && i < hdr.nentries; i++)
	{
		NgDumpEntry de;
		uint64		hist[NG_HIST_BUCKETS * NG_NUM_KINDS];
		char	   *qtext;

		why = persist_check_entry(&r, &de, hist, &qtext);
		if (qtext != NULL)
			pfree(qtext);
	}
	pfree(r.buf);
	return why;
}
#endif
