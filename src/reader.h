/*-------------------------------------------------------------------------
 *
 * reader.h
 *		The exact reader (reader.c): a partition's entries plus every slot
 *		counting for it, copied under the partition lock in shared mode.
 *
 * Locks: caller holds no lock of ours; ng_read_partition and
 * ng_read_partition_with take the partition's lock shared and release it
 * before they return.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_READER_H
#define NG_READER_H

#include "utils/dsa.h"

#include "counters.h"
#include "hist.h"

#pragma GCC visibility push(hidden)

struct NgSlot;					/* slots/slots.h */

/* One row being assembled from an entry and the slots counting for it */
typedef struct NgRow
{
	NgKey		key;			/* hash key: must be first */
	dsa_pointer entry;			/* InvalidDsaPointer: slots only */
	uint32		minmax_generation;
	uint32		usage;
	NgCounters	counters;
	uint32		hist_mask;		/* the histograms, sparse (hist.h) */
	uint64	   *hist;			/* palloc'd */
	char	   *qtext;			/* palloc'd, or NULL */
	int			qtext_len;
	int			encoding;
	TimestampTz stats_since;
	TimestampTz minmax_stats_since;
	TimestampTz text_stored_at;
} NgRow;

/* Functions in reader_rows.c */
extern struct HTAB *ng_read_rows_create(void);
extern void ng_read_partition(int p, struct HTAB *rows, bool with_text);


/*
 * One row of a partition as ng_read_partition_with hands it over, under the
 * partition lock: counters and qtext point into shared memory (or the
 * reader's scratch) and are valid only until the callback returns.
 */
typedef struct NgReadRow
{
	NgKey		key;
	dsa_pointer entry;			/* InvalidDsaPointer: slots only */
	uint32		minmax_generation;
	uint32		usage;
	const NgCounters *counters;
	NgHistView	hist;			/* sparse (hist.h) */
	const char *qtext;			/* NUL-terminated; NULL: none, or !showtext */
	int			qtext_len;
	dsa_pointer qtext_dp;		/* the stored text (qtext.h), or invalid */
	uint64		fingerprint;	/* its cached fingerprint; 0: none */
	int			encoding;
	TimestampTz stats_since;
	TimestampTz minmax_stats_since;
	TimestampTz text_stored_at;
} NgReadRow;

/*
 * A read of partitions by callbacks.  row runs under the partition lock
 * (shared): it must not take our locks, and should not allocate; returning
 * false means it ran out of room: the lock is released, forget drops the
 * partition's rows given so far, grow (called outside the lock) makes room,
 * and the partition is read again.  forget also runs when a read is retried
 * for a slot in the middle of a write.
 */
typedef struct NgReader NgReader;
struct NgReader
{
	bool		showtext;
	bool		(*row) (NgReader *r, const NgReadRow *row);
	void		(*forget) (NgReader *r);
	void		(*grow) (NgReader *r);

	/*
	 * Optional: called under the partition lock once a pass handed over every
	 * row; returning false makes it a pass that could not finish (the rows
	 * are forgotten, the lock released, and after 1 ms the partition is read
	 * again).
	 */
	bool		(*locked) (NgReader *r, int p);

	/*
	 * Optional: called under the partition lock after row, for each copy of a
	 * slot whose counts that row includes; returning false is as for row.
	 */
	bool		(*slot) (NgReader *r, const NgReadRow *row,
						 const struct NgSlot *copy);
	void	   *arg;
	struct NgReadScratch *scratch;	/* reader.c's; NULL to begin with */
};

extern void ng_read_partition_with(int p, NgReader *r);
extern void ng_read_reader_free(NgReader *r);

#pragma GCC visibility pop

#endif							/* NG_READER_H */
