/*-------------------------------------------------------------------------
 *
 * measure.h
 *		What the hooks share (measure.c): the nesting level, a statement's
 *		key, the sampling decision, usage between snapshots, and counting a
 *		sample through the slots.
 *
 * Locks: callers hold none of ours.  ng_count never raises an error of
 * ours (slots.h's promise for ng_slots_count).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_MEASURE_H
#define NG_MEASURE_H

#include "access/parallel.h"
#include "executor/instrument.h"
#include "miscadmin.h"

#include "counters.h"
#include "guc.h"

/* nesting depth of planner, executor and utility calls; 0: top level */
extern int	ng_nesting_level;

/* how many of our utility hooks with a PG_TRY frame run (see measure.c) */
extern int	ng_utility_depth;

/* is a statement at this nesting level tracked? */
#define ng_enabled(level) \
	((ng_track == NG_TRACK_ALL || (ng_track == NG_TRACK_TOP && (level) == 0)) && \
	 !IsParallelWorker())

/* no WAL written between two snapshots (each field only grows) */
StaticAssertDecl(sizeof(WalUsage) == (3 + NG_HAVE_WAL_BUFFERS_FULL) * sizeof(int64),
				 "ng_walusage_equal compares every field of WalUsage");
static inline bool
ng_walusage_equal(const WalUsage *a, const WalUsage *b)
{
	return a->wal_records == b->wal_records && a->wal_fpi == b->wal_fpi &&
		a->wal_bytes == b->wal_bytes &&
		NG_WAL_BUFFERS_FULL(a) == NG_WAL_BUFFERS_FULL(b);
}

extern void ng_measure_init(void);
extern bool ng_sampled(void);

/* the key of a statement of queryid run now, at the current level */
static inline void
ng_make_key(NgKey *key, uint64 queryid)
{
	memset(key, 0, sizeof(NgKey));
	key->userid = GetUserId();
	key->dbid = MyDatabaseId;
	key->queryid = queryid;
	key->toplevel = (ng_nesting_level == 0);
}

extern void ng_count(uint64 queryid, const char *query, int location, int len,
					 bool utility, NgSample *sample);
extern void ng_usage_since(NgSample *sample, BufferUsage *bufusage,
						   const BufferUsage *bufusage_start,
						   WalUsage *walusage, const WalUsage *walusage_start);

#endif							/* NG_MEASURE_H */
