/*-------------------------------------------------------------------------
 *
 * victim.c
 *		Choosing the slot a new statement of this backend takes: a free
 *		one, or else the least recently used one, given up (folded and
 *		freed by fold.c).
 *
 * Why a file of its own: the choice keeps its own state (a list of the
 * next victims, so that one scan serves several new statements) and its
 * own order of preference (bound slots first, an unbound one only once its
 * key has an entry); binding (bind.c) only asks it for a slot.
 * slots_int.h describes the whole slot protocol.
 *
 * Locking.  Nothing here takes a lock itself: a victim is released by
 * ng_slot_release (fold.c), which takes its partition lock, waiting only
 * for the last resort of slot_find_victim; an unbound victim's entry is
 * had through entry.c (ng_slot_adopt_entry), without waiting but there.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "slots_int.h"

/*
 * slot_find_victim
 *		For ng_slot_find_free, when all slots are taken and the least recently
 *		used bound one could not be released without waiting: release the
 *		least recently used slot that can be, bound ones first.  A bound
 *		slot folds into its entry without loss.  An unbound slot is given up
 *		only if its key has an entry by now (or has nothing to keep).  Tries
 *		a few victims without waiting before it waits for one.
 */
static int
slot_find_victim(void)
{
	int			victims[4];
	int			nvictims = 0;
	int			bound = 0;

	/* the least recently used slots, bound ones first */
	for (int pass = 0; pass < 2 && nvictims < lengthof(victims); pass++)
	{
		while (nvictims < lengthof(victims))
		{
			int			best = -1;

			for (int i = 0; i < ngs_nslots; i++)
			{
				bool		taken = false;

				if ((ngs_local_slots[i].entry != NULL) != (pass == 0))
					continue;
				for (int v = 0; v < nvictims; v++)
					taken |= (victims[v] == i);
				if (!taken && (best < 0 ||
							   ngs_local_slots[i].last_used < ngs_local_slots[best].last_used))
					best = i;
			}
			if (best < 0)
				break;
			victims[nvictims++] = best;
			if (pass == 0)
				bound++;
		}
	}
	for (int v = 0; v < nvictims; v++)
	{
		if (ngs_local_slots[victims[v]].entry == NULL &&
			!ng_slot_adopt_entry(victims[v], false))
			continue;
		if (ng_slot_release(victims[v], false))
			return victims[v];
	}

	/* wait: for a bound victim's lock, or for an unbound one's entry */
	if (bound > 0)
	{
		ng_slot_release(victims[0], true);
		return victims[0];
	}
	for (int v = 0; v < nvictims; v++)
	{
		if (ng_slot_adopt_entry(victims[v], true))
		{
			ng_slot_release(victims[v], true);
			return victims[v];
		}
	}

	/*
	 * Every slot counts for a statement that has no entry and can get none
	 * (the table is full of entries other backends are using): give up the
	 * oldest one's counts, counted as discarded.
	 */
	ng_slot_release(victims[0], true);
	return victims[0];
}

/*
 * The next victims: the least recently used bound slots as of the last
 * scan, oldest first, each with its last_used then; or, when no slot was
 * bound, the least recently used unbound ones (victims_unbound).  One scan
 * serves several new statements.  A listed slot used since (its last_used
 * changed), or bound or unbound since, is skipped.  A slot not listed was
 * used later than every listed one of its kind: its last_used was larger
 * at the scan, or it was bound, unbound or used after it, and use_clock
 * only grows.  So the first listed slot still valid is the least recently
 * used one of its kind, as a full scan would find it.  A list of unbound
 * slots is used up before the next scan looks for bound ones again: a slot
 * bound meanwhile waits that long for its turn to be preferred.  This
 * matters where every new statement is refused an entry (admission on a
 * full table): every slot is then unbound, and a scan per statement would
 * cost more than the rest of the statement's bookkeeping.
 */
#define NG_VICTIMS_LISTED	16

static int	victim_slot[NG_VICTIMS_LISTED];
static uint64 victim_used[NG_VICTIMS_LISTED];
static int	victim_next = 0;
static int	victim_count = 0;
static bool victims_unbound = false;

/* may slot ls be listed, bound or not as the list is? */
static inline bool
victim_kind_ok(const NgLocalSlot *ls, bool unbound)
{
	return ls->in_use && (ls->entry == NULL) == unbound;
}

/* list the least recently used slots of one kind, oldest first */
static void
slot_list_victims_of(bool unbound)
{
	victim_next = 0;
	victim_count = 0;
	victims_unbound = unbound;
	for (int i = 0; i < ngs_nslots; i++)
	{
		NgLocalSlot *ls = &ngs_local_slots[i];
		int			at;

		if (!victim_kind_ok(ls, unbound) ||
			(victim_count == NG_VICTIMS_LISTED &&
			 ls->last_used >= victim_used[victim_count - 1]))
			continue;
		if (victim_count < NG_VICTIMS_LISTED)
			victim_count++;
		for (at = victim_count - 1;
			 at > 0 && victim_used[at - 1] > ls->last_used; at--)
		{
			victim_slot[at] = victim_slot[at - 1];
			victim_used[at] = victim_used[at - 1];
		}
		victim_slot[at] = i;
		victim_used[at] = ls->last_used;
	}
}

/*
 * slot_next_victim
 *		The position in victim_slot of the least recently used bound slot,
 *		or, if none is bound, of the least recently used unbound one (see
 *		victims_unbound), listing them anew when no listed one is valid; -1
 *		if no slot is in use.
 */
static int
slot_next_victim(void)
{
	for (int pass = 0; pass < 2; pass++)
	{
		for (; victim_next < victim_count; victim_next++)
		{
			NgLocalSlot *ls = &ngs_local_slots[victim_slot[victim_next]];

			if (victim_kind_ok(ls, victims_unbound) &&
				ls->last_used == victim_used[victim_next])
				return victim_next;
		}
		/* bound ones first; unbound ones only when none is bound */
		slot_list_victims_of(false);
		if (victim_count == 0)
			slot_list_victims_of(true);
		if (victim_count == 0)
			break;
	}
	return -1;
}

/*
 * ng_slot_find_free
 *		A free slot of mine, releasing the least recently used bound slot if
 *		all are taken, or, if none is bound, the least recently used one if
 *		its key has an entry or is refused one (what slot_find_victim would
 *		try first); slot_find_victim if that cannot be done without waiting.
 *		Caller holds no partition lock.
 */
int
ng_slot_find_free(void)
{
	int			pos;
	int			i;

	if (ngs_nfree > 0)
	{
		for (i = 0; i < ngs_nslots; i++)
			if (!ngs_local_slots[i].in_use)
				return i;
	}
	pos = slot_next_victim();
	if (pos < 0)
		return slot_find_victim();
	i = victim_slot[pos];
	if (!victims_unbound)
	{
		/* a bound victim not released stays first in the list */
		if (ng_slot_release(i, false))
		{
			victim_next = pos + 1;
			return i;
		}
		return slot_find_victim();
	}
	victim_next = pos + 1;
	if (ng_slot_adopt_entry(i, false) && ng_slot_release(i, false))
		return i;
	return slot_find_victim();
}
