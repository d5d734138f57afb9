/*-------------------------------------------------------------------------
 *
 * persist_fuzz_mutate.c
 *		Assertion builds only: the mutations of the loader's fuzzer
 *		(persist_fuzz.c).
 *
 * Why a file of its own: the fuzzer's driver picks dumps, counts outcomes
 * and answers SQL; this file changes dumps, and is the one part of the
 * fuzzer that knows the dump format.  Two kinds of mutation:
 * - raw (ng_fuzz_mutate_raw): bits flipped, bytes and aligned 4- and
 *   8-byte fields set to boundary values, cuts, insertions, deletions,
 *   splices of two dumps, blind to the format, so that lengths, the entry
 *   count and the CRC disagree with the bytes;
 * - ones that know the format (ng_fuzz_mutate_dump), on a dump of the
 *   current format whose lengths agree (fuzz_parse): a field of the
 *   header's figures or of an entry's fixed part set to a boundary value,
 *   a text's bytes inserted, deleted or overwritten (zero bytes and bytes
 *   invalid in UTF-8 among them) or the text dropped or emptied, a
 *   histogram group added or removed, an entry deleted, duplicated or
 *   copied from another dump; and, 1 in 4, in the plan rows (format 7):
 *   a field of a row or of their head set, a row's text edited, a row
 *   deleted, duplicated or copied from another dump; each with the text
 *   length, the histogram mask and the entry or plan count set to agree,
 *   so that once the CRC is made right (ng_fuzz_fix_crc) the loader's
 *   checks of the entries and plans, not of the header or the CRC, give
 *   the verdict.
 *
 * Locking: none; only the caller's buffers are touched.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef USE_ASSERT_CHECKING

#include "common/pg_prng.h"
#include "port/pg_crc32c.h"

#include "hist.h"
#include "persist_internal.h"

/* bytes a text edit puts in: zero, bytes invalid in UTF-8, quotes */
static const char fuzz_text_bytes[] = {
	'\0', '\x80', '\xbf', '\xc0', '\xc3', '\xe6', '\xf4', '\xff', '\'', '$', 'a', ' '
};

static const uint64 fuzz_values[] = {
	0, 1, 2, 3, 4, 7, 8, 16, 64, 127, 128, 255, 256, 1024, 65535, 65536,
	PG_INT32_MAX, (uint64) PG_INT32_MAX + 1, PG_UINT32_MAX - 1, PG_UINT32_MAX,
	(uint64) PG_INT64_MAX, (uint64) PG_INT64_MAX + 1, PG_UINT64_MAX - 1,
	PG_UINT64_MAX
};

/*
 * ng_fuzz_mutate_raw
 *		One mutation of buf (*len bytes, room for cap), at random, blind to
 *		the format; a splice takes the tail of other (other_len bytes).
 */
void
ng_fuzz_mutate_raw(pg_prng_state *rng, char *buf, size_t *len, size_t cap,
				   const char *other, size_t other_len)
{
	size_t		n = *len;
	size_t		at = n > 0 ? pg_prng_uint64_range(rng, 0, n - 1) : 0;
	uint64		v = fuzz_values[pg_prng_uint64_range(rng, 0, lengthof(fuzz_values) - 1)];
	size_t		k;

	switch (pg_prng_uint64_range(rng, 0, 7))
	{
		case 0:					/* flip a bit */
			if (n > 0)
				buf[at] ^= (char) (1 << pg_prng_uint64_range(rng, 0, 7));
			break;
		case 1:					/* a byte to a boundary value */
			if (n > 0)
				buf[at] = (char) v;
			break;
		case 2:					/* an aligned 4-byte field */
			at &= ~(size_t) 3;
			if (at + 4 <= n)
			{
				uint32		v32 = (uint32) v;

				if (pg_prng_bool(rng))
					v32 = (uint32) (v32 + (int) pg_prng_uint64_range(rng, 0, 2) - 1);
				memcpy(buf + at, &v32, 4);
			}
			break;
		case 3:					/* an aligned 8-byte field */
			at &= ~(size_t) 7;
			if (at + 8 <= n)
				memcpy(buf + at, &v, 8);
			break;
		case 4:					/* cut */
			*len = at;
			break;
		case 5:					/* insert random bytes */
			k = pg_prng_uint64_range(rng, 1, 64);
			if (n + k <= cap)
			{
				memmove(buf + at + k, buf + at, n - at);
				for (size_t i = 0; i < k; i++)
					buf[at + i] = (char) pg_prng_uint32(rng);
				*len = n + k;
			}
			break;
		case 6:					/* delete a range */
			k = pg_prng_uint64_range(rng, 1, 256);
			if (at + k <= n)
			{
				memmove(buf + at, buf + at + k, n - at - k);
				*len = n - k;
			}
			break;
		case 7:					/* splice: this head, the other's tail */
			if (other_len > 0)
			{
				size_t		from = pg_prng_uint64_range(rng, 0, other_len - 1);

				k = Min(other_len - from, cap - at);
				memcpy(buf + at, other + from, k);
				*len = at + k;
			}
			break;
	}
}

/* Fields of the dump read and written where they lie, whatever the alignment */
static uint32
fuzz_get32(const char *buf, size_t at)
{
	uint32		v;

	memcpy(&v, buf + at, sizeof(v));
	return v;
}

static uint64
fuzz_get64(const char *buf, size_t at)
{
	uint64		v;

	memcpy(&v, buf + at, sizeof(v));
	return v;
}

static void
fuzz_put32(char *buf, size_t at, uint32 v)
{
	memcpy(buf + at, &v, sizeof(v));
}

/*
 * fuzz_parse_plans
 *		Do the plan rows (format 7) at pos of buf (len bytes, the CRC
 *		trailer left out) agree with their count and text lengths, and end
 *		at the trailer?  If so, fills in where they lie in *d.
 */
static bool
fuzz_parse_plans(const char *buf, size_t len, size_t pos, NgFuzzDump *d)
{
	uint64		nplans;

	if (len - pos < sizeof(NgDumpPlansHead))
		return false;
	d->plans_at = pos;
	nplans = fuzz_get64(buf, pos + offsetof(NgDumpPlansHead, nplans));
	if (nplans > d->max_plans)
		return false;
	pos += sizeof(NgDumpPlansHead);
	for (uint64 i = 0; i < nplans; i++)
	{
		int32		text_len;

		d->plan_at[i] = pos;
		if (len - pos < sizeof(NgDumpPlan))
			return false;
		text_len = (int32) fuzz_get32(buf, pos + offsetof(NgDumpPlan, text_len));
		pos += sizeof(NgDumpPlan);
		if (text_len < -1 || (text_len > 0 && len - pos < (size_t) text_len))
			return false;
		pos += Max(text_len, 0);
	}
	d->plan_at[nplans] = pos;
	d->nplans = nplans;
	return pos == len;
}

/*
 * fuzz_parse
 *		Is buf (len bytes) a dump of the current format whose entry count,
 *		histogram masks and text lengths agree with its bytes?  If so, fills
 *		*d with where its entries lie.  Checks nothing else.
 */
static bool
fuzz_parse(const char *buf, size_t len, NgFuzzDump *d)
{
	NgDumpHeader hdr;
	size_t		pos = sizeof(NgDumpHeader);
	uint64		nerrors;

	if (len < sizeof(NgDumpHeader) + sizeof(pg_crc32c))
		return false;
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.magic != NG_DUMP_MAGIC || hdr.format != NG_DUMP_FORMAT ||
		hdr.nentries > d->max_entries)
		return false;
	len -= sizeof(pg_crc32c);
	for (uint64 i = 0; i < hdr.nentries; i++)
	{
		int32		text_len;

		d->entry_at[i] = pos;
		if (len - pos < sizeof(NgDumpEntry))
			return false;
		text_len = (int32) fuzz_get32(buf, pos + offsetof(NgDumpEntry, text_len));
		pos += sizeof(NgDumpEntry) +
			ng_hist_groups_size(fuzz_get32(buf, pos + offsetof(NgDumpEntry, hist_mask)));
		if (text_len < -1 || pos > len || (text_len > 0 && len - pos < (size_t) text_len))
			return false;
		pos += Max(text_len, 0);
	}
	d->entry_at[hdr.nentries] = pos;
	d->nentries = hdr.nentries;
	/* the failures by SQLSTATE follow the entries; mutations keep them */
	if (len - pos < sizeof(NgDumpErrorsHead))
		return false;
	nerrors = fuzz_get64(buf, pos + offsetof(NgDumpErrorsHead, nerrors));
	pos += sizeof(NgDumpErrorsHead);
	if (nerrors > (len - pos) / sizeof(NgDumpErrors))
		return false;
	pos += nerrors * sizeof(NgDumpErrors);
	return fuzz_parse_plans(buf, len, pos, d);
}

/* k bytes opened at at (false: no room), or taken out there */
static bool
fuzz_open(char *buf, size_t *len, size_t cap, size_t at, size_t k)
{
	if (*len + k > cap)
		return false;
	memmove(buf + at + k, buf + at, *len - at);
	*len += k;
	return true;
}

static void
fuzz_close(char *buf, size_t *len, size_t at, size_t k)
{
	memmove(buf + at, buf + at + k, *len - at - k);
	*len -= k;
}

/* The entry count in the header set to n */
static void
fuzz_set_count(char *buf, uint64 n)
{
	memcpy(buf + offsetof(NgDumpHeader, nentries), &n, sizeof(n));
}

/*
 * fuzz_set_field
 *		An aligned 4- or 8-byte field of the header's figures (between the
 *		counters' size and the entry count) or of an entry's fixed part
 *		(but its text length and histogram mask) set to a boundary value,
 *		moved by one, or a bit of it flipped.
 */
static void
fuzz_set_field(pg_prng_state *rng, char *buf, const NgFuzzDump *d)
{
	size_t		from = offsetof(NgDumpHeader, stats);
	size_t		to = offsetof(NgDumpHeader, nentries);
	size_t		width = pg_prng_bool(rng) ? 4 : 8;
	uint64		v = fuzz_values[pg_prng_uint64_range(rng, 0, lengthof(fuzz_values) - 1)];
	size_t		at;

	if (d->nentries > 0 && pg_prng_uint64_range(rng, 0, 7) != 0)
	{
		from = d->entry_at[pg_prng_uint64_range(rng, 0, d->nentries - 1)];
		to = from + offsetof(NgDumpEntry, text_len);
	}
	/* aligned as in the struct: the entry's own offset is any */
	at = from + (pg_prng_uint64_range(rng, 0, to - from - width) & ~(width - 1));
	switch (pg_prng_uint64_range(rng, 0, 2))
	{
		case 0:
			break;
		case 1:					/* the field moved by one */
			memcpy(&v, buf + at, width);
			v += pg_prng_bool(rng) ? 1 : -1;
			break;
		case 2:					/* a bit flipped */
			memcpy(&v, buf + at, width);
			v ^= (uint64) 1 << pg_prng_uint64_range(rng, 0, width * 8 - 1);
			break;
	}
	if (width == 4)
		fuzz_put32(buf, at, (uint32) v);
	else
		memcpy(buf + at, &v, 8);
}

static void fuzz_edit_bytes(pg_prng_state *rng, char *buf, size_t *len,
							size_t cap, size_t len_at, size_t text_at);

/*
 * fuzz_edit_text
 *		Entry e's text: bytes inserted, deleted or overwritten, or the text
 *		dropped (length -1) or emptied, its length set to agree.
 */
static void
fuzz_edit_text(pg_prng_state *rng, char *buf, size_t *len, size_t cap,
			   const NgFuzzDump *d, uint64 e)
{
	size_t		fixed = d->entry_at[e];

	fuzz_edit_bytes(rng, buf, len, cap, fixed + offsetof(NgDumpEntry, text_len),
					fixed + sizeof(NgDumpEntry) +
					ng_hist_groups_size(fuzz_get32(buf, fixed + offsetof(NgDumpEntry, hist_mask))));
}

/*
 * fuzz_edit_bytes
 *		The text at text_at whose length (int32) is at len_at: bytes
 *		inserted, deleted or overwritten, or the text dropped (length -1)
 *		or emptied, its length set to agree.
 */
static void
fuzz_edit_bytes(pg_prng_state *rng, char *buf, size_t *len, size_t cap,
				size_t len_at, size_t text_at)
{
	int32		text_len = (int32) fuzz_get32(buf, len_at);
	size_t		tl = Max(text_len, 0);
	size_t		at = text_at + pg_prng_uint64_range(rng, 0, tl);
	size_t		k = pg_prng_uint64_range(rng, 1, pg_prng_bool(rng) ? 4 : 256);

	switch (pg_prng_uint64_range(rng, 0, 5))
	{
		case 0:					/* insert */
		case 1:					/* overwrite (and extend) */
			if (!fuzz_open(buf, len, cap, at, k))
				return;
			for (size_t i = 0; i < k; i++)
				buf[at + i] = pg_prng_bool(rng) ? (char) pg_prng_uint32(rng) :
					fuzz_text_bytes[pg_prng_uint64_range(rng, 0, lengthof(fuzz_text_bytes) - 1)];
			tl += k;
			if (at + 2 * k <= text_at + tl)
			{
				fuzz_close(buf, len, at + k, k);
				tl -= k;
			}
			break;
		case 2:					/* delete */
			k = Min(k, text_at + tl - at);
			fuzz_close(buf, len, at, k);
			tl -= k;
			break;
		case 3:					/* drop */
		case 4:					/* empty */
			fuzz_close(buf, len, text_at, tl);
			fuzz_put32(buf, len_at, pg_prng_bool(rng) ? (uint32) -1 : 0);
			return;
		case 5:					/* one byte set to zero */
			if (tl > 0)
				buf[text_at + pg_prng_uint64_range(rng, 0, tl - 1)] = '\0';
			break;
	}
	fuzz_put32(buf, len_at, (uint32) tl);
}

/*
 * fuzz_edit_hist
 *		Entry e's histogram: a bit of its mask flipped, the group it names
 *		taken out or put in (counts of boundary values) where the mask's bit
 *		order says.
 */
static void
fuzz_edit_hist(pg_prng_state *rng, char *buf, size_t *len, size_t cap,
			   const NgFuzzDump *d, uint64 e)
{
	size_t		mask_at = d->entry_at[e] + offsetof(NgDumpEntry, hist_mask);
	uint32		mask = fuzz_get32(buf, mask_at);
	int			bit = (int) pg_prng_uint64_range(rng, 0, 31);
	uint32		b = (uint32) 1 << bit;
	size_t		at = d->entry_at[e] + sizeof(NgDumpEntry) +
		ng_hist_groups_size(mask & (b - 1));

	if (mask & b)
		fuzz_close(buf, len, at, NG_HIST_GROUP_BYTES);
	else
	{
		if (!fuzz_open(buf, len, cap, at, NG_HIST_GROUP_BYTES))
			return;
		for (size_t i = 0; i < NG_HIST_GROUP_SIZE; i++)
		{
			uint64		v = fuzz_values[pg_prng_uint64_range(rng, 0, lengthof(fuzz_values) - 1)];

			memcpy(buf + at + i * sizeof(uint64), &v, sizeof(v));
		}
	}
	fuzz_put32(buf, mask_at, mask ^ b);
}

/*
 * fuzz_edit_entries
 *		In b's dump, entry e deleted, duplicated, or one of the other dump's
 *		(if it is of the current format) put before it; the entry count set
 *		to agree.
 */
static void
fuzz_edit_entries(pg_prng_state *rng, NgFuzzBuf *b, NgFuzzDump *d, uint64 e,
				  const char *other, size_t other_len)
{
	char	   *buf = b->data;
	size_t	   *len = &b->len;
	size_t		cap = b->cap;
	size_t		at = d->entry_at[e];
	size_t		k = d->entry_at[e + 1] - at;

	switch (pg_prng_uint64_range(rng, 0, 2))
	{
		case 0:
			fuzz_close(buf, len, at, k);
			fuzz_set_count(buf, d->nentries - 1);
			return;
		case 1:
			if (!fuzz_open(buf, len, cap, at, k))
				return;
			memcpy(buf + at, buf + at + k, k);
			break;
		case 2:
			if (!fuzz_parse(other, other_len, d) || d->nentries == 0)
				return;
			e = pg_prng_uint64_range(rng, 0, d->nentries - 1);
			k = d->entry_at[e + 1] - d->entry_at[e];
			if (!fuzz_open(buf, len, cap, at, k))
				return;
			memcpy(buf + at, other + d->entry_at[e], k);
			memcpy(&d->nentries, buf + offsetof(NgDumpHeader, nentries), sizeof(uint64));
			break;
	}
	fuzz_set_count(buf, d->nentries + 1);
}

/*
 * fuzz_edit_plans
 *		In b's plan rows (format 7): a field of their head's figures or of
 *		a row (but its text length) set to a boundary value, moved by one or
 *		a bit of it flipped; a row's text edited (fuzz_edit_bytes); a row
 *		deleted or duplicated, or, with none, the other dump's first put in;
 *		the count set to agree.
 */
static void
fuzz_edit_plans(pg_prng_state *rng, NgFuzzBuf *b, NgFuzzDump *d,
				const char *other, size_t other_len)
{
	size_t		count_at = d->plans_at + offsetof(NgDumpPlansHead, nplans);
	uint64		n = d->nplans;
	uint64		v = fuzz_values[pg_prng_uint64_range(rng, 0, lengthof(fuzz_values) - 1)];
	uint64		p = n > 0 ? pg_prng_uint64_range(rng, 0, n - 1) : 0;
	size_t		at = d->plans_at;
	size_t		to = count_at;
	size_t		width = pg_prng_bool(rng) ? 4 : 8;
	size_t		k;

	switch (n == 0 ? 4 : pg_prng_uint64_range(rng, 0, 5))
	{
		case 0:					/* a row's field */
		case 1:
			at = d->plan_at[p];
			to = at + offsetof(NgDumpPlan, text_len);
			/* FALLTHROUGH */
		case 2:					/* a figure of the head, or a row's field */
			at += pg_prng_uint64_range(rng, 0, to - at - width) & ~(width - 1);
			if (pg_prng_bool(rng))
			{
				memcpy(&v, b->data + at, width);
				v += pg_prng_bool(rng) ? 1 : -1;
			}
			memcpy(b->data + at, &v, width);
			return;
		case 3:					/* a row's text */
			fuzz_edit_bytes(rng, b->data, &b->len, b->cap,
							d->plan_at[p] + offsetof(NgDumpPlan, text_len),
							d->plan_at[p] + sizeof(NgDumpPlan));
			return;
		case 4:					/* the other's first row put in */
			at = d->plan_at[n];
			if (!fuzz_parse(other, other_len, d) || d->nplans == 0)
				return;
			k = d->plan_at[1] - d->plan_at[0];
			if (!fuzz_open(b->data, &b->len, b->cap, at, k))
				return;
			memcpy(b->data + at, other + d->plan_at[0], k);
			n++;
			break;
		case 5:					/* a row deleted or duplicated */
			at = d->plan_at[p];
			k = d->plan_at[p + 1] - at;
			if (pg_prng_bool(rng))
			{
				fuzz_close(b->data, &b->len, at, k);
				n--;
			}
			else
			{
				if (!fuzz_open(b->data, &b->len, b->cap, at, k))
					return;
				memcpy(b->data + at, b->data + at + k, k);
				n++;
			}
			break;
	}
	memcpy(b->data + count_at, &n, sizeof(n));
}

/*
 * ng_fuzz_mutate_dump
 *		One mutation that knows the format, if b's dump (NgFuzzBuf) is one
 *		of it whose lengths agree (else a raw one): see the head of this
 *		file.  d is room for the parse (max_entries set).
 */
void
ng_fuzz_mutate_dump(pg_prng_state *rng, NgFuzzBuf *b, NgFuzzDump *d,
					const char *other, size_t other_len)
{
	char	   *buf = b->data;
	size_t	   *len = &b->len;
	size_t		cap = b->cap;
	uint64		e;

	if (!fuzz_parse(buf, *len, d))
	{
		ng_fuzz_mutate_raw(rng, buf, len, cap, other, other_len);
		return;
	}
	if (pg_prng_uint64_range(rng, 0, 3) == 0)
	{
		fuzz_edit_plans(rng, b, d, other, other_len);
		return;
	}
	if (d->nentries == 0)
	{
		if (pg_prng_bool(rng))
			fuzz_set_field(rng, buf, d);
		else if (fuzz_parse(other, other_len, d) && d->nentries > 0)
		{
			/* the other's first entry, into a dump of none */
			size_t		k = d->entry_at[1] - d->entry_at[0];

			if (fuzz_open(buf, len, cap, sizeof(NgDumpHeader), k))
			{
				memcpy(buf + sizeof(NgDumpHeader), other + d->entry_at[0], k);
				fuzz_set_count(buf, 1);
			}
		}
		return;
	}
	e = pg_prng_uint64_range(rng, 0, d->nentries - 1);
	switch (pg_prng_uint64_range(rng, 0, 4))
	{
		case 0:
		case 1:
			fuzz_set_field(rng, buf, d);
			break;
		case 2:
			fuzz_edit_text(rng, buf, len, cap, d, e);
			break;
		case 3:
			fuzz_edit_hist(rng, buf, len, cap, d, e);
			break;
		case 4:
			fuzz_edit_entries(rng, b, d, e, other, other_len);
			break;
	}
}

/* The CRC trailer of buf (len bytes) made right for its body */
void
ng_fuzz_fix_crc(char *buf, size_t len)
{
	pg_crc32c	crc;

	if (len < sizeof(pg_crc32c))
		return;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, buf, len - sizeof(pg_crc32c));
	FIN_CRC32C(crc);
	memcpy(buf + len - sizeof(pg_crc32c), &crc, sizeof(crc));
}

#else

/* a release build has no fuzzer: an empty unit is not allowed */
typedef int ng_persist_fuzz_mutate_unused;

#endif							/* USE_ASSERT_CHECKING */
