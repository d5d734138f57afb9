/*-------------------------------------------------------------------------
 *
 * persist_contrib_format.c
 *		contrib's entry layout of each major, 15 to 18: the word tables of
 *		its counters, and an entry decoded from or encoded to its bytes.
 *
 * Why a file of its own: the facts of contrib's format, kept apart from
 * the reader that checks a file (persist_contrib.c) and the writer
 * (persist_contrib_write.c).  Pure functions: no lock, no shared state.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "persist_contrib.h"

/*
 * contrib's counters, word by word: where each 8-byte word goes in
 * NgCounters (an int64 to an int64, a double to a double), or W_USAGE.
 */
#define W(f)		((int16) offsetof(NgCounters, f))
#define W_USAGE		(-1)
#define W_HEAD \
	W(calls[NG_PLAN]), W(calls[NG_EXEC]), \
	W(total_time[NG_PLAN]), W(total_time[NG_EXEC]), \
	W(min_time[NG_PLAN]), W(min_time[NG_EXEC]), \
	W(max_time[NG_PLAN]), W(max_time[NG_EXEC]), \
	W(mean_time[NG_PLAN]), W(mean_time[NG_EXEC]), \
	W(sum_var_time[NG_PLAN]), W(sum_var_time[NG_EXEC]), \
	W(rows), W(shared_blks_hit), W(shared_blks_read), \
	W(shared_blks_dirtied), W(shared_blks_written), W(local_blks_hit), \
	W(local_blks_read), W(local_blks_dirtied), W(local_blks_written), \
	W(temp_blks_read), W(temp_blks_written)
#define W_JIT17 \
	W(jit_functions), W(jit_generation_time), W(jit_inlining_count), \
	W(jit_deform_time), W(jit_deform_count), W(jit_inlining_time), \
	W(jit_optimization_count), W(jit_optimization_time), \
	W(jit_emission_count), W(jit_emission_time)

/* 15 and 16: blk_read_time and blk_write_time are our shared_* times */
static const int16 contrib_words_15[] = {
	W_HEAD, W(shared_blk_read_time), W(shared_blk_write_time),
	W(temp_blk_read_time), W(temp_blk_write_time), W_USAGE,
	W(wal_records), W(wal_fpi), W(wal_bytes),
	W(jit_functions), W(jit_generation_time), W(jit_inlining_count),
	W(jit_inlining_time), W(jit_optimization_count),
	W(jit_optimization_time), W(jit_emission_count), W(jit_emission_time)
};

static const int16 contrib_words_17[] = {
	W_HEAD, W(shared_blk_read_time), W(shared_blk_write_time),
	W(local_blk_read_time), W(local_blk_write_time),
	W(temp_blk_read_time), W(temp_blk_write_time), W_USAGE,
	W(wal_records), W(wal_fpi), W(wal_bytes), W_JIT17
};

static const int16 contrib_words_18[] = {
	W_HEAD, W(shared_blk_read_time), W(shared_blk_write_time),
	W(local_blk_read_time), W(local_blk_write_time),
	W(temp_blk_read_time), W(temp_blk_write_time), W_USAGE,
	W(wal_records), W(wal_fpi), W(wal_bytes), W(wal_buffers_full),
	W_JIT17, W(parallel_workers_to_launch), W(parallel_workers_launched)
};

/*
 * ng_contrib_layout
 *		The running major's layout, or false if contrib's format of this
 *		major is not known here.
 */
bool
ng_contrib_layout(ContribLayout *l)
{
	switch (PG_VERSION_NUM / 10000)
	{
		case 15:
		case 16:
			l->words = contrib_words_15;
			l->nwords = lengthof(contrib_words_15);
			l->since = false;
			break;
		case 17:
			l->words = contrib_words_17;
			l->nwords = lengthof(contrib_words_17);
			l->since = true;
			break;
		case 18:
			l->words = contrib_words_18;
			l->nwords = lengthof(contrib_words_18);
			l->since = true;
			break;
		default:
			return false;
	}
	l->entry_size = sizeof(ContribKey) + l->nwords * sizeof(uint64) +
		(l->since ? sizeof(ContribTail17) : sizeof(ContribTail15));
	return true;
}

/*
 * ng_contrib_decode
 *		The entry at p (entry_size bytes, any alignment) into *e; e->text is
 *		left for the caller.
 */
void
ng_contrib_decode(const ContribLayout *l, const char *p, ContribEntry *e)
{
	const char *w = p + sizeof(ContribKey);

	memset(e, 0, sizeof(*e));
	memcpy(&e->key, p, sizeof(ContribKey));
	for (int i = 0; i < l->nwords; i++, w += sizeof(uint64))
	{
		if (l->words[i] == W_USAGE)
			memcpy(&e->usage, w, sizeof(double));
		else
			memcpy((char *) &e->counters + l->words[i], w, sizeof(uint64));
	}
	if (l->since)
		memcpy(&e->tail, w, sizeof(ContribTail17));
	else
	{
		ContribTail15 t;

		memcpy(&t, w, sizeof(t));
		e->tail.query_len = t.query_len;
		e->tail.encoding = t.encoding;
	}
}

/*
 * ng_contrib_encode
 *		e as contrib's entry into out (entry_size bytes).
 */
void
ng_contrib_encode(const ContribLayout *l, const ContribEntry *e, char *out)
{
	char	   *w = out + sizeof(ContribKey);

	memset(out, 0, l->entry_size);
	memcpy(out, &e->key, sizeof(ContribKey));
	for (int i = 0; i < l->nwords; i++, w += sizeof(uint64))
	{
		if (l->words[i] == W_USAGE)
			memcpy(w, &e->usage, sizeof(double));
		else
			memcpy(w, (const char *) &e->counters + l->words[i], sizeof(uint64));
	}
	if (l->since)
		memcpy(w, &e->tail, offsetof(ContribTail17, mutex));
	else
	{
		ContribTail15 t;

		memset(&t, 0, sizeof(t));
		t.query_len = e->tail.query_len;
		t.encoding = e->tail.encoding;
		memcpy(w, &t, offsetof(ContribTail15, mutex));
	}
}
