/*-------------------------------------------------------------------------
 *
 * direct.c
 *		Counting a sample straight into its shared entry, without a slot:
 *		for a process that has no slot area, and for a statement this
 *		backend runs less often than its slots turn over.
 *
 * Why a file of its own: these are the two ways a count bypasses the
 * slots, each adding the sample to the entry as a fold would (fold.c adds
 * a slot's counts); count.c chooses them.  slots_int.h describes the whole
 * slot protocol.
 *
 * Locking.  The sample is added under the entry's partition lock held
 * exclusively: waited for by a process without slots (such processes do
 * not run user queries), taken only if free for a rarely recurring
 * statement (busy, it takes a slot instead).  The entry is found, or made,
 * by entry.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "alloc.h"
#include "counters_record.h"
#include "entry_hist.h"
#include "evict.h"
#include "plans.h"
#include "slots_int.h"

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
	NgEntryRequest req = {
		.key = &le->key,
		.hash = hash,
		.qtext = qtext,
		.text_len = text_len,
		.wait = true,
		.ask = NG_ADMIT_GRANT,
	};
	NgEntryResult res;
	NgSharedEntry *entry;

	entry = ng_slot_get_entry(&req, &res);
	if (qtext)
		pfree(qtext);
	(void) ng_hist_spares_fill(1 + NG_HIST_SPARES_KEPT);
	ng_plans_prepare(entry, sample->planid);	/* plan statistics */
	LWLockAcquire(part->lock, LW_EXCLUSIVE);
	if (entry != NULL)
		entry = ng_entry_lookup(part, &le->key, hash, &res.dp);
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
 *		(count.c): one exclusive partition lock instead of the fold of
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
