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
 * bounding each length by the bytes that remain and requiring every
 * timestamp to be one a timestamptz can show, the second restores.
 *
 * Locking: none of ours; validated rows go into the table through
 * persist_restore.c, which takes each partition lock in turn.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
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
#include "plan_text.h"
#include "plans.h"
#include "qtext.h"
#include "shmem.h"
#include "slots/slots.h"
#include "store.h"

/*
 * persist_valid_time
 *		Can ts be shown as a timestamp with time zone?  Every timestamp read
 *		from the file must be, or the views would fail on it (0, "never",
 *		is a valid one).
 */
static inline bool
persist_valid_time(TimestampTz ts)
{
	return IS_VALID_TIMESTAMP(ts);
}

/*
 * persist_check_entry
 *		Read one entry's fixed part, its histogram groups (into hist, room
 *		for all of them) and its text, checking every field that could make
 *		it unsafe to use.  With qtext, the text is returned in
 *		*qtext (palloc'd, NUL-terminated; NULL if none); without, it is only
 *		checked.  Returns NULL if it is fine, else why not.
 */
static const char *
persist_check_entry(NgDumpReader *r, NgDumpEntry *de, uint64 *hist,
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
		!ng_evict_usage_valid(de->usage))
		return "invalid counters";
	/* a bool from the file: read as the byte it is before it is used */
	if (*(const uint8 *) &de->key.toplevel > 1)
		return "invalid key";
	if (!persist_valid_time(de->stats_since) ||
		!persist_valid_time(de->minmax_stats_since) ||
		!persist_valid_time(de->text_stored_at) ||
		!persist_valid_time(de->counters.last_executed_at))
		return "invalid timestamp";
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
 * persist_check_errors
 *		Read one entry's failures by SQLSTATE (format 6) into de, checking
 *		them: a key, counts that are not negative, SQLSTATEs as errcode()
 *		packs them (30 bits; 0 only for a row without failures and for the
 *		row of the rest, the last), times a timestamptz can show.  Returns
 *		NULL if they are fine, else why not.
 */
static const char *
persist_check_errors(NgDumpReader *r, NgDumpErrors *de)
{
	if (!ng_dump_read(r, de, sizeof(*de), NULL))
		return "truncated SQLSTATE counts";
	if (*(const uint8 *) &de->key.toplevel > 1)
		return "invalid key of SQLSTATE counts";
	for (int i = 0; i <= NG_ERROR_SQLSTATES; i++)
	{
		const NgErrorCount *c = &de->counts[i];

		if (c->errors < 0 || c->sqlstate < 0 || c->sqlstate >= (1 << 30) ||
			(c->sqlstate == 0 && c->errors > 0 && i < NG_ERROR_SQLSTATES) ||
			(c->sqlstate != 0 && i == NG_ERROR_SQLSTATES) ||
			!persist_valid_time(c->last_error_at))
			return "invalid SQLSTATE counts";
	}
	return NULL;
}

/*
 * persist_errors_head
 *		Read and check what follows the entries in format 6: the head of the
 *		failures by SQLSTATE, into *head.  A format 5 file has none (*head
 *		zeroed).  Returns NULL if it is fine, else why not.
 */
static const char *
persist_errors_head(NgDumpReader *r, const NgDumpHeader *hdr,
					NgDumpErrorsHead *head)
{
	memset(head, 0, sizeof(*head));
	if (hdr->format < 6)
		return NULL;
	if (!ng_dump_read(r, head, sizeof(*head), NULL))
		return "truncated SQLSTATE counts";
	if (head->sqlstates_lost < 0)
		return "invalid SQLSTATE counts";
	if (head->nerrors > r->left / sizeof(NgDumpErrors))
		return "SQLSTATE count exceeds the file";
	return NULL;
}

/*
 * persist_check_errors_all
 *		The first pass's check of what follows the entries: every entry's
 *		failures by SQLSTATE (format 6).  NULL if they are fine, else why
 *		not.
 */
static const char *
persist_check_errors_all(NgDumpReader *r, const NgDumpHeader *hdr)
{
	NgDumpErrorsHead head;
	const char *why = persist_errors_head(r, hdr, &head);

	for (uint64 i = 0; why == NULL && i < head.nerrors; i++)
	{
		NgDumpErrors de;

		why = persist_check_errors(r, &de);
	}
	return why;
}

/*
 * persist_plans_head
 *		Read and check what follows the failures in format 7: the head of
 *		the plan statistics, into *head.  An older file has none (*head
 *		zeroed).  Returns NULL if it is fine, else why not.
 */
static const char *
persist_plans_head(NgDumpReader *r, const NgDumpHeader *hdr,
				   NgDumpPlansHead *head)
{
	memset(head, 0, sizeof(*head));
	if (hdr->format < 7)
		return NULL;
	if (!ng_dump_read(r, head, sizeof(*head), NULL))
		return "truncated plan statistics";
	if (head->plan_texts_dropped < 0 || head->plan_calls_lost < 0)
		return "invalid plan statistics";
	if (head->nplans > r->left / sizeof(NgDumpPlan))
		return "plan count exceeds the file";
	return NULL;
}

/*
 * persist_check_plan
 *		Read one plan row (format 7) into dp, and its text, checking every
 *		field that could make it unsafe to use: a key, a planid or the
 *		"other" row (which has no text), calls above 0 and rows not below,
 *		times that are finite numbers, timestamps a timestamptz can show, a
 *		text no longer than a plan text can be, without NUL, of a known
 *		encoding.
 *		With text, the text is returned in *text (palloc'd, NUL-terminated;
 *		NULL if none); without, it is only checked.  Returns NULL if it is
 *		fine, else why not.
 */
static const char *
persist_check_plan(NgDumpReader *r, NgDumpPlan *dp, char **text)
{
	bool		nul = false;
	char	   *tbuf = NULL;

	if (text !=NULL)
		*text = NULL;
	if (!ng_dump_read(r, dp, sizeof(*dp), NULL))
		return "truncated plan";
	if (*(const uint8 *) &dp->key.toplevel > 1 || dp->key.queryid == 0)
		return "invalid key of plan";
	if (dp->calls <= 0 || dp->rows < 0 || isnan(dp->total_time) ||
		isinf(dp->total_time) || isnan(dp->min_time) || isinf(dp->min_time) ||
		isnan(dp->max_time) || isinf(dp->max_time))
		return "invalid plan counters";
	if (!persist_valid_time(dp->first_seen) ||
		!persist_valid_time(dp->last_seen))
		return "invalid plan timestamp";
	if (dp->text_len < -1 || dp->text_len > NG_PLAN_TEXT_MAX_BYTES ||
		(dp->text_len >= 0 && (size_t) dp->text_len > r->left) ||
		(dp->planid == 0 && dp->text_len >= 0))
		return "invalid plan text length";
	if (!PG_VALID_ENCODING(dp->encoding))
		return "invalid plan text encoding";
	if (dp->text_len < 0)
		return NULL;
	if (text !=NULL)
	{
		tbuf = palloc_extended((Size) dp->text_len + 1, MCXT_ALLOC_NO_OOM);
		if (tbuf == NULL)
			return "out of memory";
		tbuf[dp->text_len] = '\0';
	}
	if (!ng_dump_read(r, tbuf, dp->text_len, &nul) || nul)
	{
		if (tbuf)
			pfree(tbuf);
		return nul ? "invalid plan text" : "truncated plan";
	}
	if (text !=NULL)
		*text = tbuf;
	return NULL;
}

/*
 * persist_check_plans_all
 *		The first pass's check of the plan statistics (format 7), reading
 *		every text (with_texts, as the second pass does: the fuzz entry
 *		point) or skipping over them.  NULL if they are fine, else why not.
 */
static const char *
persist_check_plans_all(NgDumpReader *r, const NgDumpHeader *hdr,
						bool with_texts)
{
	NgDumpPlansHead head;
	const char *why = persist_plans_head(r, hdr, &head);

	for (uint64 i = 0; why == NULL && i < head.nplans; i++)
	{
		NgDumpPlan	dp;
		char	   *text;

		why = persist_check_plan(r, &dp, with_texts ? &text : NULL);
		if (why == NULL && with_texts && text !=NULL)
			pfree(text);
	}
	return why;
}

/*
 * persist_restore_plans
 *		The second pass, after the failures: restore the plan statistics
 *		(format 7), checking each row again as it is read.  Returns NULL,
 *		or why the file could not be read to the end.
 */
static const char *
persist_restore_plans(NgDumpReader *r, const NgDumpHeader *hdr)
{
	NgDumpPlansHead head;
	const char *why = persist_plans_head(r, hdr, &head);

	for (uint64 i = 0; why == NULL && i < head.nplans; i++)
	{
		NgDumpPlan	dp;
		char	   *text;

		why = persist_check_plan(r, &dp, &text);
		if (why != NULL)
			break;
		ng_persist_restore_plan(&dp, text);
		if (text !=NULL)
			pfree(text);
		if (ng_persist_restore_voided())
			break;
	}
	ng_plans_prepared_release();	/* the plan array kept at hand */
	if (why == NULL)
		ng_persist_restore_plans_end(&head);
	if (why != NULL && r->io_error)
		why = "could not read the file";
	return why;
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
 *		held unbound slots), and texts of at most query_text_memory bytes;
 *		for plans, whose settings may have been lowered since the save, as
 *		many rows as the highest plans_per_statement allows, and plan texts
 *		of at most plan_text_memory or NG_DUMP_PLAN_TEXT_FLOOR bytes.
 */
static uint64
persist_max_file_size(void)
{
	uint64		rows = (uint64) ng_max + ng_slots_total();

	return sizeof(NgDumpHeader) +
		rows * (sizeof(NgDumpEntry) + ng_hist_groups_size(PG_UINT32_MAX)) +
		(uint64) ng_query_text_memory_kb * 1024 +
		sizeof(NgDumpErrorsHead) + rows * sizeof(NgDumpErrors) +
		sizeof(NgDumpPlansHead) +
		rows * (NG_PLANS_PER_STATEMENT_MAX + 1) * sizeof(NgDumpPlan) +
		Max((uint64) ng_plan_text_memory_kb * 1024, NG_DUMP_PLAN_TEXT_FLOOR) +
		sizeof(pg_crc32c);
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
 *		sound, else why not; *hdr gets the header.  *past_header (if not
 *		NULL) says whether the header and the CRC were sound, so that the
 *		verdict is the entries' (the fuzz entry point counts these).
 */
static const char *
persist_validate(NgDumpReader *r, NgDumpHeader *hdr, bool *past_header)
{
	const char *why = NULL;
	bool		header_ok;
	pg_crc32c	stored_crc;

	if (past_header != NULL)
		*past_header = false;

	if (!ng_dump_read(r, hdr, sizeof(*hdr), NULL))
		why = "truncated header";
	else if (hdr->magic != NG_DUMP_MAGIC)
		why = "not a pg_stat_statements_ng file";
	else if (hdr->format < NG_DUMP_FORMAT_OLDEST || hdr->format > NG_DUMP_FORMAT)
		why = psprintf("format version %u, expected %u to %u", hdr->format,
					   NG_DUMP_FORMAT_OLDEST, NG_DUMP_FORMAT);
	else if (hdr->pg_major != PG_VERSION_NUM / 100)
		why = psprintf("written by PostgreSQL major %u, this is %u",
					   hdr->pg_major, PG_VERSION_NUM / 100);
	else if (hdr->counters_size != sizeof(NgCounters))
		why = "counters of another layout";
	else if (!persist_valid_time(hdr->stats.stats_reset) ||
			 !persist_valid_time(hdr->stats.last_eviction_time))
		why = "invalid timestamp in the header";
	else if (hdr->nentries > r->left / sizeof(NgDumpEntry))
		why = "entry count exceeds the file";
	header_ok = (why == NULL);

	for (uint64 i = 0; why == NULL && i < hdr->nentries; i++)
	{
		NgDumpEntry de;
		uint64		hist[NG_HIST_BUCKETS * NG_NUM_KINDS];

		why = persist_check_entry(r, &de, hist, NULL);
	}
	if (why == NULL)
		why = persist_check_errors_all(r, hdr);
	if (why == NULL)
		why = persist_check_plans_all(r, hdr, false);
	if (why == NULL && r->left != 0)
		why = "trailing bytes after the entries";

	/* the checksum goes first: read what is left of the body into it */
	if (r->io_error || !ng_dump_read(r, NULL, r->left, NULL) ||
		!ng_dump_read_trailer(r, &stored_crc))
		return "could not read the file";
	FIN_CRC32C(r->crc);
	if (!EQ_CRC32C(r->crc, stored_crc))
		return "checksum mismatch";
	if (past_header != NULL)
		*past_header = header_ok;
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
persist_restore_entries(NgDumpReader *r, uint64 nentries, int64 *restored)
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
		if (ng_persist_restore_entry(&de, hist, qtext))
			(*restored)++;
		else if (!ng_persist_restore_voided())
		{
			/* not put back: it leaves the table as an evicted entry does */
			ng_evict_count_removed(de.counters.calls[NG_EXEC],
								   de.counters.total_time[NG_EXEC]);
		}
		if (qtext)
			pfree(qtext);
		if (ng_persist_restore_voided())
			break;
	}
	return why;
}

/*
 * persist_restore_errors
 *		The second pass, after the entries: restore the failures by
 *		SQLSTATE (format 6), checking each again as it is read.  Returns
 *		NULL, or why the file could not be read to the end.
 */
static const char *
persist_restore_errors(NgDumpReader *r, const NgDumpHeader *hdr)
{
	NgDumpErrorsHead head;
	const char *why = persist_errors_head(r, hdr, &head);

	if (why == NULL)
		ng_persist_restore_errors_lost(head.sqlstates_lost);
	for (uint64 i = 0; why == NULL && i < head.nerrors; i++)
	{
		NgDumpErrors de;

		why = persist_check_errors(r, &de);
		if (why == NULL)
			ng_persist_restore_errors(&de);
		if (ng_persist_restore_voided())
			break;
	}
	if (why != NULL && r->io_error)
		why = "could not read the file";
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
		why = persist_validate(&r, &hdr, NULL);
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
	ng_persist_restore_begin();
	why = persist_restore_entries(&r, hdr.nentries, &restored);
	if (why == NULL && !ng_persist_restore_voided())
		why = persist_restore_errors(&r, &hdr);
	if (why == NULL && !ng_persist_restore_voided())
		why = persist_restore_plans(&r, &hdr);
	if (!ng_persist_restore_voided())
		ng_persist_merge_stats(&hdr.stats);
	if (ng_persist_restore_voided())
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
 *		nothing.  Returns NULL if it is sound, else why not; *past_header
 *		says whether the header and the CRC were sound (the verdict is then
 *		the entries').  Allocates in the current memory context; takes no
 *		lock.
 */
const char *
ng_persist_check_buffer(const char *data, size_t size, bool *past_header)
{
	NgDumpReader r = {0};
	NgDumpHeader hdr;
	const char *why;

	r.fd = -1;
	r.mem = data;
	*past_header = false;
	why = persist_check_size(size, persist_max_file_size());
	if (why != NULL)
		return why;
	r.buf = palloc(NG_DUMP_READ_CHUNK);
	if (!ng_dump_reader_start(&r, size))
		why = "could not read the file";
	else
		why = persist_validate(&r, &hdr, past_header);
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
	if (why == NULL)
		why = persist_check_errors_all(&r, &hdr);
	if (why == NULL)
		why = persist_check_plans_all(&r, &hdr, true);
	pfree(r.buf);
	return why;
}
#endif
