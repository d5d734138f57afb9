/*-------------------------------------------------------------------------
 *
 * reader.h
 *		The exact reader (reader.c): a partition's entries plus every slot
 *		counting for it, copied under the partition lock in shared mode.
 *
 * Locks: caller holds no lock of ours; ng_read_partition takes the
 * partition's lock shared and releases it before it returns.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_READER_H
#define NG_READER_H

#include "utils/dsa.h"

#include "counters.h"

/* One row being assembled from an entry and the slots counting for it */
typedef struct NgRow
{
	NgKey		key;			/* hash key: must be first */
	dsa_pointer entry;			/* InvalidDsaPointer: slots only */
	uint32		minmax_generation;
	uint32		usage;
	NgCounters	counters;
	char	   *qtext;			/* palloc'd, or NULL */
	int			qtext_len;
	int			encoding;
	TimestampTz stats_since;
	TimestampTz minmax_stats_since;
	TimestampTz text_stored_at;
} NgRow;

extern struct HTAB *ng_read_rows_create(void);
extern void ng_read_partition(int p, struct HTAB *rows, bool with_text);

extern struct HTAB *ng_read_rows_create(void);
extern void ng_read_partition(int p, struct HTAB *rows, bool with_text);

#endif							/* NG_READER_H */
