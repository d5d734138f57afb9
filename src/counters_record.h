/*-------------------------------------------------------------------------
 *
 * counters_record.h
 *		ng_counters_record: adding one sample to a set of counters, inline,
 *		for the hot path that counts in a backend's own slot (slots/count.c)
 *		and for a count straight into an entry (slots/direct.c); and
 *		ng_counters_record_plain, the whole of a plain sample without a
 *		call.  What few samples have (a failure, I/O times, WAL, JIT,
 *		parallel workers) is counters.c's, out of line.
 *
 * Why a header of its own: counters.c, which the inline code calls, does
 * not use it.  Same contract as counters.h: no lock, no shared state; the
 * caller holds whatever protects the counters it passes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_COUNTERS_RECORD_H
#define NG_COUNTERS_RECORD_H

#include "counters.h"

#pragma GCC visibility push(hidden)

/*
 * ng_counters_record_time
 *		The duration of a successful sample of kind k: calls, mean and
 *		variance (Welford), min/max.  Its histogram bucket is the caller's
 *		to count (hist.h).
 */
static inline void
ng_counters_record_time(NgCounters *c, int k, double t)
{
	double		old_mean = c->mean_time[k];
	bool		had_minmax = ng_counters_has_minmax(c, k);

	c->calls[k] += 1;
	c->total_time[k] += t;
	c->mean_time[k] += (t - old_mean) / c->calls[k];
	c->sum_var_time[k] += (t - old_mean) * (t - c->mean_time[k]);

	if (!had_minmax)
	{
		/* durations are never negative: -1 would mean "none" */
		c->min_time[k] = Max(t, 0.0);
		c->max_time[k] = Max(t, 0.0);
	}
	else
	{
		if (t < c->min_time[k])
			c->min_time[k] = Max(t, 0.0);
		if (t > c->max_time[k])
			c->max_time[k] = t;
	}
}

/*
 * ng_counters_record_blocks_since
 *		The block counts between two snapshots of pgBufferUsage.  The local
 *		and temporary ones, zero for most statements, are added only when
 *		one is not: a count straight into a shared entry then leaves their
 *		cache line alone (entry.h, NgSharedEntry's layout).
 */
static pg_attribute_always_inline void
ng_counters_record_blocks_since(NgCounters *c, const BufferUsage *end,
								const BufferUsage *start)
{
	c->shared_blks_hit += end->shared_blks_hit - start->shared_blks_hit;
	c->shared_blks_read += end->shared_blks_read - start->shared_blks_read;
	c->shared_blks_dirtied += end->shared_blks_dirtied - start->shared_blks_dirtied;
	c->shared_blks_written += end->shared_blks_written - start->shared_blks_written;
	if (((end->local_blks_hit ^ start->local_blks_hit) |
		 (end->local_blks_read ^ start->local_blks_read) |
		 (end->local_blks_dirtied ^ start->local_blks_dirtied) |
		 (end->local_blks_written ^ start->local_blks_written) |
		 (end->temp_blks_read ^ start->temp_blks_read) |
		 (end->temp_blks_written ^ start->temp_blks_written)) == 0)
		return;
	c->local_blks_hit += end->local_blks_hit - start->local_blks_hit;
	c->local_blks_read += end->local_blks_read - start->local_blks_read;
	c->local_blks_dirtied += end->local_blks_dirtied - start->local_blks_dirtied;
	c->local_blks_written += end->local_blks_written - start->local_blks_written;
	c->temp_blks_read += end->temp_blks_read - start->temp_blks_read;
	c->temp_blks_written += end->temp_blks_written - start->temp_blks_written;
}

/*
 * ng_sample_is_plain
 *		Does adding s need none of counters.c's out-of-line code: a success,
 *		without WAL, JIT or parallel workers, whose buffer usage, if any, is
 *		a pair of snapshots with no I/O time between them?  The usual
 *		sample, which ng_counters_record_plain adds, inline and whole.
 */
static inline bool
ng_sample_is_plain(const NgSample *s)
{
	if (s->failure != NG_SUCCEEDED || s->walusage != NULL ||
		s->jitusage != NULL ||
		(s->parallel_workers_to_launch | s->parallel_workers_launched) != 0)
		return false;
	if (s->bufusage_base != NULL)
		return ng_bufusage_times_equal(s->bufusage, s->bufusage_base);
	return s->bufusage == NULL;
}

/*
 * ng_counters_record_plain
 *		Add a successful sample to c: its time, rows and block counts (those
 *		of a pair of snapshots; a sample with any other usage has the rest
 *		added by ng_counters_record).  No call: all of a plain sample
 *		(ng_sample_is_plain).
 */
static pg_attribute_always_inline void
ng_counters_record_plain(NgCounters *c, const NgSample *s)
{
	c->last_executed_at = Max(c->last_executed_at, s->started_at);
	ng_counters_record_time(c, s->kind, s->time);
	if (s->kind == NG_EXEC)
		c->rows += s->rows;
	if (s->bufusage_base != NULL)
		ng_counters_record_blocks_since(c, s->bufusage, s->bufusage_base);
}

/*
 * ng_counters_record
 *		Add one planning or execution sample to c.  Usage that is all zero
 *		(a sample that touched no block and wrote no WAL) adds nothing, and
 *		is skipped.  Inline, for the slot a backend counts in; what few
 *		samples have is out of line (counters.c).
 */
static pg_attribute_always_inline void
ng_counters_record(NgCounters *c, const NgSample *s)
{
	if (unlikely(s->failure != NG_SUCCEEDED))
	{
		c->last_executed_at = Max(c->last_executed_at, s->started_at);
		ng_counters_record_failure(c, s);
		return;
	}
	ng_counters_record_plain(c, s);
	if (s->bufusage_base)
	{
		/* the I/O times too, when some were timed */
		if (unlikely(!ng_bufusage_times_equal(s->bufusage, s->bufusage_base)))
			ng_counters_record_io_times_since(c, s->bufusage,
											  s->bufusage_base);
	}
	else if (s->bufusage)
		ng_counters_record_bufusage(c, s->bufusage);
	if (unlikely(s->walusage != NULL || s->jitusage != NULL ||
				 (s->parallel_workers_to_launch |
				  s->parallel_workers_launched) != 0))
		ng_counters_record_rest(c, s);
}

#pragma GCC visibility pop

#endif							/* NG_COUNTERS_RECORD_H */
