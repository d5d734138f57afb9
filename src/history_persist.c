/*-------------------------------------------------------------------------
 *
 * history_persist.c
 *		The history's windows across restarts: written by the keeper each
 *		time a window closes (the last at a clean shutdown) to a file of
 *		their own beside the statistics' dump, read back by the keeper at
 *		start.
 *
 * Why a file of its own: the windows have a format of their own, and
 * keeping them out of the statistics' dump leaves that format, and its
 * readers of older versions, as they are.
 *
 * The file: a header (magic, format version, server major, the sizes of a
 * row and the number of counters, the size of a wait row, the window count
 * and the history's figures, the size of a plan row), each window (start,
 * end, row count, wait row count, plan row count, rows, wait rows, plan
 * rows), and a CRC-32C of everything before it.  Files of format 1 (no
 * wait rows: their counts and size are 0) and 2 (no plan rows: the header
 * and each window end before their plan fields) are read too, their
 * windows without plan rows.  Unlike the dump, it is restored after an
 * immediate stop or a crash too: it is replaced whole by a rename, and
 * holds only closed windows, so such a stop loses the open window only.
 * It is read with the dump's care: opened without blocking, refused unless a regular
 * file no larger than history_memory allows, read whole, and checked whole
 * (the CRC, every count against the bytes that remain, every window's
 * times) before anything is restored.  A failure costs the saved windows,
 * with one LOG line, never the start or the shutdown.
 *
 * Locking: the history lock, exclusive, to link the restored windows; the
 * windows are read under it, shared, to be written.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "port/pg_crc32c.h"
#include "storage/fd.h"

#include "alloc.h"
#include "guc.h"
#include "history.h"

#define NG_HISTORY_FILE		"pg_stat/pg_stat_statements_ng_history.stat"
#define NG_HISTORY_TMP_FILE	NG_HISTORY_FILE ".tmp"
#define NG_HISTORY_MAGIC	0x48475353	/* "SSGH" */
#define NG_HISTORY_FORMAT	3	/* 1: no wait rows, 2: no plan rows (both read
								 * still) */

typedef struct NgHistoryFileHeader
{
	uint32		magic;
	uint32		format;
	uint32		pg_major;
	uint32		row_size;
	uint32		ncounters;
	uint32		wait_row_size;	/* format 1: 0 */
	int64		nwindows;
	int64		windows_dropped;
	int64		windows_skipped;
	int64		counts_lost;
	uint32		plan_row_size;	/* from format 3 */
	uint32		pad;
} NgHistoryFileHeader;

typedef struct NgHistoryFileWindow
{
	TimestampTz start;
	TimestampTz end;
	int32		nrows;
	int32		nwaits;			/* format 1: 0 */
	int32		nplans;			/* from format 3 */
	int32		pad;
} NgHistoryFileWindow;

/* the bytes of a header, and of a window's, in a file of format f */
#define HFILE_HEADER_SIZE(f) \
	((f) >= 3 ? sizeof(NgHistoryFileHeader) : \
	 offsetof(NgHistoryFileHeader, plan_row_size))
#define HFILE_WINDOW_SIZE(f) \
	((f) >= 3 ? sizeof(NgHistoryFileWindow) : \
	 offsetof(NgHistoryFileWindow, nplans))

/* write len bytes, adding them to the CRC; false on failure */
static bool
hfile_write(FILE *f, pg_crc32c *crc, const void *data, size_t len)
{
	COMP_CRC32C(*crc, data, len);
	return fwrite(data, 1, len, f) == len;
}

/* write every window; caller holds the history lock */
static bool
hfile_write_windows(FILE *f, pg_crc32c *crc)
{
	for (dsa_pointer dp = ng_history->first; DsaPointerIsValid(dp);)
	{
		NgHistoryWindow *w = dsa_get_address(ng_area, dp);
		NgHistoryFileWindow fw;

		memset(&fw, 0, sizeof(fw));
		fw.start = w->start;
		fw.end = w->end;
		fw.nrows = w->nrows;
		fw.nwaits = w->nwaits;
		fw.nplans = w->nplans;
		if (!hfile_write(f, crc, &fw, sizeof(fw)) ||
			!hfile_write(f, crc, w->rows, sizeof(NgHistoryRow) * (Size) w->nrows) ||
			!hfile_write(f, crc, NG_HISTORY_WINDOW_WAITS(w),
						 sizeof(NgHistoryWaitRow) * (Size) w->nwaits) ||
			!hfile_write(f, crc, NG_HISTORY_WINDOW_PLANS(w),
						 sizeof(NgHistoryPlanRow) * (Size) w->nplans))
			return false;
		dp = w->next;
	}
	return true;
}

/*
 * ng_history_save
 *		Keeper, each time a window closes (and so at a clean shutdown):
 *		write the windows to the file, through a temporary file that is
 *		fsynced and renamed.  Logs and leaves no file on failure.
 */
void
ng_history_save(void)
{
	NgHistoryFileHeader hdr;
	pg_crc32c	crc;
	FILE	   *f;
	bool		ok;

	if (!ng_save)
		return;
	f = AllocateFile(NG_HISTORY_TMP_FILE, PG_BINARY_W);
	if (f == NULL)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("pg_stat_statements_ng: could not save the history: could not create file \"%s\": %m",
						NG_HISTORY_TMP_FILE)));
		return;
	}
	INIT_CRC32C(crc);
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = NG_HISTORY_MAGIC;
	hdr.format = NG_HISTORY_FORMAT;
	hdr.pg_major = PG_VERSION_NUM / 100;
	hdr.row_size = sizeof(NgHistoryRow);
	hdr.ncounters = NG_HISTORY_NCOUNTERS;
	hdr.wait_row_size = sizeof(NgHistoryWaitRow);
	hdr.plan_row_size = sizeof(NgHistoryPlanRow);
	LWLockAcquire(ng_history->lock, LW_SHARED);
	hdr.nwindows = ng_history->nwindows;
	hdr.windows_dropped = ng_history->windows_dropped;
	hdr.windows_skipped = ng_history->windows_skipped;
	hdr.counts_lost = ng_history->counts_lost;
	ok = hfile_write(f, &crc, &hdr, sizeof(hdr)) &&
		hfile_write_windows(f, &crc);
	LWLockRelease(ng_history->lock);
	FIN_CRC32C(crc);
	ok = ok && fwrite(&crc, 1, sizeof(crc), f) == sizeof(crc);
	if (FreeFile(f) != 0 || !ok)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("pg_stat_statements_ng: could not save the history: could not write file \"%s\": %m",
						NG_HISTORY_TMP_FILE)));
		unlink(NG_HISTORY_TMP_FILE);
		return;
	}
	if (durable_rename(NG_HISTORY_TMP_FILE, NG_HISTORY_FILE, LOG) != 0)
		unlink(NG_HISTORY_TMP_FILE);
}

/*
 * hfile_read_all
 *		The whole file, palloc'd, its length in *len; NULL (logged) if it
 *		cannot be opened, is not a regular file, is larger than the
 *		settings allow, or cannot be read.  No file: NULL, silently.
 */
static char *
hfile_read_all(size_t *len)
{
	int			fd = OpenTransientFile(NG_HISTORY_FILE, O_RDONLY | O_NONBLOCK | PG_BINARY);
	struct stat st;
	size_t		limit = sizeof(NgHistoryFileHeader) + sizeof(pg_crc32c) +
		(size_t) ng_history_memory_kb * 1024;
	char	   *buf = NULL;
	const char *why = NULL;

	if (fd < 0)
	{
		if (errno != ENOENT)
			why = "could not open it";
	}
	else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		why = "it is not a regular file";
	else if ((uint64) st.st_size > limit)
		why = "it is larger than history_memory allows";
	else
	{
		buf = palloc_extended(Max(st.st_size, 1), MCXT_ALLOC_HUGE);
		*len = st.st_size;
		if (read(fd, buf, *len) != (ssize_t) *len)
			why = "could not read it";
	}
	if (fd >= 0)
		CloseTransientFile(fd);
	if (why != NULL)
	{
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: ignored the saved history in \"%s\": %s",
						NG_HISTORY_FILE, why)));
		if (buf)
			pfree(buf);
		return NULL;
	}
	return buf;
}

/*
 * hfile_check_waits
 *		The wait rows of window fw, at *at in buf (of len bytes without its
 *		CRC): NULL if valid (*at moved past them), else why not.  A file of
 *		format 1 has none.
 */
static const char *
hfile_check_waits(const char *buf, size_t len, size_t *at,
				  const NgHistoryFileWindow *fw, uint32 format)
{
	if (fw->nwaits < 0 || (format == 1 && fw->nwaits != 0) ||
		(len - *at) / sizeof(NgHistoryWaitRow) < (size_t) fw->nwaits)
		return "a window's wait row count is invalid";
	for (int r = 0; r < fw->nwaits; r++)
	{
		NgHistoryWaitRow row;

		memcpy(&row, buf + *at + r * sizeof(NgHistoryWaitRow), sizeof(row));
		if ((uint8) row.others > 1 || row.key.pad != 0 || row.samples == 0 ||
			(row.others && row.key.queryid != 0))
			return "a window's wait row is invalid";
	}
	*at += sizeof(NgHistoryWaitRow) * (size_t) fw->nwaits;
	return NULL;
}

/*
 * hfile_check_plans
 *		The plan rows of window fw, at *at in buf (of len bytes without its
 *		CRC): NULL if valid (*at moved past them), else why not.  A file of
 *		format 1 or 2 has none.
 */
static const char *
hfile_check_plans(const char *buf, size_t len, size_t *at,
				  const NgHistoryFileWindow *fw)
{
	if (fw->nplans < 0 ||
		(len - *at) / sizeof(NgHistoryPlanRow) < (size_t) fw->nplans)
		return "a window's plan row count is invalid";
	for (int r = 0; r < fw->nplans; r++)
	{
		NgHistoryPlanRow row;

		memcpy(&row, buf + *at + r * sizeof(NgHistoryPlanRow), sizeof(row));
		if ((uint8) row.p.other > 1 || (uint8) row.key.toplevel > 1 ||
			row.p.c.calls == 0 || (row.p.other && row.p.planid != 0))
			return "a window's plan row is invalid";
	}
	*at += sizeof(NgHistoryPlanRow) * (size_t) fw->nplans;
	return NULL;
}

/*
 * hfile_header
 *		The header of buf (len bytes), as its format has it, into *hdr (the
 *		fields a format lacks are 0); false if buf is too short for it.
 */
static bool
hfile_header(const char *buf, size_t len, NgHistoryFileHeader *hdr)
{
	memset(hdr, 0, sizeof(NgHistoryFileHeader));
	if (len < HFILE_HEADER_SIZE(1))
		return false;
	memcpy(hdr, buf, HFILE_HEADER_SIZE(1));
	if (len < HFILE_HEADER_SIZE(hdr->format))
		return false;
	memcpy(hdr, buf, HFILE_HEADER_SIZE(hdr->format));
	return true;
}

/*
 * hfile_window
 *		The window header at *at in buf (at least HFILE_WINDOW_SIZE(format)
 *		bytes there), as format has it, into *fw (the fields a format lacks
 *		are 0); *at moved past it.
 */
static void
hfile_window(const char *buf, size_t *at, uint32 format,
			 NgHistoryFileWindow *fw)
{
	memset(fw, 0, sizeof(NgHistoryFileWindow));
	memcpy(fw, buf + *at, HFILE_WINDOW_SIZE(format));
	*at += HFILE_WINDOW_SIZE(format);
}

/*
 * hfile_check_window
 *		The window at *at in buf (of len bytes without its CRC), in a file
 *		of format, after a window that ended at *last_end: NULL if valid
 *		(*at moved past it, *last_end its end), else why not.
 */
static const char *
hfile_check_window(const char *buf, size_t len, size_t *at, uint32 format,
				   TimestampTz *last_end)
{
	NgHistoryFileWindow fw;
	const char *why;

	if (len - *at < HFILE_WINDOW_SIZE(format))
		return "it is truncated";
	hfile_window(buf, at, format, &fw);
	if (fw.nrows < 0 || fw.nrows > NG_HISTORY_STATEMENTS_MAX + 1 ||
		(len - *at) / sizeof(NgHistoryRow) < (size_t) fw.nrows)
		return "a window's row count is invalid";
	if (fw.start > fw.end || fw.start < *last_end)
		return "a window's times are invalid";
	*last_end = fw.end;
	for (int r = 0; r < fw.nrows; r++)
	{
		NgHistoryRow row;

		memcpy(&row, buf + *at + r * sizeof(NgHistoryRow), sizeof(row));
		if ((uint8) row.others > 1 || (uint8) row.key.toplevel > 1)
			return "a window's row is invalid";
	}
	*at += sizeof(NgHistoryRow) * (size_t) fw.nrows;
	why = hfile_check_waits(buf, len, at, &fw, format);
	if (why == NULL)
		why = hfile_check_plans(buf, len, at, &fw);
	return why;
}

/*
 * hfile_check
 *		Is buf (len bytes) a whole, valid history file?  The reason if not.
 */
static const char *
hfile_check(const char *buf, size_t len)
{
	NgHistoryFileHeader hdr;
	pg_crc32c	crc;
	size_t		at;
	TimestampTz last_end = DT_NOBEGIN;
	const char *why;

	if (!hfile_header(buf, len, &hdr) ||
		len < HFILE_HEADER_SIZE(hdr.format) + sizeof(crc))
		return "it is truncated";
	if (hdr.magic != NG_HISTORY_MAGIC ||
		hdr.format < 1 || hdr.format > NG_HISTORY_FORMAT ||
		hdr.pg_major != PG_VERSION_NUM / 100 ||
		hdr.row_size != sizeof(NgHistoryRow) ||
		hdr.ncounters != NG_HISTORY_NCOUNTERS ||
		(hdr.format > 1 && hdr.wait_row_size != sizeof(NgHistoryWaitRow)) ||
		(hdr.format > 2 && hdr.plan_row_size != sizeof(NgHistoryPlanRow)))
		return "it was written by another version";
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, buf, len - sizeof(crc));
	FIN_CRC32C(crc);
	if (memcmp(&crc, buf + len - sizeof(crc), sizeof(crc)) != 0)
		return "its checksum does not match";
	len -= sizeof(crc);
	if (hdr.nwindows < 0 || hdr.windows_dropped < 0 ||
		hdr.windows_skipped < 0 || hdr.counts_lost < 0)
		return "its header is invalid";
	at = HFILE_HEADER_SIZE(hdr.format);
	for (int64 i = 0; i < hdr.nwindows; i++)
	{
		why = hfile_check_window(buf, len, &at, hdr.format, &last_end);
		if (why != NULL)
			return why;
	}
	if (at != len)
		return "it has bytes after its windows";
	return NULL;
}

/* link the windows of a checked file, oldest first; takes the lock */
static void
hfile_restore(const char *buf, size_t len)
{
	NgHistoryFileHeader hdr;
	size_t		at;

	(void) hfile_header(buf, len, &hdr);
	at = HFILE_HEADER_SIZE(hdr.format);
	for (int64 i = 0; i < hdr.nwindows; i++)
	{
		NgHistoryFileWindow fw;
		Size		size;
		dsa_pointer dp;
		NgHistoryWindow *w;

		hfile_window(buf, &at, hdr.format, &fw);
		size = NG_HISTORY_WINDOW_SIZE(fw.nrows, fw.nwaits, fw.nplans);
		dp = ng_dsa_allocate(size, DSA_ALLOC_HUGE);
		if (DsaPointerIsValid(dp))
		{
			w = dsa_get_address(ng_area, dp);
			w->next = InvalidDsaPointer;
			w->start = fw.start;
			w->end = fw.end;
			w->nrows = fw.nrows;
			w->nwaits = fw.nwaits;
			w->nplans = fw.nplans;
			/* rows, wait rows and plan rows follow each other in both */
			memcpy(w->rows, buf + at, size - offsetof(NgHistoryWindow, rows));
		}
		at += size - offsetof(NgHistoryWindow, rows);
		LWLockAcquire(ng_history->lock, LW_EXCLUSIVE);
		ng_history_link(dp, size);
		LWLockRelease(ng_history->lock);
	}
	LWLockAcquire(ng_history->lock, LW_EXCLUSIVE);
	ng_history->windows_dropped += hdr.windows_dropped;
	ng_history->windows_skipped += hdr.windows_skipped;
	ng_history->counts_lost += hdr.counts_lost;
	LWLockRelease(ng_history->lock);
}

/*
 * ng_history_load
 *		Keeper, the first to start since shared memory was made: restore the
 *		saved windows, whole or not at all, and remove the file (it is
 *		written again when the next window closes).  Without save, only
 *		remove it.
 */
void
ng_history_load(void)
{
	char	   *buf;
	size_t		len = 0;
	const char *why;

	if (!ng_save)
	{
		unlink(NG_HISTORY_FILE);
		return;
	}
	buf = hfile_read_all(&len);
	unlink(NG_HISTORY_FILE);
	if (buf == NULL)
		return;
	why = hfile_check(buf, len);
	if (why != NULL)
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: ignored the saved history in \"%s\": %s",
						NG_HISTORY_FILE, why)));
	else
		hfile_restore(buf, len);
	pfree(buf);
}
