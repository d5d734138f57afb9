/*-------------------------------------------------------------------------
 *
 * waits_window.c
 *		The wait profile's side of the history's windows: what the keeper
 *		takes of the profile's samples since it last took them, and what
 *		the sampler hands over of an entry it gives up before the keeper
 *		took all of it.
 *
 * Why a file of its own: the one place where the keeper (history_waits.c)
 * and the sampler (waits_sampler.c) meet over the profile; both call it,
 * and it calls neither.
 *
 * The samples of a window.  An entry's samples and time only grow for as
 * long as it keeps one key (an incarnation); resets move its base, never
 * them.  Each entry carries what the keeper took of it last (seen_*, of
 * one incarnation): the keeper's take adds, for each entry, its samples
 * less the seen ones (all of them for an incarnation not seen) to what it
 * gives its caller, and makes them the seen ones.  An entry the sampler
 * gives up leaves what the keeper has not seen of it in the handover, a
 * fixed array of rows (added to the row of its key if there is one), which
 * the next take empties; a sample that finds it full is counted
 * (handover_lost) and given to the keeper as lost.  So every sample the
 * sampler counts reaches exactly one take, whatever resets ran meanwhile:
 * the windows' samples add up to the samples counted while the keeper
 * follows the profile.  Rows the sampler loads from the saved file are
 * marked seen as they are loaded: they were counted before the start.
 *
 * Locking: window_lock, exclusive, around a take, an eviction's handover,
 * and a loaded row's mark; only the keeper and the sampler take it, never
 * with another lock of ours but the sampler's reset_lock (loading: first
 * reset_lock, then window_lock), so no backend ever waits for it.  Under
 * it no entry is given up, so the keeper's copies of the entries (by their
 * change count; the sampler samples meanwhile) and its marks agree with
 * the handover.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "waits.h"

/*
 * ng_waits_window_open
 *		The keeper, opening its first window: follow the profile from now
 *		on (the sampler hands over what it gives up), with every sample
 *		counted so far seen.  Takes window_lock.
 */
void
ng_waits_window_open(void)
{
	if (ng_waits == NULL)
		return;
	LWLockAcquire(ng_waits->window_lock, LW_EXCLUSIVE);
	pg_atomic_write_u32(&ng_waits->following, 1);
	(void) ng_waits_window_take(NULL, NULL);
	LWLockRelease(ng_waits->window_lock);
}

/*
 * ng_waits_window_stop
 *		The keeper, exiting: stop following (no lock: it may exit from an
 *		error while holding it).
 */
void
ng_waits_window_stop(void)
{
	if (ng_waits != NULL)
		pg_atomic_write_u32(&ng_waits->following, 0);
}

/* what e holds that the keeper has not seen: samples, into *time_us */
static uint64
window_unseen(const NgWaitEntry *copy, const NgWaitEntry *e, uint64 *time_us)
{
	if (e->seen_incarnation != copy->incarnation)
	{
		*time_us = copy->time_us;
		return copy->samples;
	}
	*time_us = copy->time_us - Min(copy->time_us, e->seen_time_us);
	return copy->samples - Min(copy->samples, e->seen_samples);
}

/* make what copy holds of e seen */
static void
window_see(const NgWaitEntry *copy, NgWaitEntry *e)
{
	e->seen_incarnation = copy->incarnation;
	e->seen_samples = copy->samples;
	e->seen_time_us = copy->time_us;
}

/*
 * ng_waits_window_take
 *		The keeper: give add (unless NULL, opening) what every entry holds
 *		unseen, then the handover's rows, and make it all seen; returns the
 *		samples lost since the last take (the handover was full).  Caller
 *		holds window_lock exclusively, or none (then taken here).  An entry
 *		whose copy does not settle (a sampler stopped in its write) is left
 *		for the next take.
 */
uint64
ng_waits_window_take(NgWaitsTakeFn add, void *arg)
{
	bool		locked = LWLockHeldByMeInMode(ng_waits->window_lock,
											  LW_EXCLUSIVE);
	uint64		lost;

	if (!locked)
		LWLockAcquire(ng_waits->window_lock, LW_EXCLUSIVE);
	for (int i = 0; i < ng_waits->max; i++)
	{
		NgWaitEntry *e = ng_waits_entry(i);
		NgWaitEntry copy;
		uint64		samples;
		uint64		time_us;

		if (!ng_waits_copy_entry(e, &copy, NG_WAITS_READ_SPINS) ||
			!copy.in_use)
			continue;
		samples = window_unseen(&copy, e, &time_us);
		if (samples > 0 && add != NULL)
			add(&copy.key, samples, time_us, arg);
		window_see(&copy, e);
	}
	for (int i = 0; i < ng_waits->nhandover && add != NULL; i++)
		add(&ng_waits->handover[i].key, ng_waits->handover[i].samples,
			ng_waits->handover[i].time_us, arg);
	lost = ng_waits->handover_lost;
	ng_waits->nhandover = 0;
	ng_waits->handover_lost = 0;
	if (!locked)
		LWLockRelease(ng_waits->window_lock);
	return add != NULL ? lost : 0;
}

/*
 * ng_waits_window_handover
 *		The sampler, giving e up: while a keeper follows, leave what it has
 *		not seen of e in the handover.  Caller (the entry's only writer)
 *		holds window_lock exclusively.
 */
void
ng_waits_window_handover(NgWaitEntry *e)
{
	uint64		samples;
	uint64		time_us;
	int			i;

	Assert(LWLockHeldByMeInMode(ng_waits->window_lock, LW_EXCLUSIVE));
	if (pg_atomic_read_u32(&ng_waits->following) == 0 || !e->in_use)
		return;
	samples = window_unseen(e, e, &time_us);
	window_see(e, e);
	if (samples == 0)
		return;
	for (i = 0; i < ng_waits->nhandover; i++)
		if (memcmp(&ng_waits->handover[i].key, &e->key, sizeof(NgWaitKey)) == 0)
			break;
	if (i == NG_WAITS_HANDOVER_MAX)
	{
		ng_waits->handover_lost += samples;
		return;
	}
	if (i == ng_waits->nhandover)
	{
		ng_waits->handover[i].key = e->key;
		ng_waits->handover[i].samples = 0;
		ng_waits->handover[i].time_us = 0;
		ng_waits->nhandover++;
	}
	ng_waits->handover[i].samples += samples;
	ng_waits->handover[i].time_us += time_us;
}

/*
 * ng_waits_window_mark
 *		The sampler, loading the saved profile: e's samples were counted
 *		before the start, in no window.  Takes window_lock.
 */
void
ng_waits_window_mark(NgWaitEntry *e)
{
	LWLockAcquire(ng_waits->window_lock, LW_EXCLUSIVE);
	window_see(e, e);
	LWLockRelease(ng_waits->window_lock);
}
