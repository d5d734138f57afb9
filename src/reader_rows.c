/*-------------------------------------------------------------------------
 *
 * reader_rows.c
 *		The exact reader's rows as a table: every row of a partition copied
 *		into a backend-local hash table keyed by NgKey (the dump, the
 *		histogram function).
 *
 * Why a file of its own: reader.c holds the protocol that makes a read
 * exact; this is one consumer of it, which allocates under the partition
 * lock (shared), as reads always did: an out-of-memory ERROR there ends
 * the reader's own query, and error recovery releases the lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/hsearch.h"

#include "reader.h"
#include "store.h"

/*
 * ng_read_rows_create
 *		An empty table of NgRow keyed by NgKey, in the current memory
 *		context, for ng_read_partition.
 */
HTAB *
ng_read_rows_create(void)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(NgKey);
	ctl.entrysize = sizeof(NgRow);
	ctl.hash = ng_key_htab_hash;
	ctl.match = ng_key_htab_match;
	ctl.hcxt = CurrentMemoryContext;
	return hash_create("pg_stat_statements_ng rows", 256, &ctl,
					   HASH_ELEM | HASH_FUNCTION | HASH_COMPARE |
					   HASH_CONTEXT);
}

/* row callback of ng_read_partition: copy into the table (allocates) */
static bool
rows_add(NgReader *r, const NgReadRow *in)
{
	NgRow	   *row = hash_search((HTAB *) r->arg, &in->key, HASH_ENTER, NULL);

	row->entry = in->entry;
	row->minmax_generation = in->minmax_generation;
	row->usage = in->usage;
	row->counters = *in->counters;
	row->hist_mask = in->hist.mask;
	row->hist = palloc(ng_hist_groups_size(in->hist.mask) + 1);
	memcpy(row->hist, in->hist.groups, ng_hist_groups_size(in->hist.mask));
	row->stats_since = in->stats_since;
	row->minmax_stats_since = in->minmax_stats_since;
	row->text_stored_at = in->text_stored_at;
	row->encoding = in->encoding;
	row->qtext = NULL;
	row->qtext_len = 0;
	if (in->qtext != NULL)
	{
		row->qtext_len = in->qtext_len;
		row->qtext = palloc(in->qtext_len + 1);
		memcpy(row->qtext, in->qtext, in->qtext_len + 1);
	}
	return true;
}

/* forget callback of ng_read_partition: empty the table */
static void
rows_forget(NgReader *r)
{
	HTAB	   *rows = (HTAB *) r->arg;
	HASH_SEQ_STATUS seq;
	NgRow	   *row;

	hash_seq_init(&seq, rows);
	while ((row = hash_seq_search(&seq)) != NULL)
	{
		if (row->qtext)
			pfree(row->qtext);
		pfree(row->hist);
		(void) hash_search(rows, &row->key, HASH_REMOVE, NULL);
	}
}

/*
 * ng_read_partition
 *		Build the rows of one partition into rows (a hash table keyed by
 *		NgKey, empty on entry), texts palloc'd if showtext.  Takes and
 *		releases the partition lock; allocates under it (the table's rows
 *		and the texts).
 */
void
ng_read_partition(int p, HTAB *rows, bool showtext)
{
	NgReader	r;

	memset(&r, 0, sizeof(r));
	r.showtext = showtext;
	r.row = rows_add;
	r.forget = rows_forget;
	r.arg = rows;
	ng_read_partition_with(p, &r);
	ng_read_reader_free(&r);
}
