/*-------------------------------------------------------------------------
 *
 * slots_entry.c
 *		Finding or creating the shared entry a slot of this backend binds
 *		to, and the pin a parse carries to the execution that binds it.
 *
 * Why a file of its own: this is where the slots meet the shared table
 * (store.c) and, when it is full, eviction: the part of binding that takes
 * partition locks to look entries up, insert them and give them a text.
 * slots_int.h describes the whole slot protocol.
 *
 * Locking.  An entry that exists is found and pinned under its partition
 * lock in shared mode; one is created, or given its text, under the
 * exclusive lock, with everything that allocates prepared outside it.
 * Pins are atomic counters changed under the partition lock (any mode); the
 * last unpin of an entry a reset removed frees it, under the exclusive
 * lock.  Nothing here waits for a lock unless its caller asks to (wait =
 * true: at parse and at exit).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/timestamp.h"

#include "alloc.h"
#include "entry_hist.h"
#include "evict.h"
#include "qtext.h"
#include "slots_int.h"

/*
 * slot_insert_locked
 *		Under the exclusive partition lock: find key's entry, or insert it if
 *		a place was reserved (*reserved, cleared when used), give it the text
 *		stored at *tdp if it has none (*tdp cleared when the entry owns it),
 *		pin it if pin.  Returns the entry, or NULL (counted as a loss).
 */
static NgSharedEntry *
slot_insert_locked(NgSharedPartition *part, const NgKey *key, uint32 hash,
				   const char *qtext, int text_len, bool pin,
				   dsa_pointer *dp, dsa_pointer *tdp, bool *reserved,
				   bool *has_text)
{
	NgSharedEntry *entry;
	bool		found;

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	entry = ng_entry_lookup(part, key, hash, dp);
	if (entry == NULL && *reserved)
	{
		*dp = ng_entry_insert(part, key, hash, *tdp, text_len,
							  GetDatabaseEncoding(), &found);
		Assert(!found);
		if (DsaPointerIsValid(*dp))
		{
			entry = dsa_get_address(ng_area, *dp);
			*tdp = InvalidDsaPointer;	/* the entry owns it now */
			*reserved = false;
		}
	}
	else if (entry == NULL)
		ng_note_loss(NG_LOSS_TABLE_FULL, 1);
	if (entry != NULL && !DsaPointerIsValid(entry->qtext) &&
		DsaPointerIsValid(*tdp))
	{
		entry->qtext = *tdp;
		entry->text_stored_at = GetCurrentTimestamp();
		entry->text_len = text_len;
		entry->encoding = GetDatabaseEncoding();
		entry->text_dropped = false;
		*tdp = InvalidDsaPointer;
	}
	else if (entry != NULL && !DsaPointerIsValid(entry->qtext) &&
			 qtext != NULL && !entry->text_dropped)
	{
		/* the text did not fit: counted once per statement */
		entry->text_dropped = true;
		ng_note_loss(NG_LOSS_TEXT_MEMORY, 1);
	}
	if (entry != NULL)
	{
		if (pin)
			pg_atomic_fetch_add_u32(&entry->pins, 1);
		*has_text = DsaPointerIsValid(entry->qtext);
	}
	return entry;
}

/*
 * slot_create_entry
 *		The rest of ng_slot_get_entry, when the entry does not exist (exists
 *		is false) or has no text yet: create it, or give it qtext, under the
 *		exclusive partition lock, with everything prepared outside it.
 */
static NgSharedEntry *
slot_create_entry(const NgKey *key, uint32 hash, const char *qtext,
				  int text_len, bool exists, bool pin, bool wait,
				  dsa_pointer *dp, bool *has_text)
{
	NgSharedPartition *part = ng_partition(hash);
	NgSharedEntry *entry;
	dsa_pointer tdp = InvalidDsaPointer;
	bool		reserved = false;

	/*
	 * Creating it, or adding its text, needs DSA memory, which cannot be had
	 * while the process exits or a transaction aborts (store.c): not now.
	 */
	if (!ng_dsa_can_allocate())
		return NULL;

	/* Creating it, or adding its text: prepare everything outside locks. */
	if (!exists)
	{
		reserved = ng_entry_reserve();
		if (!reserved && ng_evict_make_room())
			reserved = ng_entry_reserve();
		if (!reserved && ng_slots_release_lru(ngs_nslots / 2) > 0 &&
			ng_evict_make_room())
			reserved = ng_entry_reserve();
	}
	if (qtext != NULL && (exists || reserved))
		tdp = ng_qtext_store(qtext, text_len);
	if (reserved)
		(void) ng_entry_prepare(part);

	if (wait)
		LWLockAcquire(part->lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(part->lock, LW_EXCLUSIVE))
	{
		ng_count_stat(&ng_shared->stats.lock_misses, 1);
		if (reserved)
			ng_entry_unreserve();
		if (DsaPointerIsValid(tdp))
			ng_qtext_free(tdp, text_len);
		ng_entry_prepared_release();
		return NULL;
	}

	entry = slot_insert_locked(part, key, hash, qtext, text_len, pin, dp,
							   &tdp, &reserved, has_text);
	LWLockRelease(part->lock);

	if (reserved)
		ng_entry_unreserve();
	if (DsaPointerIsValid(tdp))
		ng_qtext_free(tdp, text_len);
	ng_entry_prepared_release();
	return entry;
}

/*
 * ng_slot_get_entry
 *		Find or create the shared entry of key and return it pinned (if pin)
 *		with its DSA pointer, or NULL if it cannot be had now.
 *
 *		text (palloc'd, may be NULL) is stored if the entry has none.  With
 *		wait = false nothing here waits for a lock: a busy partition means
 *		"not now".  *has_text tells whether the entry ends up with a text.
 *		Caller holds no partition lock.
 */
NgSharedEntry *
ng_slot_get_entry(const NgKey *key, uint32 hash, const char *qtext, int text_len,
				  bool pin, bool wait, dsa_pointer *dp, bool *has_text)
{
	NgSharedPartition *part = ng_partition(hash);
	NgSharedEntry *entry;

	/* The common case: it exists; pin it under the shared lock. */
	if (wait)
		LWLockAcquire(part->lock, LW_SHARED);
	else if (!LWLockConditionalAcquire(part->lock, LW_SHARED))
	{
		ng_count_stat(&ng_shared->stats.lock_misses, 1);
		return NULL;
	}
	entry = ng_entry_lookup(part, key, hash, dp);
	if (entry != NULL && (DsaPointerIsValid(entry->qtext) || qtext == NULL ||
						  !ng_dsa_can_allocate()))
	{
		if (pin)
			pg_atomic_fetch_add_u32(&entry->pins, 1);
		*has_text = DsaPointerIsValid(entry->qtext);
		LWLockRelease(part->lock);
		return entry;
	}
	LWLockRelease(part->lock);

	return slot_create_entry(key, hash, qtext, text_len, entry != NULL,
							 pin, wait, dp, has_text);
}


/*
 * The pin the last parse took on its entry for the execution that follows
 * (ng_slots_note_parse), so that binding the statement's slot need not look
 * the entry up again; NULL when there is none.  At most one: a parse drops
 * the previous one if no execution took it, and so do maintenance and exit.
 */
static NgKey carried_key;
static NgSharedEntry *carried_entry = NULL;
static dsa_pointer carried_dp = InvalidDsaPointer;

/*
 * ng_slot_carry
 *		Keep the pin a parse took on key's entry for its execution.
 */
void
ng_slot_carry(const NgKey *key, NgSharedEntry *entry, dsa_pointer dp)
{
	Assert(carried_entry == NULL);
	carried_key = *key;
	carried_entry = entry;
	carried_dp = dp;
}

/*
 * ng_slot_drop_carried
 *		Drop the pin a parse carried, if any, freeing its entry if a reset
 *		removed it and this was the last pin.  With wait = false, keeps it
 *		(returns false) if the partition lock is busy.  Caller holds no
 *		partition lock.
 */
bool
ng_slot_drop_carried(bool wait)
{
	LWLock	   *lock;

	if (carried_entry == NULL)
		return true;
	lock = ng_partition(ng_key_hash(&carried_key))->lock;
	if (wait)
		LWLockAcquire(lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(lock, LW_EXCLUSIVE))
	{
		ng_count_stat(&ng_shared->stats.lock_misses, 1);
		return false;
	}
	if (pg_atomic_sub_fetch_u32(&carried_entry->pins, 1) == 0 &&
		carried_entry->dead)
		ng_entry_release_memory(carried_entry, carried_dp);
	LWLockRelease(lock);
	carried_entry = NULL;
	return true;
}

/*
 * ng_slot_bind_entry
 *		For ng_slot_bind: the entry of le's key, pinned, with its DSA pointer
 *		in *dp, or NULL if it cannot be had without waiting.  Takes the pin
 *		the parse carried when it is for this key and there is nothing to do
 *		about the text; otherwise finds (or creates) the entry, offering a
 *		text unless the entry has one or can get none for now.
 */
NgSharedEntry *
ng_slot_bind_entry(NgLocalEntry *le, const NgTextSource *src, dsa_pointer *dp)
{
	NgSharedPartition *part = ng_partition(le->hash);
	int			text_len = 0;
	uint32		text_epoch = part->text_epoch;
	char	   *qtext = NULL;
	bool		has_text = false;
	NgSharedEntry *entry;

	if (carried_entry != NULL)
	{
		if (memcmp(&carried_key, &le->key, sizeof(NgKey)) == 0 &&
			text_settled(le, part))
		{
			entry = carried_entry;
			*dp = carried_dp;
			carried_entry = NULL;
			return entry;
		}
		(void) ng_slot_drop_carried(false);
	}

	if (!text_settled(le, part))
		qtext = ng_slot_text(le, src, &text_len);
	entry = ng_slot_get_entry(&le->key, le->hash, qtext, text_len, true, false,
							  dp, &has_text);
	if (qtext)
	{
		pfree(qtext);
		le->text_epoch = text_epoch;
	}
	text_note(le, qtext != NULL, entry != NULL, has_text);
	return entry;
}


/*
 * ng_slot_count_direct
 *		Count a sample straight into the shared entry, for a process that
 *		has no slot area.  Waits for the partition lock; such processes do
 *		not run user queries.
 */
void
ng_slot_count_direct(NgLocalEntry *le, const NgSample *sample, const NgTextSource *src)
{
	uint32		hash = le->hash;
	NgSharedPartition *part = ng_partition(hash);
	int			text_len = 0;
	char	   *qtext = ng_slot_text(le, src, &text_len);
	dsa_pointer dp;
	bool		has_text;
	NgSharedEntry *entry;

	entry = ng_slot_get_entry(&le->key, hash, qtext, text_len, false, true,
							  &dp, &has_text);
	if (qtext)
		pfree(qtext);
	(void) ng_hist_spares_fill(1 + NG_HIST_SPARES_KEPT);
	LWLockAcquire(part->lock, LW_EXCLUSIVE);
	if (entry != NULL)
		entry = ng_entry_lookup(part, &le->key, hash, &dp);
	if (entry != NULL)
	{
		ng_counters_record(&entry->counters, sample);
		if (sample->failure == NG_SUCCEEDED)
			(void) ng_entry_hist_add(entry, sample->kind,
									 ng_hist_bucket(sample->time), 1);
		entry->counters.changed_generation =
			pg_atomic_read_u64(&ng_shared->change_generation);
		ng_evict_earn_usage(entry, 1);
	}
	LWLockRelease(part->lock);
	if (entry == NULL)
		ng_note_loss(NG_LOSS_COUNTS, 1);
}

/*
 * ng_slot_adopt_entry
 *		For an unbound slot with counts: make sure its key has an entry, so
 *		that folding the slot keeps the counts.  Returns true if the slot
 *		can be folded without loss (an entry exists, or there is nothing to
 *		keep).  With wait, waits for the partition lock (at exit).
 */
bool
ng_slot_adopt_entry(int i, bool wait)
{
	NgSlot	   *slot = slot_at(ngs_my_area, i);
	dsa_pointer dp;
	bool		has_text;

	if (!ng_counters_any(&slot->counters))
		return true;
	return ng_slot_get_entry(&slot->key, ng_key_hash(&slot->key), NULL, 0,
							 false, wait, &dp, &has_text) != NULL;
}
