/*-------------------------------------------------------------------------
 *
 * bind.c
 *		Binding a slot of this backend to a statement: the statement's
 *		entry (the pin its parse carried, or one found or created, with the
 *		text offered), a slot for it (victim.c), and the binding recorded in
 *		the slot.
 *
 * Why a file of its own: binding is the step between a statement's entry
 * (entry.c) and counting in a slot (count.c), which comes here only when a
 * statement has no slot yet or its entry was removed; counts move between
 * a slot and the shared table in fold.c.  The pin a parse carries to its
 * execution is kept here, as binding is what takes it.  slots_int.h
 * describes the whole slot protocol.
 *
 * Locking.  Binding waits for no lock: the entry is had through entry.c
 * without waiting, a victim released by fold.c without waiting but for
 * the last resort of slot_find_victim (victim.c).  Pins are atomic
 * counters changed under the partition lock (any mode); dropping a carried
 * pin takes the lock exclusively (waiting only at parse and at exit), and
 * the last unpin of an entry a reset removed frees it.  The slot is
 * written in its write section (slots_int.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "admit.h"
#include "alloc.h"
#include "entry_hist.h"
#include "slots_int.h"

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
	NgEntryRequest req = {
		.key = &le->key,
		.hash = le->hash,
		.pin = true,
		.ask = execution ? NG_ADMIT_NOTE : NG_ADMIT_ASK,
	};
	NgEntryResult res;
	bool		no_text = false;
	NgSharedEntry *entry;

	*refused = false;
	if (ng_slot_refused_since_parse(le, execution))
	{
		*refused = true;
		return NULL;
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
	req.qtext = qtext;
	req.text_len = text_len;
	entry = ng_slot_get_entry(&req, &res);
	*dp = res.dp;
	*refused = res.refused;
	if (no_text && entry != NULL && !res.has_text)
	{
		/* it existed after all, without text: offer one (no pin) */
		NgEntryRequest offer = {
			.key = &le->key,
			.hash = le->hash,
			.ask = NG_ADMIT_GRANT,
		};

		qtext = ng_slot_text(le, src, &text_len);
		offer.qtext = qtext;
		offer.text_len = text_len;
		if (qtext != NULL)
			(void) ng_slot_get_entry(&offer, &res);
	}
	if (qtext)
	{
		pfree(qtext);
		le->text_epoch = text_epoch;
	}
	text_note(le, qtext != NULL, entry, res.has_text);
	return entry;
}

/*
 * ng_slot_bind
 *		Give key a slot of mine, bound to its shared entry if that can be had
 *		without waiting.  Returns the slot index; or -1, taking no slot, when
 *		the admission filter refused the key an entry (entry.c): the
 *		caller counts the sample as unadmitted, as the slot's fold would
 *		have, without the slot's bind and fold.  An execution's refusal
 *		notes the key in the filter; a planning's only asks (the execution
 *		that follows must not count as a second sighting).
 */
int
ng_slot_bind(NgLocalEntry *le, const NgTextSource *src, bool execution)
{
	int			i;
	NgSlot	   *slot;
	uint32		hash = le->hash;
	NgSharedPartition *part = ng_partition(hash);
	dsa_pointer dp = InvalidDsaPointer;
	uint32		reset_epoch;
	NgSharedEntry *entry;
	bool		refused;

	/*
	 * Spare histogram groups for the folds of this slot and the others, made
	 * now, when a new statement may allocate anyway: the folds at exit cannot
	 * (fold.c).
	 */
	(void) ng_hist_spares_fill(NG_HIST_SPARES_KEPT);

	/*
	 * The entry before the slot: a refused key needs no slot.  The epoch
	 * before the entry: a reset after this read moves it.
	 */
	reset_epoch = part->reset_epoch;
	pg_read_barrier();
	entry = ng_slot_bind_entry(le, src, execution, &dp, &refused);
	if (refused)
		return -1;

	i = ng_slot_find_free();
	slot = slot_at(ngs_my_area, i);
	slot_partition_take(ng_partition_of_hash(hash));
	slot_begin_write(slot);
	slot->in_use = true;
	slot->key = le->key;
	slot->partition = ng_partition_of_hash(hash);
	slot->entry = entry ? dp : InvalidDsaPointer;
	slot->minmax_generation = entry ? entry->minmax_generation : 0;
	slot->partition_generation = part->generation;
	/* a free slot's counters are zero, its cells none (slot_fold_locked) */
	ngs_my_area->partition_of[i] = slot->partition;
	slot_end_write(slot);

	ngs_local_slots[i].in_use = true;
	ngs_nfree--;
	Assert(ngs_nfree >= 0);
	ngs_local_slots[i].key = le->key;
	ngs_local_slots[i].entry = entry;
	ngs_local_slots[i].used = false;
	ngs_local_slots[i].reset_epoch = reset_epoch;
	le->slot = i;
	return i;
}
