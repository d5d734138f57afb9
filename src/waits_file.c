/*-------------------------------------------------------------------------
 *
 * waits_file.c
 *		The wait profile across clean restarts: a file of its own, written
 *		by the sampler at shutdown and loaded by it at start (the
 *		postmaster's decision whether to load it is in waits.c).
 *
 * Why a file of its own: the format, and the rule that nothing read from
 * the file is trusted, belong together; the sampler only hands rows over.
 *
 * The file: a header (magic, format version, server major, row size, row
 * count, the evicted figure), the rows (key, samples, time), a CRC-32C of
 * everything before it.  As the statistics' dump (persist.c): loaded only
 * after a clean shutdown (pg_control), removed otherwise; opened without
 * blocking, anything but a regular file of exactly the size its header
 * implies refused; read twice in pieces, the first pass checking the CRC
 * and every row, the second handing the rows to the sampler.  Accepted or
 * rejected as a whole, with one LOG line; nothing raises an ERROR: a bad
 * file costs the saved profile, never the start.
 *
 * Locking: the sampler holds reset_lock exclusively while it loads (no
 * reset in the middle) and shared while it saves (the bases it subtracts).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"

#include "waits.h"

#define NG_WAITS_TMP_FILE	NG_WAITS_FILE ".tmp"
#define NG_WAITS_MAGIC		0x5357474E	/* "NGWS" */
#define NG_WAITS_VERSION	1
#define NG_WAITS_CHUNK		(64 * 1024)

typedef struct NgWaitsFileHeader
{
	uint32		magic;
	uint32		version;
	uint32		pg_major;
	uint32		row_size;
	uint64		nrows;
	uint64		evicted;
} NgWaitsFileHeader;

/* a row of the file: as readers see it */
typedef NgWaitRow NgWaitsFileRow;

/* read exactly len bytes, or fail */
static bool
waits_read(int fd, void *buf, size_t len)
{
	return read(fd, buf, len) == (ssize_t) len;
}

/*
 * waits_check_rows
 *		First pass: the CRC of the whole file, and every row valid.
 *		Returns NULL if so, else why not.
 */
static const char *
waits_check_rows(int fd, const NgWaitsFileHeader *h, char *buf)
{
	pg_crc32c	crc;
	pg_crc32c	saved;
	uint64		left = h->nrows;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, h, sizeof(*h));
	while (left > 0)
	{
		uint64		n = Min(left, NG_WAITS_CHUNK / sizeof(NgWaitsFileRow));
		NgWaitsFileRow *rows = (NgWaitsFileRow *) buf;

		if (!waits_read(fd, buf, n * sizeof(NgWaitsFileRow)))
			return "could not read the rows";
		COMP_CRC32C(crc, buf, n * sizeof(NgWaitsFileRow));
		for (uint64 i = 0; i < n; i++)
			if (rows[i].key.pad != 0 || rows[i].key.queryid == 0 ||
				rows[i].samples == 0)
				return "invalid row";
		left -= n;
	}
	FIN_CRC32C(crc);
	if (!waits_read(fd, &saved, sizeof(saved)))
		return "could not read the CRC";
	if (!EQ_CRC32C(crc, saved))
		return "CRC mismatch";
	return NULL;
}

/*
 * waits_check_header
 *		The header read from fd (of st_size bytes) into h: NULL if valid,
 *		else why not.
 */
static const char *
waits_check_header(int fd, off_t st_size, NgWaitsFileHeader *h)
{
	if ((size_t) st_size < sizeof(*h) + sizeof(pg_crc32c))
		return "file too short";
	if (!waits_read(fd, h, sizeof(*h)))
		return "could not read the header";
	if (h->magic != NG_WAITS_MAGIC || h->version != NG_WAITS_VERSION)
		return "not a wait profile file of this version";
	if (h->pg_major != PG_VERSION_NUM / 100)
		return "written by another major version";
	if (h->row_size != sizeof(NgWaitsFileRow))
		return "rows of another size";
	if (h->nrows > (uint64) (st_size - sizeof(*h) - sizeof(pg_crc32c)) /
		sizeof(NgWaitsFileRow) ||
		(uint64) st_size != sizeof(*h) + h->nrows * sizeof(NgWaitsFileRow) +
		sizeof(pg_crc32c))
		return "size does not match the row count";
	return NULL;
}

/*
 * ng_waits_file_load
 *		The sampler, at its first start: hand every saved row to add, add
 *		the saved evicted figure, remove the file.  Returns the rows loaded,
 *		or -1 (logged) when there was no valid file.  Caller holds
 *		reset_lock exclusively.
 */
int64
ng_waits_file_load(void (*add) (const NgWaitKey *key, uint64 samples,
								uint64 time_us))
{
	int			fd;
	struct stat st;
	NgWaitsFileHeader h;
	const char *why = NULL;
	char	   *buf = palloc(NG_WAITS_CHUNK);
	uint64		left;

	fd = OpenTransientFile(NG_WAITS_FILE, O_RDONLY | O_NONBLOCK | PG_BINARY);
	if (fd < 0)
	{
		pfree(buf);
		return -1;
	}
	if (fstat(fd, &st) != 0)
		why = "could not stat the file";
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else
		why = waits_check_header(fd, st.st_size, &h);
	if (why == NULL)
		why = waits_check_rows(fd, &h, buf);
	if (why == NULL && lseek(fd, sizeof(h), SEEK_SET) != (off_t) sizeof(h))
		why = "could not seek";
	if (why != NULL)
	{
		CloseTransientFile(fd);
		unlink(NG_WAITS_FILE);
		pfree(buf);
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: saved wait profile ignored: %s", why)));
		return -1;
	}

	/* second pass: the rows, checked already */
	for (left = h.nrows; left > 0;)
	{
		uint64		n = Min(left, NG_WAITS_CHUNK / sizeof(NgWaitsFileRow));
		NgWaitsFileRow *rows = (NgWaitsFileRow *) buf;

		if (!waits_read(fd, buf, n * sizeof(NgWaitsFileRow)))
			break;
		for (uint64 i = 0; i < n; i++)
			add(&rows[i].key, rows[i].samples, rows[i].time_us);
		left -= n;
	}
	pg_atomic_fetch_add_u64(&ng_waits->evicted, h.evicted);
	CloseTransientFile(fd);
	unlink(NG_WAITS_FILE);
	pfree(buf);
	return (int64) (h.nrows - left);
}

/* write len bytes of data into the CRC and the file */
static void
waits_write(FILE *f, pg_crc32c *crc, const void *data, size_t len,
			bool *failed)
{
	if (*failed)
		return;
	COMP_CRC32C(*crc, data, len);
	if (fwrite(data, 1, len, f) != len)
		*failed = true;
}

/*
 * waits_visible_row
 *		Row i as the file keeps it: false if it is empty (unused, reset).
 *		Called by the sampler (no copy needed: it is the writer) holding
 *		reset_lock.
 */
static bool
waits_visible_row(int i, NgWaitsFileRow *row)
{
	NgWaitEntry *e = ng_waits_entry(i);

	if (!e->in_use)
		return false;
	memset(row, 0, sizeof(*row));
	row->key = e->key;
	row->samples = ng_waits_visible(e, e, &row->time_us);
	return row->samples > 0;
}

/*
 * ng_waits_file_save
 *		The sampler, at shutdown: every row with samples to a temporary
 *		file, fsynced and renamed into place.  A failure is logged and
 *		leaves no file.
 */
void
ng_waits_file_save(void)
{
	FILE	   *f;
	NgWaitsFileHeader h;
	NgWaitsFileRow row;
	pg_crc32c	crc;
	bool		failed = false;

	memset(&h, 0, sizeof(h));
	h.magic = NG_WAITS_MAGIC;
	h.version = NG_WAITS_VERSION;
	h.pg_major = PG_VERSION_NUM / 100;
	h.row_size = sizeof(NgWaitsFileRow);
	LWLockAcquire(ng_waits->reset_lock, LW_SHARED);
	for (int i = 0; i < ng_waits->max; i++)
		if (waits_visible_row(i, &row))
			h.nrows++;
	h.evicted = pg_atomic_read_u64(&ng_waits->evicted);

	f = AllocateFile(NG_WAITS_TMP_FILE, PG_BINARY_W);
	if (f == NULL)
		failed = true;
	INIT_CRC32C(crc);
	waits_write(f, &crc, &h, sizeof(h), &failed);
	for (int i = 0; i < ng_waits->max; i++)
		if (waits_visible_row(i, &row))
			waits_write(f, &crc, &row, sizeof(row), &failed);
	LWLockRelease(ng_waits->reset_lock);
	FIN_CRC32C(crc);
	if (!failed && fwrite(&crc, 1, sizeof(crc), f) != sizeof(crc))
		failed = true;
	if (!failed && (fflush(f) != 0 || pg_fsync(fileno(f)) != 0))
		failed = true;
	if (f != NULL && FreeFile(f) != 0)
		failed = true;
	if (!failed && durable_rename(NG_WAITS_TMP_FILE, NG_WAITS_FILE, LOG) != 0)
		failed = true;
	if (failed)
	{
		unlink(NG_WAITS_TMP_FILE);
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("pg_stat_statements_ng: could not save the wait profile: %m")));
	}
}
