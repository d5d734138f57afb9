/*-------------------------------------------------------------------------
 *
 * fingerprint.h
 *		A statement's fingerprint (fingerprint.c): a hash of its normalized
 *		text's tokens, by rules that hold on every server and major.
 *
 * Locks: none held by ng_fingerprint (a scanner error propagates to the
 * caller) nor ng_fpcache_get; ng_fpcache_store takes a partition lock,
 * shared (fingerprint_cache.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_FINGERPRINT_H
#define NG_FINGERPRINT_H

#include "datatype/timestamp.h"
#include "utils/dsa.h"

#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

extern bool ng_fingerprint(const char *s, int len, uint64 *fp);
extern bool ng_fingerprint_or_null(const char *s, int len, uint64 *fp);

/* Functions in fingerprint_cache.c */

/* a fingerprint computed by a reader, to cache in its stored text */
typedef struct NgFpNote
{
	NgKey		key;
	dsa_pointer qtext;			/* the stored text it was computed from */
	TimestampTz text_stored_at;
	uint64		fingerprint;
} NgFpNote;

/* a reader's fingerprints to cache, one partition at a time */
typedef struct NgFpCache
{
	NgFpNote   *notes;
	int			nnotes;
	int			maxnotes;
} NgFpCache;

/* a row's text, as a reader copied it, whose fingerprint it wants */
typedef struct NgFpText
{
	const NgKey *key;			/* the row's key */
	dsa_pointer qtext;			/* the stored text it was copied from */
	TimestampTz stored_at;		/* when that text was stored */
	const char *text;			/* the reader's copy */
	int			len;			/* its length in bytes */
	int			encoding;		/* its encoding */
} NgFpText;

extern bool ng_fpcache_get(NgFpCache *c, const NgFpText *t, uint64 *fp);
extern void ng_fpcache_store(NgFpCache *c, int p);
extern void ng_fpcache_free(NgFpCache *c);

#pragma GCC visibility pop

#endif							/* NG_FINGERPRINT_H */
