/*-------------------------------------------------------------------------
 *
 * qtext.h
 *		Query texts (qtext.c): normalization, and text memory in the DSA
 *		area.
 *
 * Promises: a text is stored only normalized (constants as $n), or not at
 * all; text memory stays within query_text_memory (text_bytes).
 * Locks: ng_qtext_prepare and ng_qtext_store: no partition lock held
 * (ng_qtext_store allocates).  ng_qtext_free, ng_qtext_note_dropped,
 * ng_qtext_stamp: any partition lock may be held.  ng_qtext_text,
 * ng_qtext_fingerprint: the lock of the partition whose entry holds the
 * text, any mode (a text is freed only under it, exclusive).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_QTEXT_H
#define NG_QTEXT_H

#include "datatype/timestamp.h"
#include "port/atomics.h"
#include "utils/dsa.h"

#include "pg_stat_statements_ng.h"
#include "shmem.h"

#pragma GCC visibility push(hidden)

/*
 * Where the text of a statement comes from, as the hooks see it.
 */
typedef struct NgTextSource
{
	const char *query;			/* the whole source string */
	int			location;		/* statement's offset in it, or -1 */
	int			len;			/* statement's length, or <= 0 for the rest */
	JumbleState *jstate;		/* constants to replace, or NULL */
	bool		utility;		/* a utility statement: replace every literal
								 * the scanner finds, too */
} NgTextSource;

extern char *ng_qtext_prepare(const NgTextSource *src, int *len);
extern dsa_pointer ng_qtext_store(const char *qtext, int len);
extern void ng_qtext_note_dropped(void);
extern void ng_qtext_free(dsa_pointer qtext, int len);
extern TimestampTz ng_qtext_stamp(void);

/*
 * A stored text is a header, then the text and its terminator.  The header
 * caches the text's fingerprint (fingerprint.h): 0 until a reader computed
 * it and stored it there (fingerprint_cache.c), or if it is 0 or NULL.
 */
typedef struct NgQtextHeader
{
	pg_atomic_uint64 fingerprint;
	TimestampTz stored_at;		/* its entry's text_stored_at: partition lock */
} NgQtextHeader;

#define NG_QTEXT_OVERHEAD(len)	((uint64) sizeof(NgQtextHeader) + (len) + 1)

/* the NUL-terminated text of a stored text, mapped (dsa_get_address) */
static inline const char *
ng_qtext_text(void *stored)
{
	return (const char *) stored + sizeof(NgQtextHeader);
}

/*
 * ng_qtext_stored_at
 *		The text_stored_at of an entry's text qtext (kept in the text's
 *		header, the entry having no room for it), or 0 when it has none.
 *		Caller holds the partition lock, any mode.
 */
static inline TimestampTz
ng_qtext_stored_at(dsa_pointer qtext)
{
	if (!DsaPointerIsValid(qtext))
		return 0;
	return ((NgQtextHeader *) dsa_get_address(ng_area, qtext))->stored_at;
}

/* set the text_stored_at of a stored text (partition lock, exclusive) */
static inline void
ng_qtext_set_stored_at(dsa_pointer qtext, TimestampTz stored_at)
{
	((NgQtextHeader *) dsa_get_address(ng_area, qtext))->stored_at = stored_at;
}

/* the cached fingerprint cell of a stored text */
static inline pg_atomic_uint64 *
ng_qtext_fingerprint(void *stored)
{
	return &((NgQtextHeader *) stored)->fingerprint;
}

#pragma GCC visibility pop

#endif							/* NG_QTEXT_H */
