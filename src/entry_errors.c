/*-------------------------------------------------------------------------
 *
 * entry_errors.c
 *		A shared entry's failed executions by SQLSTATE: the per-entry
 *		blocks in DSA, their partition chains, and the copy readers take.
 *
 * Why a file of its own: the blocks belong to the entries (store.c frees
 * an entry's block when it leaves the table) but are made and read by
 * code above the store (failures.c records into them, errors_sql.c reads
 * them); it includes entry.h, not store.h, and calls nothing of store.c,
 * as entry_hist.c does not.
 *
 * Locking: a partition's chain and its blocks are under the partition's
 * lock, written with it held exclusively, copied with it held shared.  A
 * block is allocated before the lock (failures.c) and linked under it;
 * freeing one (dsa_free) under the lock takes DSA's own locks, as an
 * entry's free does.  Nothing here allocates or raises an error.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "entry_errors.h"

/*
 * errors_of
 *		The block of the entry at dp, which has one (errors_kept), and the
 *		link to it in *link if link is set.  Caller holds the partition
 *		lock, any mode.
 */
static NgEntryErrors *
errors_of(NgSharedPartition *part, dsa_pointer dp, dsa_pointer **link)
{
	dsa_pointer *at = &part->errors;

	while (DsaPointerIsValid(*at))
	{
		NgEntryErrors *e = dsa_get_address(ng_area, *at);

		if (e->entry == dp)
		{
			if (link)
				*link = at;
			return e;
		}
		at = &e->next;
	}
	Assert(false);				/* errors_kept says there is one */
	return NULL;
}

/*
 * errors_count
 *		Add add's errors to e: to its SQLSTATE's row, else to a free one of
 *		the NG_ERROR_SQLSTATES, else to the row of the rest.
 */
static void
errors_count(NgEntryErrors *e, const NgErrorCount *add)
{
	NgErrorCount *c = &e->counts[NG_ERROR_SQLSTATES];

	for (int i = 0; i < NG_ERROR_SQLSTATES && add->sqlstate != 0; i++)
	{
		if (e->counts[i].sqlstate == add->sqlstate ||
			e->counts[i].sqlstate == 0)
		{
			c = &e->counts[i];
			break;
		}
	}
	c->sqlstate = (c == &e->counts[NG_ERROR_SQLSTATES]) ? 0 : add->sqlstate;
	c->errors += add->errors;
	if (add->last_error_at > c->last_error_at)
		c->last_error_at = add->last_error_at;
}

/*
 * ng_entry_errors_add
 *		Count add (a SQLSTATE, its failures and the time of the last) for
 *		entry, at dp.  An entry without a block gets *spare (a block the
 *		caller allocated before the lock), which is then set invalid; with
 *		no spare, nothing is counted and false is returned.  Caller holds
 *		the partition lock exclusively.
 */
bool
ng_entry_errors_add(NgSharedPartition *part, NgSharedEntry *entry,
					dsa_pointer dp, const NgErrorCount *add, dsa_pointer *spare)
{
	NgEntryErrors *e;

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	if (entry->errors_kept)
		e = errors_of(part, dp, NULL);
	else
		e = NULL;
	if (e == NULL)
	{
		if (!DsaPointerIsValid(*spare))
			return false;
		e = dsa_get_address(ng_area, *spare);
		memset(e, 0, sizeof(NgEntryErrors));
		e->entry = dp;
		e->key = entry->key;
		e->next = part->errors;
		part->errors = *spare;
		*spare = InvalidDsaPointer;
		entry->errors_kept = true;
	}
	errors_count(e, add);
	return true;
}

/*
 * ng_entry_errors_free
 *		The entry at dp leaves the table (evicted, reset): unlink and free
 *		its block, if it has one.  Caller holds the partition lock
 *		exclusively.
 */
void
ng_entry_errors_free(NgSharedPartition *part, NgSharedEntry *entry,
					 dsa_pointer dp)
{
	dsa_pointer *link;
	NgEntryErrors *e;
	dsa_pointer edp;

	if (!entry->errors_kept)
		return;
	entry->errors_kept = false;
	e = errors_of(part, dp, &link);
	if (e == NULL)
		return;
	edp = *link;
	*link = e->next;
	dsa_free(ng_area, edp);
}

/*
 * ng_entry_errors_copy
 *		Copy partition p's blocks into buf (room for room of them), under
 *		the partition lock, shared, taken and released here.  Returns how
 *		many the partition has; if that is more than room, buf holds the
 *		first room of them, and the caller grows buf and asks again.
 */
int
ng_entry_errors_copy(int p, NgEntryErrors *buf, int room)
{
	NgSharedPartition *part = &ng_shared->partitions[p];
	int			n = 0;

	LWLockAcquire(part->lock, LW_SHARED);
	for (dsa_pointer dp = part->errors; DsaPointerIsValid(dp);)
	{
		NgEntryErrors *e = dsa_get_address(ng_area, dp);

		if (n < room)
			buf[n] = *e;
		n++;
		dp = e->next;
	}
	LWLockRelease(part->lock);
	return n;
}

/*
 * ng_entry_errors_lost
 *		Count n failures whose SQLSTATE could not be kept (no entry, no
 *		memory for a block), for the info view.  A full reset zeroes it.
 */
void
ng_entry_errors_lost(int64 n)
{
	pg_atomic_fetch_add_u64(&ng_shared->sqlstates_lost, (uint64) n);
}
