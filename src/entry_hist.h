/*-------------------------------------------------------------------------
 *
 * entry_hist.h
 *		A shared entry's latency histograms (entry_hist.c): groups of 16
 *		64-bit buckets in DSA, chained from the entry, only those a sample
 *		fell in; and this backend's spare groups, allocated before a lock
 *		for the folds that need new groups under it.
 *
 * Owns: NgHistGroup, the entry's hist_mask and hist_groups, hist_bytes.
 *
 * Locks, per function:
 *   ng_hist_spares_fill, ng_hist_spares_free: no partition lock (they
 *     allocate and free in DSA; backend-local otherwise).
 *   ng_entry_hist_add, ng_entry_hist_free: the entry's partition lock,
 *     exclusive.
 *   ng_entry_hist_copy, ng_entry_hist_map: the entry's partition lock, any
 *     mode.
 *   ng_entry_hist_lacks: none (a hint: the mask read without a lock).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_ENTRY_HIST_H
#define NG_ENTRY_HIST_H

#include "entry.h"
#include "hist.h"

#pragma GCC visibility push(hidden)

/* One group of an entry's histograms, in DSA */
typedef struct NgHistGroup
{
	dsa_pointer next;			/* next group of the entry, or invalid */
	uint32		bit;			/* which group: its bit in hist_mask */
	uint64		counts[NG_HIST_GROUP_SIZE];
} NgHistGroup;

/* spares a backend keeps at hand for a fold at exit (see entry_hist.c) */
#define NG_HIST_SPARES_KEPT		4
#define NG_HIST_SPARES_MAX		128

extern int	ng_hist_nspares;	/* backend-local: spares at hand */
extern int	ng_hist_spares_fill(int n);
extern void ng_hist_spares_free(void);
extern void ng_entry_hist_map(const NgSharedEntry *entry);
extern bool ng_entry_hist_fits(const NgSharedEntry *entry, uint32 need);
extern bool ng_entry_hist_add(NgSharedEntry *entry, int kind, int bucket,
							  uint64 count);
extern void ng_entry_hist_free(NgSharedEntry *entry);
extern NgHistView ng_entry_hist_copy(const NgSharedEntry *entry, uint64 *buf);

/*
 * ng_entry_hist_first_bit
 *		The group bit (hist.h) of the histogram group held in entry itself,
 *		or 0 if it holds none.  Caller holds the partition lock, any mode,
 *		or reads it as a hint.
 */
static inline uint32
ng_entry_hist_first_bit(const NgSharedEntry *entry)
{
	return entry->hist_first_group == 0 ? 0 :
		(uint32) 1 << (entry->hist_first_group - 1);
}

/* groups of need that entry lacks, read without a lock: a hint */
static inline uint32
ng_entry_hist_lacks(const NgSharedEntry *entry, uint32 need)
{
	return need & ~((volatile const NgSharedEntry *) entry)->hist_mask;
}

#pragma GCC visibility pop

#endif							/* NG_ENTRY_HIST_H */
