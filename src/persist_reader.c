/*-------------------------------------------------------------------------
 *
 * persist_reader.c
 *		A sequential reader of a dump: the bytes of its body in order, with
 *		their CRC, from the file (the loader, persist_read.c) or, in
 *		assertion builds, from memory (the loader's fuzz entry point,
 *		persist_fuzz.c).
 *
 * Why a file of its own: both sources go through the same reader, so that
 * what the fuzz entry point checks is byte for byte what the loader does
 * with a file; the only difference is where dump_fill gets its bytes.
 *
 * Locking: none; the reader is the keeper's (or the fuzzing backend's) own.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "persist_internal.h"

/*
 * ng_dump_reader_start
 *		Start (again) at the beginning of a dump of size bytes (at least a
 *		CRC's).  False if the file cannot be rewound.
 */
bool
ng_dump_reader_start(NgDumpReader *r, size_t size)
{
	r->buf_pos = r->buf_len = 0;
	r->size = size;
	r->file_left = size;
	r->left = size - sizeof(pg_crc32c);
	r->io_error = false;
	INIT_CRC32C(r->crc);
	return r->mem != NULL || lseek(r->fd, 0, SEEK_SET) == 0;
}

static bool
dump_fill(NgDumpReader *r)
{
	size_t		want = Min(NG_DUMP_READ_CHUNK, r->file_left);
	ssize_t		n;

	if (want == 0)
	{
		r->io_error = true;
		return false;
	}
	if (r->mem != NULL)
	{
		memcpy(r->buf, r->mem + (r->size - r->file_left), want);
		n = want;
	}
	else
	{
		do
		{
			n = read(r->fd, r->buf, want);
		} while (n < 0 && errno == EINTR);
	}
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
 * ng_dump_read
 *		Hand out the next len bytes of the body into out (or nowhere, if out
 *		is NULL), adding them to the CRC; sets *nul if one of them is a zero
 *		byte (nul may be NULL).  False if fewer than len bytes are left or
 *		the file cannot be read (then io_error is set).
 */
bool
ng_dump_read(NgDumpReader *r, void *out, size_t len, bool *nul)
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
 * ng_dump_read_trailer
 *		Once the body is handed out: read the CRC trailer.
 */
bool
ng_dump_read_trailer(NgDumpReader *r, pg_crc32c *stored)
{
	pg_crc32c	crc = r->crc;
	bool		ok;

	Assert(r->left == 0);
	r->left = sizeof(pg_crc32c);
	ok = ng_dump_read(r, stored, sizeof(pg_crc32c), NULL);
	r->crc = crc;
	return ok;
}
