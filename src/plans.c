/*-------------------------------------------------------------------------
 *
 * plans.c
 *		Plan statistics: each shared entry's plan array (plans.h), filled by
 *		the folds of slots, and the plan texts, made by the counting backend
 *		for a (statement, plan) new to it and kept until its slot's fold.
 *
 * Why a file of its own: what a statement's plans add to the slot protocol
 * is small and kept out of the slot files, which call in here at three
 * points: when an execution's plan differs from its slot's (the slot is
 * folded first, so that a slot's counts since its last fold are of one
 * plan), before a fold's lock (memory), and in a fold (the records).
 *
 * Locking.  An entry's plan array is allocated with no partition lock held
 * (ng_plans_prepare keeps it as this backend's spare), installed under the
 * partition lock held exclusively, and freed with the entry, whose memory
 * is released only when no slot is bound to it: a backend holding a slot
 * bound to the entry may read entry->plans and the records' planid and
 * text without lock, as a hint.  Records are written under the partition
 * lock held exclusively; readers hold it shared.  A plan text is made
 * (plan_text.h) and allocated in DSA with no lock of ours held, kept in
 * this backend's list of waiting texts, and installed into its record, or
 * freed, by the next fold of its slot.  Plan text memory and the info
 * figures are atomic counters (shmem.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "mb/pg_wchar.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "alloc.h"
#include "guc.h"
#include "plan_text.h"
#include "plans.h"

int			ng_plans_per_statement = 8;
int			ng_plan_text_memory_kb = 4096;

/*
 * Plan texts a backend makes: a token bucket of NG_PLAN_TEXT_BURST texts,
 * refilled at NG_PLAN_TEXTS_PER_SECOND.  A plan whose text is skipped gets
 * one the next time it is new to a slot of this backend.
 */
#define NG_PLAN_TEXT_BURST			10
#define NG_PLAN_TEXTS_PER_SECOND	10

/* backend-local: a plan array allocated before a fold's lock, or invalid */
static dsa_pointer plans_spare = InvalidDsaPointer;

/* backend-local: the text waiting for the next fold of each of my slots */
typedef struct NgPlanPending
{
	uint64		planid;
	dsa_pointer text;			/* invalid: none waits */
	int32		text_len;
} NgPlanPending;

static NgPlanPending *plans_pending = NULL;
static int	plans_npending = 0;

/* backend-local: the token bucket */
static double plans_tokens = NG_PLAN_TEXT_BURST;
static TimestampTz plans_tokens_at = 0;

/*
 * ng_plans_define_guc
 *		Define plans_per_statement and plan_text_memory.
 */
void
ng_plans_define_guc(void)
{
	DefineCustomIntVariable("pg_stat_statements_ng.plans_per_statement",
							"Sets how many plans of each statement are counted apart.",
							"The plans beyond it are counted together, in one \"other\" row.  Takes effect at server start.",
							&ng_plans_per_statement,
							8,
							1,
							NG_PLANS_PER_STATEMENT_MAX,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("pg_stat_statements_ng.plan_text_memory",
							"Sets the shared memory available for plan texts.",
							"A plan whose text does not fit is counted without text.",
							&ng_plan_text_memory_kb,
							4096,
							0,
							INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_KB,
							NULL, NULL, NULL);
}

/*
 * plans_dsa_allocate
 *		ng_dsa_allocate, or, while the one-shot fault (guc.h) is armed, a
 *		refusal as DSA's when the area cannot grow: InvalidDsaPointer, the
 *		fault disarmed.  No partition lock held.
 */
static dsa_pointer
plans_dsa_allocate(Size size, int flags, NgDebugFault fault)
{
	if (NG_DEBUG_FAULT(fault))
	{
		ng_debug_fault_armed = false;
		return InvalidDsaPointer;
	}
	return ng_dsa_allocate(size, flags);
}

/* bytes of a plan array of nplans records and "other" */
static Size
plans_array_size(int nplans)
{
	return offsetof(NgPlanArray, records) +
		sizeof(NgPlanRecord) * (nplans + 1);
}

/*
 * ng_plans_prepare
 *		Before a fold's lock, for a slot counting planid for entry (NULL:
 *		not known yet): allocate a plan array as this backend's spare,
 *		unless the entry has one (read as a hint) or a spare is at hand.
 *		Caller holds no partition lock.
 */
void
ng_plans_prepare(const NgSharedEntry *entry, uint64 planid)
{
	if (planid == 0 || DsaPointerIsValid(plans_spare) ||
		(entry != NULL && DsaPointerIsValid(entry->plans)))
		return;
	plans_spare = plans_dsa_allocate(plans_array_size(ng_plans_per_statement),
									 DSA_ALLOC_ZERO,
									 NG_FAULT_PLAN_ARRAY_REFUSED);
}

/*
 * ng_plans_prepared_release
 *		After a fold's lock: free the spare a fold did not take.
 */
void
ng_plans_prepared_release(void)
{
	if (DsaPointerIsValid(plans_spare))
	{
		dsa_free(ng_area, plans_spare);
		plans_spare = InvalidDsaPointer;
	}
}

/*
 * plans_array_install
 *		entry's plan array, given the spare if it has none; NULL if it has
 *		none and there is no spare.  Partition lock held exclusively.
 */
static NgPlanArray *
plans_array_install(NgSharedEntry *entry)
{
	NgPlanArray *arr;

	if (DsaPointerIsValid(entry->plans))
		return ng_plans_array(entry);
	if (!DsaPointerIsValid(plans_spare))
		return NULL;
	entry->plans = plans_spare;
	plans_spare = InvalidDsaPointer;
	arr = ng_plans_array(entry);
	arr->nplans = ng_plans_per_statement;
	for (int r = 0; r <= arr->nplans; r++)
		arr->records[r].text = InvalidDsaPointer;
	return arr;
}

/*
 * ng_plans_array_ensure
 *		Give entry, which a slot of mine is bound to (so that it stays in
 *		memory), a plan array if it has none (read as a hint): allocated
 *		with no lock held, installed under the partition lock, exclusive,
 *		freed if another backend installed one first.  Run when a slot
 *		begins a plan, not at its fold: a fold at exit cannot allocate
 *		(alloc.c).  Caller holds no lock of ours.
 */
void
ng_plans_array_ensure(NgSharedEntry *entry)
{
	NgSharedPartition *part;

	if (DsaPointerIsValid(entry->plans))
		return;
	ng_plans_prepare(entry, 1);
	if (!DsaPointerIsValid(plans_spare))
		return;
	part = ng_partition(entry->hash);
	LWLockAcquire(part->lock, LW_EXCLUSIVE);
	if (!entry->dead)
		(void) plans_array_install(entry);
	LWLockRelease(part->lock);
	ng_plans_prepared_release();
}

/*
 * plans_find
 *		arr's record of planid, or NULL.
 */
static NgPlanRecord *
plans_find(NgPlanArray *arr, uint64 planid)
{
	for (int r = 0; r < arr->nplans; r++)
	{
		if (arr->records[r].planid == planid)
			return &arr->records[r];
		if (arr->records[r].planid == 0)
			break;				/* records are taken in order, never freed */
	}
	return NULL;
}

/*
 * plans_other_of
 *		arr's "other" record, its first execution at first_at if it had
 *		none.
 */
static NgPlanRecord *
plans_other_of(NgPlanArray *arr, TimestampTz first_at)
{
	NgPlanRecord *other = &arr->records[arr->nplans];

	if (other->calls == 0)
	{
		other->first_seen = first_at;
		other->min_time = -1;
		other->max_time = -1;
	}
	return other;
}

/*
 * plans_record_of
 *		arr's record of planid: its own (taken if free, its first execution
 *		at first_at), or "other" when none is left.
 */
static NgPlanRecord *
plans_record_of(NgPlanArray *arr, uint64 planid, TimestampTz first_at)
{
	for (int r = 0; r < arr->nplans; r++)
	{
		NgPlanRecord *rec = &arr->records[r];

		if (rec->planid == planid)
			return rec;
		if (rec->planid == 0)
		{
			rec->planid = planid;
			rec->first_seen = first_at;
			rec->min_time = -1;
			rec->max_time = -1;
			return rec;
		}
	}
	return plans_other_of(arr, first_at);
}

/* a plan text freed, or not kept */
static void
plans_text_free(dsa_pointer text, int len)
{
	dsa_free(ng_area, text);
	pg_atomic_fetch_sub_u64(&ng_shared->plan_text_bytes, (uint64) len + 1);
}

/*
 * plans_pending_take
 *		Install the text waiting for my slot i into rec, if it is that
 *		plan's and rec has none; else free it.  no_room: the slot's
 *		executions found no record of their plan's own (the "other" one, or
 *		no plan array), so its text is counted in plan_texts_dropped; a text
 *		whose statement was reset or evicted meanwhile is not a loss.
 *		Partition lock held exclusively.
 */
static void
plans_pending_take(int i, NgPlanRecord *rec, bool no_room)
{
	NgPlanPending *pend;

	if (i < 0 || i >= plans_npending ||
		!DsaPointerIsValid(plans_pending[i].text))
		return;
	pend = &plans_pending[i];
	if (rec != NULL && !no_room && rec->planid == pend->planid &&
		!DsaPointerIsValid(rec->text))
	{
		rec->text = pend->text;
		rec->text_len = pend->text_len;
		rec->encoding = GetDatabaseEncoding();
	}
	else
	{
		if (no_room)
			pg_atomic_fetch_add_u64(&ng_shared->plan_texts_dropped, 1);
		plans_text_free(pend->text, pend->text_len);
	}
	pend->text = InvalidDsaPointer;
}

/*
 * ng_plans_fold
 *		Add the executions slot (my slot i; -1: not mine) counted since its
 *		last fold, all of plan slot->planid, to entry's record of that plan,
 *		and install the plan text waiting for the slot.  entry NULL: the
 *		counts go nowhere (a reset voided them, or the statement has no
 *		entry); the text is freed.  clear_minmax: the slot's min/max are
 *		from before a min/max reset.  Without a plan array (DSA refused
 *		one), the calls are counted in plan_calls_lost.  Partition lock held
 *		exclusively; nothing is allocated.
 */
void
ng_plans_fold(NgSharedEntry *entry, const NgSlot *slot, int i,
			  bool clear_minmax)
{
	const NgCounters *c = &slot->counters;
	int64		calls = c->calls[NG_EXEC];
	NgPlanArray *arr;
	NgPlanRecord *rec = NULL;
	bool		no_room = false;

	if (entry != NULL && slot->planid != 0 && calls > 0)
	{
		arr = plans_array_install(entry);
		no_room = true;
		if (arr == NULL)
			pg_atomic_fetch_add_u64(&ng_shared->plan_calls_lost,
									(uint64) calls);
		else
		{
			bool		minmax = !clear_minmax &&
				ng_counters_has_minmax(c, NG_EXEC);

			NgPlanRecord add = {
				.calls = calls,
				.total_time = c->total_time[NG_EXEC],
				.min_time = minmax ? c->min_time[NG_EXEC] : -1,
				.max_time = minmax ? c->max_time[NG_EXEC] : -1,
				.rows = c->rows,
				.first_seen = slot->plan_first_at,
				.last_seen = c->last_executed_at,
			};

			rec = plans_record_of(arr, slot->planid, slot->plan_first_at);
			ng_plan_record_add(rec, &add);
			no_room = (rec == &arr->records[arr->nplans]);
		}
	}
	plans_pending_take(i, rec, no_room);
}

/*
 * ng_plans_record_locked
 *		A sample counted straight into entry, without a slot: add it to its
 *		plan's record.  False, having changed nothing, if that needs a plan
 *		array the entry lacks and no spare is at hand, or (unless
 *		may_create) a record its plan lacks: the caller then counts the
 *		sample in a slot, whose fold makes them.  Partition lock held
 *		exclusively.
 */
bool
ng_plans_record_locked(NgSharedEntry *entry, const NgSample *sample,
					   bool may_create)
{
	NgPlanArray *arr;
	NgPlanRecord *rec;
	NgPlanRecord add = {
		.calls = 1,
		.total_time = sample->time,
		.min_time = sample->time,
		.max_time = sample->time,
		.rows = (int64) sample->rows,
		.first_seen = sample->started_at,
		.last_seen = sample->started_at,
	};

	if (sample->planid == 0 || sample->kind != NG_EXEC ||
		sample->failure != NG_SUCCEEDED)
		return true;
	arr = may_create ? plans_array_install(entry) : ng_plans_array(entry);
	if (arr == NULL)
	{
		if (!may_create)
			return false;
		pg_atomic_fetch_add_u64(&ng_shared->plan_calls_lost, 1);
		return true;
	}
	rec = plans_find(arr, sample->planid);
	if (rec == NULL)
	{
		if (!may_create && arr->records[arr->nplans - 1].planid == 0)
			return false;		/* a new plan, with room for it */
		rec = plans_record_of(arr, sample->planid, sample->started_at);
	}
	ng_plan_record_add(rec, &add);
	return true;
}

/*
 * ng_plans_clear_minmax
 *		A reset of entry's min/max: its plans' too.  Partition lock held
 *		exclusively.
 */
void
ng_plans_clear_minmax(NgSharedEntry *entry)
{
	NgPlanArray *arr = ng_plans_array(entry);

	if (arr == NULL)
		return;
	for (int r = 0; r <= arr->nplans; r++)
	{
		arr->records[r].min_time = -1;
		arr->records[r].max_time = -1;
	}
}

/*
 * ng_plans_free
 *		Free entry's plan array and texts, as the entry's memory is released
 *		(no slot is bound to it).  Partition lock held exclusively, or the
 *		entry owned (store.c).
 */
void
ng_plans_free(NgSharedEntry *entry)
{
	NgPlanArray *arr = ng_plans_array(entry);

	if (arr == NULL)
		return;
	for (int r = 0; r <= arr->nplans; r++)
		if (DsaPointerIsValid(arr->records[r].text))
			plans_text_free(arr->records[r].text, arr->records[r].text_len);
	dsa_free(ng_area, entry->plans);
	entry->plans = InvalidDsaPointer;
}

/*
 * plans_token
 *		Take a token of the bucket, if there is one.
 */
static bool
plans_token(void)
{
	TimestampTz now = GetCurrentTimestamp();

	if (plans_tokens_at != 0 && now > plans_tokens_at)
		plans_tokens = Min(NG_PLAN_TEXT_BURST,
						   plans_tokens + (double) (now - plans_tokens_at) *
						   NG_PLAN_TEXTS_PER_SECOND / USECS_PER_SEC);
	plans_tokens_at = now;
	if (plans_tokens < 1)
		return false;
	plans_tokens -= 1;
	return true;
}

/*
 * plans_pending_of
 *		The waiting text of my slot i, the list grown if need be (NULL if it
 *		cannot be).
 */
static NgPlanPending *
plans_pending_of(int i)
{
	if (i >= plans_npending)
	{
		int			n = Max(i + 1, 2 * plans_npending);
		NgPlanPending *grown;

		grown = MemoryContextAllocExtended(TopMemoryContext,
										   sizeof(NgPlanPending) * n,
										   MCXT_ALLOC_NO_OOM);
		if (grown == NULL)
			return NULL;
		for (int k = 0; k < n; k++)
			grown[k].text = InvalidDsaPointer;
		if (plans_pending != NULL)
		{
			memcpy(grown, plans_pending, sizeof(NgPlanPending) * plans_npending);
			pfree(plans_pending);
		}
		plans_pending = grown;
		plans_npending = n;
	}
	return &plans_pending[i];
}

/*
 * plans_text_wanted
 *		Does the plan of sample, which my slot i is about to count for
 *		entry, need a text: none waits for it, and entry's record of it
 *		(read without lock, a hint) has none?  A plan with no record while
 *		the array is full goes to "other": no text is made for it, and it
 *		is counted in plan_texts_dropped.
 */
static bool
plans_text_wanted(NgPlanPending *pend, const NgSharedEntry *entry,
				  const NgSample *sample)
{
	dsa_pointer plans = entry->plans;

	if (DsaPointerIsValid(pend->text))
	{
		if (pend->planid == sample->planid)
			return false;
		plans_text_free(pend->text, pend->text_len);	/* a plan gone by */
		pend->text = InvalidDsaPointer;
	}
	if (DsaPointerIsValid(plans))
	{
		NgPlanArray *arr = dsa_get_address(ng_area, plans);
		NgPlanRecord *rec = plans_find(arr, sample->planid);

		if (rec != NULL && DsaPointerIsValid(rec->text))
			return false;
		if (rec == NULL && arr->records[arr->nplans - 1].planid != 0)
		{
			/* no room: it goes to "other", without a text */
			pg_atomic_fetch_add_u64(&ng_shared->plan_texts_dropped, 1);
			return false;
		}
	}
	return true;
}

/*
 * plans_text_copy
 *		text (len bytes) copied into DSA, NUL-terminated, within
 *		plan_text_memory; InvalidDsaPointer if it does not fit or DSA
 *		refused.  Counts nothing dropped.  Caller holds no partition lock.
 */
static dsa_pointer
plans_text_copy(const char *text, int len)
{
	dsa_pointer dp;

	if (pg_atomic_add_fetch_u64(&ng_shared->plan_text_bytes, (uint64) len + 1) >
		(uint64) ng_plan_text_memory_kb * 1024 ||
		!DsaPointerIsValid(dp = plans_dsa_allocate(len + 1, 0,
												   NG_FAULT_PLAN_TEXT_REFUSED)))
	{
		pg_atomic_fetch_sub_u64(&ng_shared->plan_text_bytes, (uint64) len + 1);
		return InvalidDsaPointer;
	}
	memcpy(dsa_get_address(ng_area, dp), text, len);
	((char *) dsa_get_address(ng_area, dp))[len] = '\0';
	return dp;
}

/*
 * ng_plans_text_restore
 *		A saved plan text (len bytes, no NUL among them) copied into DSA
 *		within plan_text_memory, for ng_plans_restore_locked; invalid if it
 *		does not fit (the caller counts it dropped).  Caller holds no
 *		partition lock.
 */
dsa_pointer
ng_plans_text_restore(const char *text, int len)
{
	return plans_text_copy(text, len);
}

/*
 * ng_plans_text_release
 *		Free a text of ng_plans_text_restore that no record took.  Any lock
 *		or none.
 */
void
ng_plans_text_release(dsa_pointer text, int len)
{
	plans_text_free(text, len);
}

/*
 * ng_plans_restore_locked
 *		Add a saved plan row (saved: its planid, counts and first/last
 *		seen; other: the statement's "other" row) to entry's plan array,
 *		installing the spare ng_plans_prepare made if it has none: to its
 *		plan's record (taken if free), or to "other" when none is left,
 *		plans_per_statement being lower than when it was saved.  Its text
 *		(*text, valid or not) goes to its own record if that has none, and
 *		*text is then cleared; else the caller frees it.  Partition lock
 *		held exclusively; nothing is allocated.
 */
NgPlanRestore
ng_plans_restore_locked(NgSharedEntry *entry, const NgPlanRecord *saved,
						bool other, dsa_pointer *text)
{
	NgPlanArray *arr = plans_array_install(entry);
	NgPlanRecord *rec;

	if (arr == NULL)
	{
		pg_atomic_fetch_add_u64(&ng_shared->plan_calls_lost,
								(uint64) saved->calls);
		return NG_PLAN_RESTORED_LOST;
	}
	rec = other ? plans_other_of(arr, saved->first_seen) :
		plans_record_of(arr, saved->planid, saved->first_seen);
	ng_plan_record_add(rec, saved);
	if (rec == &arr->records[arr->nplans])
		return other ? NG_PLAN_RESTORED_OTHER : NG_PLAN_RESTORED_FOLDED;
	if (DsaPointerIsValid(*text) && !DsaPointerIsValid(rec->text))
	{
		rec->text = *text;
		rec->text_len = saved->text_len;
		rec->encoding = saved->encoding;
		*text = InvalidDsaPointer;
	}
	return NG_PLAN_RESTORED_OWN;
}

/*
 * ng_plans_text_note
 *		My slot i, bound to entry (NULL: unbound, then no text), is about to
 *		count an execution of a plan new to it (its first since the slot's
 *		fold): make the plan's text, if entry's record of it has none, and
 *		keep it in DSA for the slot's next fold.  Texts are bounded in rate
 *		(the token bucket) and memory (plan_text_memory); a text not made or
 *		not kept is counted in plan_texts_dropped.  Caller holds no lock of
 *		ours (the text is made in a subtransaction).  Never raises an error.
 */
void
ng_plans_text_note(int i, const NgSharedEntry *entry, const NgSample *sample)
{
	NgPlanPending *pend;
	NgPlanTextResult result;
	char	   *text;
	int			len = 0;
	dsa_pointer dp;

	if (sample->qd == NULL || entry == NULL || sample->planid == 0 ||
		IsParallelWorker() || (pend = plans_pending_of(i)) == NULL ||
		!plans_text_wanted(pend, entry, sample))
		return;
	if (!plans_token())
	{
		pg_atomic_fetch_add_u64(&ng_shared->plan_texts_dropped, 1);
		return;
	}
	text = ng_plan_text_make((QueryDesc *) sample->qd, &len, &result);

	if (text == NULL)
	{
		pg_atomic_fetch_add_u64(&ng_shared->plan_texts_dropped, 1);
		return;
	}
	dp = plans_text_copy(text, len);
	pfree(text);
	if (!DsaPointerIsValid(dp))
	{
		pg_atomic_fetch_add_u64(&ng_shared->plan_texts_dropped, 1);
		return;
	}
	pend->planid = sample->planid;
	pend->text = dp;
	pend->text_len = len;
}
