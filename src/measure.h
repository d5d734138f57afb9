/*-------------------------------------------------------------------------
 *
 * measure.h
 *		What the hooks share: the nesting level and the sampling decision
 *		(measure.c); a statement's key, usage between snapshots and counting
 *		a sample through the slots (inline here: every count of the hot
 *		path goes through them).
 *
 * Locks: callers hold none of ours.  ng_count never raises an error of
 * ours (slots.h's promise for ng_slots_count).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_MEASURE_H
#define NG_MEASURE_H

#include "access/xact.h"
#include "executor/instrument.h"
#include "miscadmin.h"

#include "alloc.h"
#include "counters.h"
#include "failures.h"
#include "guc.h"
#include "slots/slots.h"

#pragma GCC visibility push(hidden)

/* nesting depth of planner, executor and utility calls; 0: top level */
extern int	ng_nesting_level;

/* how many of our utility hooks with a PG_TRY frame run (see measure.c) */
extern int	ng_utility_depth;

/*
 * is a statement at this nesting level tracked?  (In a parallel worker too:
 * there, nothing gets past ng_slots_attach, so nothing is counted.)
 */
#define ng_enabled(level) \
	((level) < ng_track_depth)

/*
 * ng_walusage_equal
 *		No WAL usage between two snapshots of pgWalUsage, told by its record
 *		count alone.  Core moves the other fields only in the call that
 *		inserts a record and counts it (XLogInsertRecord): the bytes and
 *		full-page images with the count; wal_buffers_full (18) earlier in
 *		that call, where the insertion writes out a full WAL buffer
 *		(AdvanceXLInsertBuffer, which a backend reaches only from there: the
 *		walwriter's opportunistic call writes nothing), within the insertion's
 *		critical section or steps that fail only with a PANIC.  A snapshot is
 *		never taken inside that call, so between two snapshots either the
 *		record count moved or nothing did.  The assertion stops the build
 *		when WalUsage gains a field, for this to be checked again.
 */
StaticAssertDecl(sizeof(WalUsage) == (3 + NG_HAVE_WAL_BUFFERS_FULL) * sizeof(int64),
				 "ng_walusage_equal knows every field of WalUsage");
static inline bool
ng_walusage_equal(const WalUsage *a, const WalUsage *b)
{
	return a->wal_records == b->wal_records;
}

extern void ng_measure_subxact_start(void);
extern int	ng_level_after_subxact_abort(void);
extern bool ng_sampled_decide(void);

/*
 * ng_sampled
 *		Is the current top-level statement counted?  Always, at the default
 *		sample_rate of 1, without a call; else ng_sampled_decide.
 */
static inline bool
ng_sampled(void)
{
	if (likely(ng_sample_rate >= 1.0))
		return true;
	return ng_sampled_decide();
}

/*
 * the key of a statement of queryid run now, at the current level (its
 * padding left as it is: see NgKey)
 */
static inline void
ng_make_key(NgKey *key, uint64 queryid)
{
	ng_key_set(key, queryid, ng_nesting_level == 0);
}

/*
 * ng_count
 *		Count a measured sample of the statement of queryid (its text at
 *		query, location, len) through this backend's slots, if the current
 *		top-level statement is sampled; then the maintenance that is due,
 *		and the log of losses.  Inline: every hook's count comes here.
 */
static inline void
ng_count(uint64 queryid, const char *query, int location, int len,
		 bool utility, NgSample *sample)
{
	NgKey		key;
	NgTextSource src;

	ng_failures_flush();
	if (!ng_sampled())
		return;
	sample->started_at = GetCurrentStatementStartTimestamp();
	ng_make_key(&key, queryid);
	src.query = query;
	src.location = location;
	src.len = len;
	src.jstate = NULL;
	src.utility = utility;
	ng_slots_count(&key, sample, &src);
	if (ng_nesting_level == 0)
		ng_slots_maintenance_if_due(sample->started_at);
	ng_log_losses();
}

/*
 * ng_usage_since
 *		Point sample at the buffer and WAL usage since the snapshots, diffed
 *		into *bufusage and *walusage; or at none when nothing changed (the
 *		usual case of a statement that touches no block: no diff to make).
 */
static inline void
ng_usage_since(NgSample *sample, BufferUsage *bufusage,
			   const BufferUsage *bufusage_start, WalUsage *walusage,
			   const WalUsage *walusage_start)
{
	if (memcmp(&pgBufferUsage, bufusage_start, sizeof(BufferUsage)) != 0)
	{
		memset(bufusage, 0, sizeof(BufferUsage));
		BufferUsageAccumDiff(bufusage, &pgBufferUsage, bufusage_start);
		sample->bufusage = bufusage;
	}
	if (!ng_walusage_equal(&pgWalUsage, walusage_start))
	{
		memset(walusage, 0, sizeof(WalUsage));
		WalUsageAccumDiff(walusage, &pgWalUsage, walusage_start);
		sample->walusage = walusage;
	}
}

#pragma GCC visibility pop

#endif							/* NG_MEASURE_H */
