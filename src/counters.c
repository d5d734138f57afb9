/*-------------------------------------------------------------------------
 *
 * counters.c
 *		Arithmetic on NgCounters: recording one sample and merging two sets.
 *
 * Why a file of its own: the same counters accumulate in a backend's slot,
 * in a shared entry and in a reader's result, and must combine exactly.
 * Means and variances are kept as (n, mean, sum of squared deviations):
 * Welford's update for one sample, and Chan et al.'s parallel formula to
 * merge two sets, which gives the same mean and variance as if every sample
 * had been recorded in one place.
 *
 * No locking here: callers own the memory they pass (see slots/count.c,
 * slots/fold.c, store.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "jit/jit.h"

#include "counters.h"

/*
 * ng_counters_record_failure
 *		A failed execution: not a call (pg_stat_statements counts successful
 *		ones only), counted by cause with its time.
 */
void
ng_counters_record_failure(NgCounters *c, const NgSample *s)
{
	if (s->failure == NG_FAILED_TIMEOUT)
		c->failed_timeouts++;
	else if (s->failure == NG_FAILED_CANCEL)
		c->failed_cancels++;
	else
		c->failed_errors++;
	c->failed_time += s->time;
}

/*
 * ng_bufusage_blocks_zero
 *		No block touched: no block count to add (SELECT 1).
 */
static inline bool
ng_bufusage_blocks_zero(const BufferUsage *bu)
{
	return (bu->shared_blks_hit | bu->shared_blks_read |
			bu->shared_blks_dirtied | bu->shared_blks_written |
			bu->local_blks_hit | bu->local_blks_read |
			bu->local_blks_dirtied | bu->local_blks_written |
			bu->temp_blks_read | bu->temp_blks_written) == 0;
}

/*
 * ng_bufusage_times_zero
 *		No I/O time: always so without track_io_timing, which spares the
 *		six conversions to milliseconds.  Each time is zero when all its
 *		bytes are (an int64, or before 16 a struct timespec).
 */
static inline bool
ng_bufusage_times_zero(const BufferUsage *bu)
{
	static const BufferUsage zero;

	return ng_bufusage_times_equal(bu, &zero);
}

static void
ng_counters_record_io_times(NgCounters *c, const BufferUsage *bu)
{
	c->shared_blk_read_time += INSTR_TIME_GET_MILLISEC(NG_SHARED_BLK_READ_TIME(bu));
	c->shared_blk_write_time += INSTR_TIME_GET_MILLISEC(NG_SHARED_BLK_WRITE_TIME(bu));
	c->local_blk_read_time += NG_LOCAL_BLK_READ_TIME(bu);
	c->local_blk_write_time += NG_LOCAL_BLK_WRITE_TIME(bu);
	c->temp_blk_read_time += INSTR_TIME_GET_MILLISEC(bu->temp_blk_read_time);
	c->temp_blk_write_time += INSTR_TIME_GET_MILLISEC(bu->temp_blk_write_time);
}

void
ng_counters_record_bufusage(NgCounters *c, const BufferUsage *bu)
{
	if (!ng_bufusage_blocks_zero(bu))
	{
		c->shared_blks_hit += bu->shared_blks_hit;
		c->shared_blks_read += bu->shared_blks_read;
		c->shared_blks_dirtied += bu->shared_blks_dirtied;
		c->shared_blks_written += bu->shared_blks_written;
		c->local_blks_hit += bu->local_blks_hit;
		c->local_blks_read += bu->local_blks_read;
		c->local_blks_dirtied += bu->local_blks_dirtied;
		c->local_blks_written += bu->local_blks_written;
		c->temp_blks_read += bu->temp_blks_read;
		c->temp_blks_written += bu->temp_blks_written;
	}
	if (!ng_bufusage_times_zero(bu))
		ng_counters_record_io_times(c, bu);
}

/*
 * ng_counters_record_io_times_since
 *		The I/O times between two snapshots of pgBufferUsage (some were
 *		timed), converted through BufferUsageAccumDiff as totaltime's are.
 */
void
ng_counters_record_io_times_since(NgCounters *c, const BufferUsage *end,
								  const BufferUsage *start)
{
	BufferUsage diff;

	memset(&diff, 0, sizeof(diff));
	BufferUsageAccumDiff(&diff, end, start);
	ng_counters_record_io_times(c, &diff);
}

static void
ng_counters_record_jit(NgCounters *c, const JitInstrumentation *ji)
{
	c->jit_functions += ji->created_functions;
	c->jit_generation_time += INSTR_TIME_GET_MILLISEC(ji->generation_counter);
	if (INSTR_TIME_GET_MILLISEC(ji->inlining_counter))
		c->jit_inlining_count++;
	c->jit_inlining_time += INSTR_TIME_GET_MILLISEC(ji->inlining_counter);
	if (INSTR_TIME_GET_MILLISEC(ji->optimization_counter))
		c->jit_optimization_count++;
	c->jit_optimization_time += INSTR_TIME_GET_MILLISEC(ji->optimization_counter);
	if (INSTR_TIME_GET_MILLISEC(ji->emission_counter))
		c->jit_emission_count++;
	c->jit_emission_time += INSTR_TIME_GET_MILLISEC(ji->emission_counter);
	if (NG_JIT_DEFORM_TIME(ji))
		c->jit_deform_count++;
	c->jit_deform_time += NG_JIT_DEFORM_TIME(ji);
}

/*
 * ng_counters_record_rest
 *		The part of ng_counters_record (counters_record.h) that few samples
 *		have: WAL written, JIT, parallel workers.
 */
void
ng_counters_record_rest(NgCounters *c, const NgSample *s)
{
	if (s->walusage &&
		(s->walusage->wal_records | s->walusage->wal_fpi |
		 (int64) s->walusage->wal_bytes | NG_WAL_BUFFERS_FULL(s->walusage)) != 0)
	{
		c->wal_records += s->walusage->wal_records;
		c->wal_fpi += s->walusage->wal_fpi;
		c->wal_bytes += s->walusage->wal_bytes;
		c->wal_buffers_full += NG_WAL_BUFFERS_FULL(s->walusage);
	}
	if (s->jitusage)
		ng_counters_record_jit(c, s->jitusage);
	c->parallel_workers_to_launch += s->parallel_workers_to_launch;
	c->parallel_workers_launched += s->parallel_workers_launched;
}

/*
 * ng_counters_merge_kind
 *		The counts of one kind (planning or execution): calls, mean and
 *		variance, min and max.
 */
static inline void
ng_counters_merge_kind(NgCounters *dst, const NgCounters *src, int k)
{
	int64		na = dst->calls[k];
	int64		nb = src->calls[k];
	bool		dst_minmax = ng_counters_has_minmax(dst, k);
	bool		src_minmax = ng_counters_has_minmax(src, k);

	if (nb > 0)
	{
		double		n = (double) (na + nb);
		double		delta = src->mean_time[k] - dst->mean_time[k];

		/* Chan et al.: combine means and sums of squared deviations */
		dst->sum_var_time[k] += src->sum_var_time[k] +
			delta * delta * ((double) na * (double) nb / n);
		dst->mean_time[k] += delta * ((double) nb / n);
		dst->calls[k] = na + nb;
		dst->total_time[k] += src->total_time[k];
	}
	if (src_minmax && dst_minmax)
	{
		dst->min_time[k] = Min(dst->min_time[k], src->min_time[k]);
		dst->max_time[k] = Max(dst->max_time[k], src->max_time[k]);
	}
	else if (src_minmax)
	{
		dst->min_time[k] = src->min_time[k];
		dst->max_time[k] = src->max_time[k];
	}
	else if (!dst_minmax)
	{
		/* neither has any: keep it so now that dst may have calls */
		dst->min_time[k] = -1;
		dst->max_time[k] = -1;
	}
}

/* an F row of columns.h: its member added (SUM) or the later kept (MAX) */
#define NG_MERGE_SUM(m)	dst->m += src->m;
#define NG_MERGE_MAX(m)	dst->m = Max(dst->m, src->m);
#define NG_MERGE_F(column, form, first, last, ctype, member, merge, recorded, filled) \
	NG_MERGE_##merge(member)

/*
 * ng_counters_merge
 *		dst += src, as if src's samples had been recorded into dst: the
 *		kinds' counts (K rows of columns.h), then each counter (F rows) as
 *		its row says.
 */
void
ng_counters_merge(NgCounters *dst, const NgCounters *src)
{
	for (int k = 0; k < NG_NUM_KINDS; k++)
		ng_counters_merge_kind(dst, src, k);

	NG_COLUMNS(NG_COL_NONE, NG_MERGE_F, NG_COL_NONE);
}

/*
 * ng_counters_clear_minmax
 *		Forget min and max (a min/max reset); the next sample sets both.
 */
void
ng_counters_clear_minmax(NgCounters *c)
{
	for (int k = 0; k < NG_NUM_KINDS; k++)
	{
		c->min_time[k] = -1;
		c->max_time[k] = -1;
	}
}

/*
 * ng_counters_unrecord
 *		Take sample s back from c, the counts of a slot that a reset voided
 *		while s was being added (slots/count.c): only the counts the history
 *		keeps of a voided slot (history_capture.c), which nothing else reads,
 *		not min/max, mean and variance, I/O times, WAL, JIT.
 */
void
ng_counters_unrecord(NgCounters *c, const NgSample *s)
{
	const BufferUsage *end = s->bufusage;
	const BufferUsage *start = s->bufusage_base;

	if (s->failure != NG_SUCCEEDED)
	{
		if (s->failure == NG_FAILED_TIMEOUT)
			c->failed_timeouts--;
		else if (s->failure == NG_FAILED_CANCEL)
			c->failed_cancels--;
		else
			c->failed_errors--;
		c->failed_time -= s->time;
		return;
	}
	c->calls[s->kind]--;
	c->total_time[s->kind] -= s->time;
	if (s->kind == NG_EXEC)
		c->rows -= s->rows;
	if (start == NULL)
		return;
	c->shared_blks_hit -= end->shared_blks_hit - start->shared_blks_hit;
	c->shared_blks_read -= end->shared_blks_read - start->shared_blks_read;
	c->shared_blks_dirtied -= end->shared_blks_dirtied - start->shared_blks_dirtied;
	c->shared_blks_written -= end->shared_blks_written - start->shared_blks_written;
	c->local_blks_hit -= end->local_blks_hit - start->local_blks_hit;
	c->local_blks_read -= end->local_blks_read - start->local_blks_read;
	c->local_blks_dirtied -= end->local_blks_dirtied - start->local_blks_dirtied;
	c->local_blks_written -= end->local_blks_written - start->local_blks_written;
	c->temp_blks_read -= end->temp_blks_read - start->temp_blks_read;
	c->temp_blks_written -= end->temp_blks_written - start->temp_blks_written;
}
