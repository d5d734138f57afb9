/*-------------------------------------------------------------------------
 *
 * fingerprint_cache.c
 *		Each stored text's fingerprint, computed once by a reader and kept
 *		in the text's header (qtext.h) for the reads that follow.
 *
 * Why a file of its own: the protocol that lets a reader write into shared
 * text memory it found under a lock it no longer holds.
 *
 * The protocol.  A reader copies a partition's rows under the partition
 * lock (shared), each with its text, the text's DSA pointer and
 * text_stored_at, and the header's fingerprint (0: not cached).  Outside
 * the lock it computes the fingerprints that were not cached from its
 * copies (ng_fpcache_get), some 70,000 instructions a text.  Then it takes
 * the partition lock again, shared, looks each key up again, and writes the
 * fingerprint into the header only if the entry still holds the same text
 * (same DSA pointer and text_stored_at): texts are freed only under the
 * exclusive lock, so the header is live while the shared lock is held.
 * The write is a plain atomic store: a fingerprint depends on the text
 * alone, so two readers storing into the same header store the same value.
 * Folds, stores and evictions never read the header.
 *
 * What is cached is the fingerprint of the stored bytes: a reader whose
 * database shows a text converted (another encoding) computes it from what
 * it shows, and caches it only if that is the stored bytes.  A fingerprint
 * of 0, and a text the scanner rejects, are not cached (0 means none) and
 * are computed at each read.
 *
 * Locks: ng_fpcache_get none of ours (the scanner allocates);
 * ng_fpcache_store one partition lock, shared, for its lookups and stores.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/memutils.h"

#include "fingerprint.h"
#include "qtext.h"
#include "shmem.h"
#include "store.h"
#include "textconv.h"

/*
 * ng_fpcache_get
 *		The fingerprint of a row's text t (NgFpText) as this database shows
 *		it, into *fp, which holds the cached value (0: none) on entry.
 *		False if it has none (the scanner rejects it).  A fingerprint
 *		computed here is noted in c, for ng_fpcache_store, when it is that
 *		of the stored bytes.  No lock of ours held.
 */
bool
ng_fpcache_get(NgFpCache *c, const NgFpText *t, uint64 *fp)
{
	char	   *shown;
	bool		ok;

	if (*fp != 0 && t->encoding == GetDatabaseEncoding())
		return true;

	shown = ng_text_for_reader(t->text, t->len, t->encoding);
	ok = ng_fingerprint_or_null(shown, strlen(shown), fp);
	if (shown != t->text)
		pfree(shown);
	else if (ok && *fp != 0 && DsaPointerIsValid(t->qtext))
	{
		NgFpNote   *note;

		if (c->nnotes == c->maxnotes)
		{
			c->maxnotes = Max(64, c->maxnotes * 2);
			c->notes = c->notes == NULL ?
				palloc(sizeof(NgFpNote) * c->maxnotes) :
				repalloc_huge(c->notes, sizeof(NgFpNote) * c->maxnotes);
		}
		note = &c->notes[c->nnotes++];
		note->key = *t->key;
		note->qtext = t->qtext;
		note->text_stored_at = t->stored_at;
		note->fingerprint = *fp;
	}
	return ok;
}

/*
 * ng_fpcache_store
 *		Store the fingerprints noted in c into their texts' headers, where
 *		the entry of partition p still holds the text they were computed
 *		from, and forget them.  Takes partition p's lock, shared.
 */
void
ng_fpcache_store(NgFpCache *c, int p)
{
	NgSharedPartition *part = &ng_shared->partitions[p];

	if (c->nnotes == 0)
		return;
	LWLockAcquire(part->lock, LW_SHARED);
	for (int i = 0; i < c->nnotes; i++)
	{
		const NgFpNote *note = &c->notes[i];
		dsa_pointer dp;
		NgSharedEntry *entry = ng_entry_lookup(part, &note->key,
											   ng_key_hash(&note->key), &dp);

		if (entry != NULL && entry->qtext == note->qtext &&
			ng_qtext_stored_at(entry->qtext) == note->text_stored_at)
			pg_atomic_write_u64(ng_qtext_fingerprint(dsa_get_address(ng_area,
																	 entry->qtext)),
								note->fingerprint);
	}
	LWLockRelease(part->lock);
	c->nnotes = 0;
}

/* ng_fpcache_free: release c's memory */
void
ng_fpcache_free(NgFpCache *c)
{
	if (c->notes != NULL)
		pfree(c->notes);
	c->notes = NULL;
	c->nnotes = c->maxnotes = 0;
}
