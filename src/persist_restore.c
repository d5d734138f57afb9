/*-------------------------------------------------------------------------
 *
 * persist_restore.c
 *		The table side of a restore: saved rows put into the shared table,
 *		merged with entries backends made before the keeper got to them,
 *		and the saved info figures added to those counted since the start.
 *
 * Why a file of its own: persist_read.c trusts nothing it reads and
 * validates our dump; persist_contrib.c does the same for contrib's file.
 * Both hand rows they validated to these functions, which know nothing of
 * files, only of the table.
 *
 * Locking: a row is inserted or merged with its partition lock held
 * exclusively, one partition at a time, and so are its failures by
 * SQLSTATE and its plan rows; allocations (the entry, its text, histogram
 * spares, a block of SQLSTATEs, a plan array and a plan text) are made
 * before the lock is taken.  The info figures
 * are added under ng_shared->mutex.  Callers hold no lock of ours.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "alloc.h"
#include "counters.h"
#include "entry_errors.h"
#include "entry_hist.h"
#include "evict.h"
#include "hist.h"
#include "history.h"
#include "persist_internal.h"
#include "plans.h"
#include "qtext.h"
#include "shmem.h"
#include "store.h"

/*
 * persist_restore_hist
 *		Add a saved histogram (groups for mask) to entry's.  Caller holds
 *		the partition lock exclusively, and has the spares it may need.
 */
static void
persist_restore_hist(NgSharedEntry *entry, uint32 mask, const uint64 *hist)
{
	NgHistView	view = {mask, hist};

	for (int kind = 0; kind < NG_NUM_KINDS; kind++)
		for (int b = 0; b < NG_HIST_BUCKETS; b++)
		{
			uint64		n = ng_hist_count(view, kind, b);

			if (n > 0)
				(void) ng_entry_hist_add(entry, kind, b, n);
		}
}

/*
 * The full-reset generation the server started with, and whether a full
 * reset has happened since: then the rest of the file is void (the reset
 * removed what was restored before it, and what it did not see must not
 * come back after it), and so are the saved info figures.
 */
static uint32 restore_stats_generation;
static bool restore_voided;

/*
 * persist_merge_entry
 *		Under the exclusive partition lock: a backend made the entry of a
 *		restored row before the keeper got to it; it now holds both periods'
 *		counts, since the earlier start, the usage of both, and the saved
 *		text (*tdp, then cleared) if it has none; if it has none and the
 *		saved one (saved_text) did not fit, that is counted once, as at a
 *		parse.
 */
static void
persist_merge_entry(NgSharedEntry *entry, const NgDumpEntry *de,
					dsa_pointer *tdp, bool saved_text)
{
	ng_counters_merge(&entry->counters, &de->counters);
	entry->stats_since = Min(entry->stats_since, de->stats_since);
	entry->minmax_stats_since = Min(entry->minmax_stats_since,
									de->minmax_stats_since);
	ng_evict_earn_usage(entry, de->usage);
	if (!DsaPointerIsValid(entry->qtext) && DsaPointerIsValid(*tdp))
	{
		entry->qtext = *tdp;
		entry->text_len = de->text_len;
		entry->encoding = de->encoding;
		ng_qtext_set_stored_at(entry->qtext, de->text_stored_at);
		entry->text_dropped = false;
		*tdp = InvalidDsaPointer;	/* the entry owns it */
	}
	else if (!DsaPointerIsValid(entry->qtext) && saved_text &&
			 !entry->text_dropped)
	{
		entry->text_dropped = true;
		ng_qtext_note_dropped();
	}
}

/*
 * ng_persist_restore_entry
 *		Put one saved entry into the table, merging with an entry a backend
 *		created meanwhile.  Returns false if there was no room, or if a full
 *		reset voided the rest of the restore (ng_persist_restore_voided).
 *		Caller: the keeper, between ng_persist_restore_begin and
 *		ng_persist_merge_stats, holding no lock of ours.
 */
bool
ng_persist_restore_entry(const NgDumpEntry *de, const uint64 *hist,
						 const char *qtext)
{
	uint32		hash = ng_key_hash(&de->key);
	NgSharedPartition *part = ng_partition(hash);
	dsa_pointer tdp = InvalidDsaPointer;
	dsa_pointer dp;
	NgSharedEntry *entry;
	bool		found = false;

	if (de->key.queryid == 0)
		return true;			/* padding of a dump that shrank */
	ng_entry_reserve_past_max();	/* the keeper evicts down to max next */
	if (qtext != NULL)
		tdp = ng_qtext_store(qtext, de->text_len);
	(void) ng_entry_prepare(part);
	(void) ng_hist_spares_fill(pg_popcount32(de->hist_mask) +
							   NG_HIST_SPARES_KEPT);

	LWLockAcquire(part->lock, LW_EXCLUSIVE);
	/* a full reset bumps the generation holding every partition lock */
	restore_voided = (ng_shared->stats_generation != restore_stats_generation);
	if (restore_voided)
		dp = InvalidDsaPointer;
	else
	{
		NgEntryInsert ins = {
			.key = &de->key,
			.hash = hash,
			.qtext = tdp,
			.text_len = de->text_len,
			.encoding = de->encoding,
		};

		dp = ng_entry_insert(part, &ins, &found);
	}
	if (DsaPointerIsValid(dp))
	{
		entry = dsa_get_address(ng_area, dp);
		persist_restore_hist(entry, de->hist_mask, hist);
		if (found)
			persist_merge_entry(entry, de, &tdp, qtext != NULL);
		else
		{
			/*
			 * changed_generation is kept: the previous run's generations are
			 * below this run's (setup.c), so a collector's token from before
			 * the restart still tells which entries changed after it.
			 */
			entry->counters = de->counters;
			ng_evict_usage_restore(entry, de->usage);
			entry->stats_since = de->stats_since;
			entry->minmax_stats_since = de->minmax_stats_since;
			if (DsaPointerIsValid(entry->qtext))
				ng_qtext_set_stored_at(entry->qtext, de->text_stored_at);
			else if (qtext != NULL)
			{
				/* the text did not fit: counted once, as at a parse */
				entry->text_dropped = true;
				ng_qtext_note_dropped();
			}
			tdp = InvalidDsaPointer;	/* the entry owns it */
		}
	}
	LWLockRelease(part->lock);
	ng_entry_prepared_release();

	if (DsaPointerIsValid(dp))
	{
		NgHistView	view = {de->hist_mask, hist};

		/* counted before this run: in no window of the history */
		ng_history_keeper_restored(&de->key, &de->counters, view);
	}
	if (!DsaPointerIsValid(dp) || found)
		ng_entry_unreserve();
	if (DsaPointerIsValid(tdp))
		ng_qtext_free(tdp, de->text_len);
	return DsaPointerIsValid(dp);
}

/*
 * ng_persist_restore_errors
 *		Add one saved entry's failures by SQLSTATE to its entry, restored
 *		before them (ng_persist_restore_entry), after the SQLSTATEs backends
 *		counted meanwhile (those the entry's block has no room for go to the
 *		row of the rest).  Those of an entry that is not in the table (not
 *		put back), or that get no block, are counted in sqlstates_lost,
 *		unless a full reset voided the restore.  Caller: the keeper, holding
 *		no lock of ours.
 */
void
ng_persist_restore_errors(const NgDumpErrors *de)
{
	uint32		hash = ng_key_hash(&de->key);
	NgSharedPartition *part = ng_partition(hash);
	dsa_pointer spare;
	dsa_pointer dp;
	NgSharedEntry *entry;
	int64		lost = 0;

	if (de->key.queryid == 0)
		return;					/* padding of a dump that shrank */
	spare = ng_dsa_allocate(sizeof(NgEntryErrors), 0);
	LWLockAcquire(part->lock, LW_EXCLUSIVE);
	restore_voided = (ng_shared->stats_generation != restore_stats_generation);
	entry = restore_voided ? NULL :
		ng_entry_lookup(part, &de->key, hash, &dp);
	for (int i = 0; i <= NG_ERROR_SQLSTATES && !restore_voided; i++)
	{
		if (de->counts[i].errors == 0)
			continue;
		if (entry == NULL ||
			!ng_entry_errors_add(part, entry, dp, &de->counts[i], &spare))
			lost += de->counts[i].errors;
	}
	LWLockRelease(part->lock);
	if (DsaPointerIsValid(spare))
		dsa_free(ng_area, spare);
	if (lost > 0)
		ng_entry_errors_lost(lost);
}

/*
 * ng_persist_restore_errors_lost
 *		Add the saved sqlstates_lost to what was counted since the start,
 *		unless a full reset voided the restore.
 */
void
ng_persist_restore_errors_lost(int64 lost)
{
	if (lost > 0 && ng_shared->stats_generation == restore_stats_generation)
		ng_entry_errors_lost(lost);
}

/* saved plan rows counted in "other" for want of a record, texts dropped */
static int64 restore_plans_folded;
static int64 restore_plan_texts_dropped;

/*
 * ng_persist_restore_plan
 *		Add one saved plan row (text: its text, or NULL) to its statement's
 *		plan array, restored before it (ng_persist_restore_entry): into its
 *		plan's record, or into "other" when plans_per_statement leaves it
 *		none (counted, for the LOG line of ng_persist_restore_plans_end).
 *		Its text is copied into DSA before the lock, within
 *		plan_text_memory; one that does not fit, or whose row went to
 *		"other", is counted in plan_texts_dropped.  A row whose statement is
 *		not in the table (not put back) is left out, as its statement is.
 *		Caller: the keeper, holding no lock of ours.
 */
void
ng_persist_restore_plan(const NgDumpPlan *dp, const char *text)
{
	uint32		hash = ng_key_hash(&dp->key);
	NgSharedPartition *part = ng_partition(hash);
	dsa_pointer tdp = InvalidDsaPointer;
	dsa_pointer edp;
	NgSharedEntry *entry;
	NgPlanRestore res = NG_PLAN_RESTORED_LOST;
	bool		text_lost = false;
	NgPlanRecord saved = {
		.planid = dp->planid,
		.calls = dp->calls,
		.total_time = dp->total_time,
		.min_time = dp->min_time >= 0 && dp->max_time >= 0 ? dp->min_time : -1,
		.max_time = dp->min_time >= 0 && dp->max_time >= 0 ? dp->max_time : -1,
		.rows = dp->rows,
		.first_seen = dp->first_seen,
		.last_seen = dp->last_seen,
		.text = InvalidDsaPointer,
		.text_len = dp->text_len,
		.encoding = dp->encoding,
	};

	if (text !=NULL)
	{
		tdp = ng_plans_text_restore(text, dp->text_len);
		text_lost = !DsaPointerIsValid(tdp);
	}
	ng_plans_prepare(NULL, 1);	/* a plan array at hand, if none is */
	LWLockAcquire(part->lock, LW_EXCLUSIVE);
	restore_voided = (ng_shared->stats_generation != restore_stats_generation);
	entry = restore_voided ? NULL :
		ng_entry_lookup(part, &dp->key, hash, &edp);
	if (entry != NULL)
		res = ng_plans_restore_locked(entry, &saved, dp->planid == 0, &tdp);
	LWLockRelease(part->lock);
	if (DsaPointerIsValid(tdp))
	{
		/* not taken: its row went to "other", or its record had one */
		text_lost = (res != NG_PLAN_RESTORED_OWN);
		ng_plans_text_release(tdp, dp->text_len);
	}
	if (res == NG_PLAN_RESTORED_FOLDED)
		restore_plans_folded++;
	if (text_lost && entry != NULL)
	{
		restore_plan_texts_dropped++;
		pg_atomic_fetch_add_u64(&ng_shared->plan_texts_dropped, 1);
	}
}

/*
 * ng_persist_restore_plans_end
 *		After the plan rows: add the saved plan info figures to those
 *		counted since the start, unless a full reset voided the restore;
 *		say in one LOG line what the
 *		current plans_per_statement and plan_text_memory left out.
 */
void
ng_persist_restore_plans_end(const NgDumpPlansHead *head)
{
	if (ng_shared->stats_generation != restore_stats_generation)
		return;
	pg_atomic_fetch_add_u64(&ng_shared->plan_texts_dropped,
							(uint64) head->plan_texts_dropped);
	pg_atomic_fetch_add_u64(&ng_shared->plan_calls_lost,
							(uint64) head->plan_calls_lost);
	if (restore_plans_folded > 0 || restore_plan_texts_dropped > 0)
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: restored plan statistics: " INT64_FORMAT " saved plans beyond plans_per_statement = %d counted in their statement's \"other\" row, " INT64_FORMAT " saved plan texts not kept (plan_texts_dropped)",
						restore_plans_folded, ng_plans_per_statement,
						restore_plan_texts_dropped)));
}

/* start a restore: as shared memory was made, a full reset since voids it */
void
ng_persist_restore_begin(void)
{
	restore_stats_generation = 0;
	restore_voided = false;
	restore_plans_folded = 0;
	restore_plan_texts_dropped = 0;
}

/* has a full reset voided what is left of the restore? */
bool
ng_persist_restore_voided(void)
{
	return restore_voided;
}

/*
 * ng_persist_merge_stats
 *		Add the saved info figures to those counted since the start (backends
 *		may have evicted, dropped or refused before the keeper got here), so
 *		that every loss stays counted.  The reset time is the saved one: the
 *		figures now count from it.
 */
void
ng_persist_merge_stats(const NgSharedStats *saved)
{
	NgSharedStats *st = &ng_shared->stats;

	SpinLockAcquire(&ng_shared->mutex);
	if (ng_shared->stats_generation != restore_stats_generation)
	{
		/* a full reset since the restore began: the figures start from it */
		restore_voided = true;
		SpinLockRelease(&ng_shared->mutex);
		return;
	}
	st->dealloc += saved->dealloc;
	st->evicted_calls += saved->evicted_calls;
	st->evicted_exec_time += saved->evicted_exec_time;
	st->last_eviction_time = Max(st->last_eviction_time,
								 saved->last_eviction_time);
	st->texts_dropped += saved->texts_dropped;
	st->entries_refused += saved->entries_refused;
	st->counts_discarded += saved->counts_discarded;
	st->unadmitted_calls += saved->unadmitted_calls;
	st->lock_misses += saved->lock_misses;
	st->dsa_failures += saved->dsa_failures;
	st->admissions_refused += saved->admissions_refused;
	st->stats_reset = saved->stats_reset;
	SpinLockRelease(&ng_shared->mutex);
}
