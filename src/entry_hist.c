/*-------------------------------------------------------------------------
 *
 * entry_hist.c
 *		A shared entry's latency histograms: a chain of groups in DSA, each
 *		16 buckets of one kind with 64-bit counts, made when the first
 *		sample of the group is folded into the entry.
 *
 * Why a file of its own: the histograms are most of what a statement
 * could cost in memory (256 buckets of two kinds), and a statement's
 * durations fall in a few groups; making groups on demand, under the
 * partition lock, without allocating there, needs the spares below.
 *
 * Spares.  Nothing is allocated in DSA under a partition lock (store.h),
 * and a fold learns which groups its entry lacks only under the lock.  So
 * a backend keeps a few groups allocated, outside any lock, in a
 * backend-local list: before a fold takes the lock, it fills the list with
 * as many as the entry seemed to lack (a hint read without the lock) plus
 * NG_HIST_SPARES_KEPT, for a fold whose entry changed meanwhile and for
 * the folds at exit, which cannot allocate (alloc.c).  Under the lock a
 * missing group is taken from the list.  When the list is empty (DSA full:
 * every refusal is counted in dsa_failures), the samples of that group are
 * left out of the histogram; every other count of the statement is kept,
 * and its percentiles come from the samples its histogram holds.
 *
 * The first group an entry needs is held in the entry itself (nearly every
 * statement has one; most have no other), so a fold needs a spare only for
 * a second group and beyond.
 *
 * Memory: an entry with g >= 1 groups holds (g - 1) * sizeof(NgHistGroup)
 * bytes more than sizeof(NgSharedEntry); ng_shared->hist_bytes adds them up
 * for the info view (entries_memory).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "alloc.h"
#include "entry_hist.h"
#include "shmem.h"

/* backend-local: groups allocated and not yet in an entry */
static dsa_pointer spares[NG_HIST_SPARES_MAX];
NG_HOT int	ng_hist_nspares = 0;

/*
 * ng_hist_spares_fill
 *		Allocate spare groups until there are n (at most
 *		NG_HIST_SPARES_MAX) or DSA refuses; returns how many there are.
 *		Caller holds no partition lock.
 */
int
ng_hist_spares_fill(int n)
{
	n = Min(n, NG_HIST_SPARES_MAX);
	while (ng_hist_nspares < n && ng_dsa_can_allocate())
	{
		dsa_pointer dp = ng_dsa_allocate(sizeof(NgHistGroup), 0);

		if (!DsaPointerIsValid(dp))
			break;
		spares[ng_hist_nspares++] = dp;
	}
	return ng_hist_nspares;
}

/*
 * ng_hist_spares_free
 *		Give the spares back to DSA (at exit).  No partition lock held.
 */
void
ng_hist_spares_free(void)
{
	while (ng_hist_nspares > 0)
		dsa_free(ng_area, spares[--ng_hist_nspares]);
}

/* the counts of entry's group of bit (in the entry, or chained), or NULL */
static uint64 *
entry_group(NgSharedEntry *entry, uint32 bit)
{
	if ((entry->hist_mask & bit) == 0)
		return NULL;
	if (ng_entry_hist_first_bit(entry) == bit)
		return entry->hist_first;
	for (dsa_pointer dp = entry->hist_groups; DsaPointerIsValid(dp);)
	{
		NgHistGroup *g = dsa_get_address(ng_area, dp);

		if (g->bit == bit)
			return g->counts;
		dp = g->next;
	}
	Assert(false);				/* the mask says it is there */
	return NULL;
}

/*
 * ng_entry_hist_map
 *		Map the segments of every group entry has (dsa_get_address maps a
 *		segment this backend has not mapped yet, and that can raise an
 *		ERROR).  A caller about to add to several of the entry's fields calls
 *		this first, so that such an error comes before anything is added.
 *		Caller holds the entry's partition lock.
 */
void
ng_entry_hist_map(const NgSharedEntry *entry)
{
	for (dsa_pointer dp = entry->hist_groups; DsaPointerIsValid(dp);)
		dp = ((NgHistGroup *) dsa_get_address(ng_area, dp))->next;
}

/*
 * ng_entry_hist_fits
 *		Can samples in the groups of need be added to entry: it has them,
 *		or there are spares enough to make them?  Caller holds the partition
 *		lock, any mode.
 */
bool
ng_entry_hist_fits(const NgSharedEntry *entry, uint32 need)
{
	int			lacking = pg_popcount32(need & ~entry->hist_mask);

	if (entry->hist_first_group == 0 && lacking > 0)
		lacking--;				/* the first goes in the entry itself */
	return lacking <= ng_hist_nspares;
}

/*
 * ng_entry_hist_add
 *		Add count samples of kind in bucket to entry's histogram, making
 *		the group from a spare if the entry has none yet.  False if it had
 *		to be made and no spare was left: the samples are not in the
 *		histogram.  Caller holds the partition lock exclusively.
 */
bool
ng_entry_hist_add(NgSharedEntry *entry, int kind, int bucket, uint64 count)
{
	uint32		bit = ng_hist_group_bit(kind, bucket);
	uint64	   *counts = entry_group(entry, bit);

	if (counts == NULL && entry->hist_first_group == 0)
	{
		/* the entry's first group: in the entry itself */
		entry->hist_first_group = pg_rightmost_one_pos32(bit) + 1;
		memset(entry->hist_first, 0, sizeof(entry->hist_first));
		entry->hist_mask |= bit;
		counts = entry->hist_first;
	}
	else if (counts == NULL)
	{
		dsa_pointer dp;
		NgHistGroup *g;

		if (ng_hist_nspares == 0)
			return false;
		dp = spares[--ng_hist_nspares];
		g = dsa_get_address(ng_area, dp);
		memset(g, 0, sizeof(NgHistGroup));
		g->bit = bit;
		g->next = entry->hist_groups;
		entry->hist_groups = dp;
		entry->hist_mask |= bit;
		pg_atomic_fetch_add_u64(&ng_shared->hist_bytes, sizeof(NgHistGroup));
		counts = g->counts;
	}
	counts[bucket % NG_HIST_GROUP_SIZE] += count;
	return true;
}

/*
 * ng_entry_hist_free
 *		Free entry's groups (the entry is being freed).  Caller holds the
 *		partition lock exclusively.
 */
void
ng_entry_hist_free(NgSharedEntry *entry)
{
	dsa_pointer dp = entry->hist_groups;

	while (DsaPointerIsValid(dp))
	{
		NgHistGroup *g = dsa_get_address(ng_area, dp);
		dsa_pointer next = g->next;

		dsa_free(ng_area, dp);
		pg_atomic_fetch_sub_u64(&ng_shared->hist_bytes, sizeof(NgHistGroup));
		dp = next;
	}
	entry->hist_groups = InvalidDsaPointer;
	entry->hist_mask = 0;
	entry->hist_first_group = 0;
}

/*
 * ng_entry_hist_copy
 *		entry's histograms in their sparse form (hist.h): the group held in
 *		the entry itself when it has no other (nearly every entry: nothing
 *		copied), else copied into buf (room for
 *		ng_hist_groups_size(entry->hist_mask) bytes).  Caller holds the
 *		partition lock, any mode, as long as it uses the view.
 */
NgHistView
ng_entry_hist_copy(const NgSharedEntry *entry, uint64 *buf)
{
	NgHistView	view;

	view.mask = entry->hist_mask;
	if (!DsaPointerIsValid(entry->hist_groups))
	{
		/* no group, or the one in the entry */
		Assert(view.mask == ng_entry_hist_first_bit(entry));
		view.groups = entry->hist_first;
		return view;
	}
	view.groups = buf;
	if (entry->hist_first_group != 0)
		memcpy(buf + pg_popcount32(view.mask &
								   (ng_entry_hist_first_bit(entry) - 1)) *
			   NG_HIST_GROUP_SIZE, entry->hist_first, NG_HIST_GROUP_BYTES);
	for (dsa_pointer dp = entry->hist_groups; DsaPointerIsValid(dp);)
	{
		const NgHistGroup *g = dsa_get_address(ng_area, dp);
		int			at = pg_popcount32(view.mask & (g->bit - 1));

		memcpy(buf + at * NG_HIST_GROUP_SIZE, g->counts, NG_HIST_GROUP_BYTES);
		dp = g->next;
	}
	return view;
}
