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
 * true: at parse and at exit).  Counting a sample straight into an entry
 * (a process without slots; a statement that recurs rarely) takes the
 * exclusive lock, that one conditionally.  The admission filter takes no
 * lock: plain 32-bit loads and stores of its cells in main shared memory.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "mb/pg_wchar.h"
#include "utils/timestamp.h"

#include "admit.h"
#include "alloc.h"
#include "counters_record.h"
#include "entry_hist.h"
#include "evict.h"
#include "plans.h"
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
		ng_qtext_set_stored_at(entry->qtext, ng_qtext_stamp());
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
		ng_qtext_note_dropped();
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
 *		The rest of slot_get_entry, when the entry does not exist (exists
 *		is false) or has no text yet: create it, or give it qtext, under the
 *		exclusive partition lock, with everything prepared outside it.  When
 *		the table is full, a new entry must pass the admission filter first.
 */
static NgSharedEntry *
slot_create_entry(const NgKey *key, uint32 hash, const char *qtext,
				  int text_len, bool exists, bool pin, bool wait,
				  NgAdmitAsk ask, dsa_pointer *dp, bool *has_text,
				  bool *refused)
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
		/* the table is (nearly) full: refused unless seen before */
		if (admit_filtering() && !admit_key(key, ask))
		{
			if (refused)
				*refused = true;
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
 * slot_get_entry
 *		Find or create the shared entry of key and return it pinned (if pin)
 *		with its DSA pointer, or NULL if it cannot be had now.
 *
 *		text (palloc'd, may be NULL) is stored if the entry has none.  With
 *		wait = false nothing here waits for a lock: a busy partition means
 *		"not now".  ask: who asks, for the admission filter (above).
 *		*has_text tells whether the entry ends up with a text.  *refused (if
 *		refused is not NULL) is set when the filter refused a new entry, and
 *		left alone otherwise.  Caller holds no partition lock.
 */
static NgSharedEntry *
slot_get_entry(const NgKey *key, uint32 hash, const char *qtext, int text_len,
			   bool pin, bool wait, NgAdmitAsk ask, dsa_pointer *dp,
			   bool *has_text, bool *refused)
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
							 pin, wait, ask, dp, has_text, refused);
}

/*
 * ng_slot_get_entry
 *		slot_get_entry for a parse: a new entry on a full table only for a
 *		key the admission filter has seen, and a refusal notes nothing (the
 *		statement's execution does).
 */
NgSharedEntry *
ng_slot_get_entry(const NgKey *key, uint32 hash, const char *qtext, int text_len,
				  bool pin, bool wait, dsa_pointer *dp, bool *has_text)
{
	return slot_get_entry(key, hash, qtext, text_len, pin, wait,
						  NG_ADMIT_ASK, dp, has_text, NULL);
}


/*
 * The key whose parse last found no entry and was refused one by the filter
 * (ng_slot_parse_refused), with ngs_use_clock then: its execution, if it
 * comes before any other statement is counted (a planning may be), asks the
 * filter without looking the entry up a second time.  An entry another
 * backend made in between was admitted, so the filter has seen the key
 * (then the execution looks as usual), or was made while the filter was off
 * (then it still is, most likely); a race past both only sends one
 * execution to unadmitted_calls instead of the entry.
 */
static NgKey refused_at_parse_key;
static bool refused_at_parse_set = false;
static uint64 refused_at_parse_clock;

/* did key's parse find no entry and was it refused, just now? */
static inline bool
refused_at_parse(const NgKey *key)
{
	return refused_at_parse_set &&
		ngs_use_clock - refused_at_parse_clock <= 1 &&
		ng_key_equal(&refused_at_parse_key, key);
}

/*
 * ng_slot_parse_refused
 *		For ng_slots_note_parse, of a statement whose text is not settled:
 *		true if the admission filter would refuse it a new entry and the
 *		parse has nothing to do (it makes no text): the statement has no
 *		constants (its text is stored at execution anyway), or its entry
 *		does not exist (asked under the shared partition lock, waiting for
 *		it as the parse does), or exists with a text.  False if the parse
 *		goes on as usual.  Notes what it learnt in le.
 */
bool
ng_slot_parse_refused(NgLocalEntry *le, const NgTextSource *src)
{
	dsa_pointer dp;
	bool		has_text = false;
	uint32		text_epoch;
	NgSharedEntry *entry;

	if (!admit_refuses(&le->key))
		return false;
	if (src->jstate == NULL || src->jstate->clocations_count == 0)
	{
		le->constants = NG_CONSTANTS_NONE;
		return true;
	}
	text_epoch = ng_partition(le->hash)->text_epoch;
	entry = ng_slot_get_entry(&le->key, le->hash, NULL, 0, false, true, &dp,
							  &has_text);
	if (entry != NULL && !has_text)
		return false;
	if (entry == NULL)
	{
		refused_at_parse_key = le->key;
		refused_at_parse_clock = ngs_use_clock;
		refused_at_parse_set = true;
	}
	le->constants = NG_CONSTANTS_SOME;
	if (entry != NULL)
		le->text_epoch = text_epoch;
	text_note(le, false, entry != NULL, has_text);
	return true;
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

/* does a parse carry a pin now? */
bool
ng_slot_carries_pin(void)
{
	return carried_entry != NULL;
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
 *		text unless the entry has one or can get none for now, or the
 *		admission filter would refuse a new one (which notes the key).
 *		*refused is set to whether the filter refused it: the entry does not
 *		exist (and, for an execution, the key was noted; a planning only
 *		asks).  The caller has read the partition's reset_epoch, then issued
 *		a read barrier; a reset marks an entry dead before it moves the
 *		epoch, so a carried entry removed before that read is seen dead and
 *		not taken: a slot bound with the new epoch never counts into it.
 */
NgSharedEntry *
ng_slot_bind_entry(NgLocalEntry *le, const NgTextSource *src, bool execution,
				   dsa_pointer *dp, bool *refused)
{
	NgSharedPartition *part = ng_partition(le->hash);
	int			text_len = 0;
	uint32		text_epoch = part->text_epoch;
	char	   *qtext = NULL;
	bool		has_text = false;
	bool		no_text = false;
	NgSharedEntry *entry;

	*refused = false;
	if (refused_at_parse(&le->key))
	{
		if (execution)
			refused_at_parse_set = false;	/* used up */
		if (admit_filtering() &&
			!admit_key(&le->key, execution ? NG_ADMIT_NOTE : NG_ADMIT_ASK))
		{
			*refused = true;
			return NULL;
		}
	}
	if (carried_entry != NULL)
	{
		/* not if a reset removed it since the parse (see above) */
		if (ng_key_equal(&carried_key, &le->key) &&
			text_settled(le, part) &&
			!((volatile NgSharedEntry *) carried_entry)->dead)
		{
			entry = carried_entry;
			*dp = carried_dp;
			carried_entry = NULL;
			return entry;
		}
		(void) ng_slot_drop_carried(false);
	}

	if (!text_settled(le, part))
	{
		/* no text for a new entry the filter would refuse */
		no_text = admit_refuses(&le->key);
		if (!no_text)
			qtext = ng_slot_text(le, src, &text_len);
	}
	entry = slot_get_entry(&le->key, le->hash, qtext, text_len, true, false,
						   execution ? NG_ADMIT_NOTE : NG_ADMIT_ASK, dp,
						   &has_text, refused);
	if (no_text && entry != NULL && !has_text)
	{
		/* it existed after all, without text: offer one (no pin) */
		dsa_pointer tdp;

		qtext = ng_slot_text(le, src, &text_len);
		if (qtext != NULL)
			(void) slot_get_entry(&le->key, le->hash, qtext, text_len, false,
								  false, NG_ADMIT_GRANT, &tdp, &has_text,
								  NULL);
	}
	if (qtext)
	{
		pfree(qtext);
		le->text_epoch = text_epoch;
	}
	text_note(le, qtext != NULL, entry != NULL, has_text);
	return entry;
}


/*
 * entry_record_locked
 *		Add sample to entry's counters and histogram, as a fold would.
 *		Caller holds the partition lock exclusively and, for a sample that
 *		has a bucket, a spare histogram group (the entry may need one).
 */
static void
entry_record_locked(NgSharedEntry *entry, const NgSample *sample)
{
	ng_counters_record(&entry->counters, sample);
	if (sample->failure == NG_SUCCEEDED)
		(void) ng_entry_hist_add(entry, sample->kind,
								 ng_hist_bucket(sample->time), 1);
	entry->counters.changed_generation =
		pg_atomic_read_u64(&ng_shared->change_generation);
	ng_evict_earn_usage(entry, 1);
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

	entry = slot_get_entry(&le->key, hash, qtext, text_len, false, true,
						   NG_ADMIT_GRANT, &dp, &has_text, NULL);
	if (qtext)
		pfree(qtext);
	(void) ng_hist_spares_fill(1 + NG_HIST_SPARES_KEPT);
	ng_plans_prepare(entry, sample->planid);	/* plan statistics */
	LWLockAcquire(part->lock, LW_EXCLUSIVE);
	if (entry != NULL)
		entry = ng_entry_lookup(part, &le->key, hash, &dp);
	if (entry != NULL)
	{
		(void) ng_plans_record_locked(entry, sample, true);
		entry_record_locked(entry, sample);
	}
	LWLockRelease(part->lock);
	ng_plans_prepared_release();
	if (entry == NULL)
		ng_note_loss(NG_LOSS_COUNTS, 1);
}

/*
 * ng_slot_count_into_entry
 *		Count a sample straight into le's shared entry, without a slot, if
 *		that can be done at once: the entry exists, its partition lock is
 *		free, and a spare histogram group is at hand should the sample's
 *		bucket need one.  Returns false, having changed nothing, otherwise.
 *		For a key this backend runs less often than its slots turn over
 *		(slots_count.c): one exclusive partition lock instead of the fold of
 *		the least recently used slot (that lock) and a bind (the lock
 *		shared, a pin).  Caller holds no lock of ours; nothing here waits or
 *		allocates.
 */
bool
ng_slot_count_into_entry(NgLocalEntry *le, const NgSample *sample)
{
	NgSharedPartition *part = ng_partition(le->hash);
	NgSharedEntry *entry;
	dsa_pointer dp;

	if (ng_hist_nspares == 0 ||
		!LWLockConditionalAcquire(part->lock, LW_EXCLUSIVE))
		return false;
	entry = ng_entry_lookup(part, &le->key, le->hash, &dp);
	/* plan statistics: a new plan is counted in a slot, which makes it */
	if (entry != NULL && !ng_plans_record_locked(entry, sample, false))
		entry = NULL;
	if (entry != NULL)
		entry_record_locked(entry, sample);
	LWLockRelease(part->lock);
	return entry != NULL;
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
	dsa_pointer dp;
	bool		has_text;

	if (!ng_counters_any(counts))
		return true;
	recurred = counts->calls[NG_EXEC] + ng_counters_failed(counts) >= 2;
	if (!recurred && admit_filtering())
		return true;
	return slot_get_entry(&slot->key, ng_key_hash(&slot->key), NULL, 0,
						  false, wait, recurred ? NG_ADMIT_GRANT : NG_ADMIT_ASK,
						  &dp, &has_text, NULL) != NULL;
}
