/*-------------------------------------------------------------------------
 *
 * entry.c
 *		Finding or creating the shared entry of a key the slots count for:
 *		looking it up and pinning it, or creating it (making room on a full
 *		table, past the admission filter) or giving it its text; and, for an
 *		unbound slot about to be folded, its key's entry.
 *
 * Why a file of its own: this is where the slots meet the shared table
 * (store.c) and, when it is full, eviction: the part of binding, of a
 * parse and of counting without a slot that takes partition locks to look
 * entries up, insert them and give them a text.  slots_int.h describes the
 * whole slot protocol.
 *
 * Locking.  An entry that exists is found and pinned under its partition
 * lock in shared mode; one is created, or given its text, under the
 * exclusive lock, with everything that allocates prepared outside it.
 * Pins are atomic counters changed under the partition lock (any mode).
 * Nothing here waits for a lock unless its caller asks to
 * (NgEntryRequest.wait: at parse and at exit).  The admission filter takes
 * no lock: plain 32-bit loads and stores of its cells in main shared
 * memory.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "mb/pg_wchar.h"
#include "utils/timestamp.h"

#include "admit.h"
#include "alloc.h"
#include "evict.h"
#include "qtext.h"
#include "slots_int.h"

/*
 * slot_insert_locked
 *		Under the exclusive partition lock: find req's entry, or insert it if
 *		a place was reserved (*reserved, cleared when used), give it the text
 *		stored at *tdp if it has none (*tdp cleared when the entry owns it),
 *		pin it if req->pin.  Returns the entry, or NULL (counted as a loss),
 *		with res->dp and res->has_text set as ng_slot_get_entry says.
 */
static NgSharedEntry *
slot_insert_locked(NgSharedPartition *part, const NgEntryRequest *req,
				   NgEntryResult *res, dsa_pointer *tdp, bool *reserved)
{
	NgSharedEntry *entry;
	bool		found;

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	entry = ng_entry_lookup(part, req->key, req->hash, &res->dp);
	if (entry == NULL && *reserved)
	{
		NgEntryInsert ins = {
			.key = req->key,
			.hash = req->hash,
			.qtext = *tdp,
			.text_len = req->text_len,
			.encoding = GetDatabaseEncoding(),
		};

		res->dp = ng_entry_insert(part, &ins, &found);
		Assert(!found);
		if (DsaPointerIsValid(res->dp))
		{
			entry = dsa_get_address(ng_area, res->dp);
			ng_evict_usage_init(entry);
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
		ng_qtext_set_stored_at(entry->qtext, ng_qtext_stamp());
		entry->text_len = req->text_len;
		entry->encoding = GetDatabaseEncoding();
		entry->text_dropped = false;
		*tdp = InvalidDsaPointer;
	}
	else if (entry != NULL && !DsaPointerIsValid(entry->qtext) &&
			 req->qtext != NULL && !entry->text_dropped)
	{
		/* the text did not fit: counted once per statement */
		entry->text_dropped = true;
		ng_qtext_note_dropped();
	}
	if (entry != NULL)
	{
		if (req->pin)
			pg_atomic_fetch_add_u32(&entry->pins, 1);
		res->has_text = DsaPointerIsValid(entry->qtext);
	}
	return entry;
}

/*
 * The last time this backend could not make room for a new entry: the
 * table was full, a sweep found nothing to evict (every entry pinned by a
 * slot in use, or its partition busy) and none of its own slots was idle
 * (ng_slots_release_idle).  Room can come only from an entry losing its
 * last pin, which a fold does (ng_shared->folds moves), or from a partition
 * no longer busy; so until a slot is folded somewhere, or for at most the
 * maintenance interval, another sweep would find what this one found.
 */
static bool room_lacking = false;
static uint64 room_lacking_folds;
static TimestampTz room_lacking_at;

/*
 * ng_slot_room_lacking
 *		Did this backend fail to make room for a new entry less than the
 *		maintenance interval ago, with no slot folded anywhere since?  Then
 *		a new entry is not to be tried for now.  An atomic read, no lock.
 */
bool
ng_slot_room_lacking(void)
{
	return room_lacking &&
		pg_atomic_read_u64(&ng_shared->folds) == room_lacking_folds &&
		GetCurrentStatementStartTimestamp() - room_lacking_at <
		NG_MAINTENANCE_INTERVAL_MS * (TimestampTz) 1000;
}

/*
 * slot_make_room
 *		The table is full and a new entry is wanted: evict, and, if every
 *		entry is pinned, release this backend's idle slots and evict again,
 *		unless that failed lately (ng_slot_room_lacking).  True if room was
 *		reserved.  Never waits for a lock.
 */
static bool
slot_make_room(void)
{
	if (ng_slot_room_lacking())
		return false;
	if (ng_evict_make_room() && ng_entry_reserve())
		return true;
	if (ng_slots_release_idle(ngs_nslots / 2) > 0 &&
		ng_evict_make_room() && ng_entry_reserve())
		return true;
	/* read after this backend's own folds, which made no room */
	room_lacking_folds = pg_atomic_read_u64(&ng_shared->folds);
	room_lacking_at = GetCurrentStatementStartTimestamp();
	room_lacking = true;
	return false;
}

/*
 * slot_create_entry
 *		The rest of ng_slot_get_entry, when req's entry does not exist
 *		(exists is false) or has no text yet: create it, or give it
 *		req->qtext, under the exclusive partition lock, with everything
 *		prepared outside it.  When the table is full, a new entry must pass
 *		the admission filter first.
 */
static NgSharedEntry *
slot_create_entry(const NgEntryRequest *req, bool exists, NgEntryResult *res)
{
	NgSharedPartition *part = ng_partition(req->hash);
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
		/* the table is (nearly) full: refused unless seen before */
		if (admit_filtering() && !admit_key(req->key, req->ask))
		{
			res->refused = true;
			return NULL;
		}
		reserved = ng_entry_reserve() || slot_make_room();
		if (!reserved)
		{
			/* no room: the loss the insert below would have counted */
			ng_note_loss(NG_LOSS_TABLE_FULL, 1);
			ng_entry_prepared_release();	/* an evicted entry's memory */
			return NULL;
		}
	}
	if (req->qtext != NULL && (exists || reserved))
		tdp = ng_qtext_store(req->qtext, req->text_len);
	if (reserved)
		(void) ng_entry_prepare(part);

	if (req->wait)
		LWLockAcquire(part->lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(part->lock, LW_EXCLUSIVE))
	{
		ng_count_stat(&ng_shared->stats.lock_misses, 1);
		if (reserved)
			ng_entry_unreserve();
		if (DsaPointerIsValid(tdp))
			ng_qtext_free(tdp, req->text_len);
		ng_entry_prepared_release();
		return NULL;
	}

	entry = slot_insert_locked(part, req, res, &tdp, &reserved);
	LWLockRelease(part->lock);

	if (reserved)
		ng_entry_unreserve();
	if (DsaPointerIsValid(tdp))
		ng_qtext_free(tdp, req->text_len);
	ng_entry_prepared_release();
	return entry;
}

/*
 * ng_slot_get_entry
 *		Find or create the shared entry req asks for (NgEntryRequest) and
 *		return it pinned (if req->pin), or NULL if it cannot be had now;
 *		res (NgEntryResult) says its DSA pointer, whether it ends up with a
 *		text, and whether the admission filter refused a new one.
 *
 *		req->qtext (palloc'd, may be NULL) is stored if the entry has none.
 *		Without req->wait nothing here waits for a lock: a busy partition
 *		means "not now".  Caller holds no partition lock.
 */
NgSharedEntry *
ng_slot_get_entry(const NgEntryRequest *req, NgEntryResult *res)
{
	NgSharedPartition *part = ng_partition(req->hash);
	NgSharedEntry *entry;

	res->dp = InvalidDsaPointer;
	res->has_text = false;
	res->refused = false;

	/* The common case: it exists; pin it under the shared lock. */
	if (req->wait)
		LWLockAcquire(part->lock, LW_SHARED);
	else if (!LWLockConditionalAcquire(part->lock, LW_SHARED))
	{
		ng_count_stat(&ng_shared->stats.lock_misses, 1);
		return NULL;
	}
	entry = ng_entry_lookup(part, req->key, req->hash, &res->dp);
	if (entry != NULL && (DsaPointerIsValid(entry->qtext) ||
						  req->qtext == NULL || !ng_dsa_can_allocate()))
	{
		if (req->pin)
			pg_atomic_fetch_add_u32(&entry->pins, 1);
		res->has_text = DsaPointerIsValid(entry->qtext);
		LWLockRelease(part->lock);
		return entry;
	}
	LWLockRelease(part->lock);

	return slot_create_entry(req, entry != NULL, res);
}

/*
 * ng_slot_adopt_entry
 *		For an unbound slot with counts: make sure its key has an entry, so
 *		that folding the slot keeps the counts.  Returns true if the slot
 *		can be folded without loss (an entry exists, or there is nothing to
 *		keep), or if the admission filter refuses its key an entry: a slot
 *		that counted one execution while the table is full (its fold counts
 *		it in unadmitted_calls; an entry made meanwhile still takes it).
 *		With wait, waits for the partition lock (at exit).
 */
bool
ng_slot_adopt_entry(int i, bool wait)
{
	NgSlot	   *slot = slot_at(ngs_my_area, i);
	NgCounters *counts = &slot->counters;
	bool		recurred;
	NgEntryRequest req = {
		.key = &slot->key,
		.hash = ng_key_hash(&slot->key),
		.wait = wait,
	};
	NgEntryResult res;

	if (!ng_counters_any(counts))
		return true;
	recurred = counts->calls[NG_EXEC] + ng_counters_failed(counts) >= 2;
	if (!recurred && admit_filtering())
		return true;
	req.ask = recurred ? NG_ADMIT_GRANT : NG_ADMIT_ASK;
	return ng_slot_get_entry(&req, &res) != NULL;
}
