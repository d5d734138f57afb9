/*-------------------------------------------------------------------------
 *
 * plans.h
 *		Plan statistics (plans.c): per (statement, plan) calls, execution
 *		times, rows and a plan text, kept in a plan array of each shared
 *		entry, filled by folds; read by pg_stat_statements_ng_plans
 *		(plans_funcs.c).
 *
 * Owns: NgPlanArray and its records, the plan texts (DSA), this backend's
 * texts waiting for their slot's fold, the settings plans_per_statement
 * and plan_text_memory, the info figures plan_text_bytes,
 * plan_texts_dropped and plan_calls_lost (shmem.h).
 *
 * Locks, per function:
 *   ng_plans_prepare, ng_plans_prepared_release, ng_plans_text_note: no
 *     partition lock (they allocate in DSA, or free).
 *   ng_plans_array_ensure: no lock of ours; it takes the partition lock,
 *     exclusive, only to install an entry's plan array.
 *   ng_plans_fold, ng_plans_record_locked, ng_plans_clear_minmax,
 *     ng_plans_free: the entry's partition lock, exclusive (they allocate
 *     nothing; they may free).
 *   ng_plans_array: the partition lock, any mode.
 *   ng_plans_text_restore: no partition lock (it allocates in DSA).
 *   ng_plans_restore_locked: the partition lock, exclusive (it allocates
 *     nothing: the plan array is the spare ng_plans_prepare made).
 *   ng_plans_dump_rows: no lock of ours; it takes each partition lock in
 *     turn, shared (the view's read, plans_funcs.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_PLANS_H
#define NG_PLANS_H

#include "datatype/timestamp.h"
#include "utils/dsa.h"

#include "counters.h"
#include "entry.h"
#include "shmem.h"
#include "slots/slots.h"

#pragma GCC visibility push(hidden)

/*
 * One plan of a statement: what its folded executions add up to.  A record
 * is free while planid is 0; the array's last record, "other", collects the
 * plans that found no free record (its planid stays 0, shown as NULL).
 * min/max are -1 after a min/max reset until the next execution.
 */
typedef struct NgPlanRecord
{
	uint64		planid;
	int64		calls;
	double		total_time;		/* ms */
	double		min_time;
	double		max_time;
	int64		rows;
	TimestampTz first_seen;		/* start of its first execution */
	TimestampTz last_seen;		/* start of its last execution */
	dsa_pointer text;			/* its plan text, or InvalidDsaPointer */
	int32		text_len;
	int32		encoding;		/* of the text */
} NgPlanRecord;

/*
 * ng_plan_record_add
 *		dst += add: calls, time and rows summed, min/max widened (min below
 *		0: none), first_seen the earlier (0: not known), last_seen the later.
 *		Neither planid nor the text is touched.  For the fold (plans.c) and
 *		the view's rows (plans_funcs.c) alike.
 */
static inline void
ng_plan_record_add(NgPlanRecord *dst, const NgPlanRecord *add)
{
	if (add->first_seen != 0 &&
		(dst->first_seen == 0 || add->first_seen < dst->first_seen))
		dst->first_seen = add->first_seen;
	dst->calls += add->calls;
	dst->total_time += add->total_time;
	if (add->min_time >= 0)
	{
		if (dst->min_time < 0 || add->min_time < dst->min_time)
			dst->min_time = add->min_time;
		if (add->max_time > dst->max_time)
			dst->max_time = add->max_time;
	}
	dst->rows += add->rows;
	dst->last_seen = Max(dst->last_seen, add->last_seen);
}

/* An entry's plans: nplans records, then "other" */
typedef struct NgPlanArray
{
	int32		nplans;
	int32		pad;
	NgPlanRecord records[FLEXIBLE_ARRAY_MEMBER];
} NgPlanArray;

/* pg_stat_statements_ng.plans_per_statement, plan_text_memory (kB) */
#define NG_PLANS_PER_STATEMENT_MAX	1000
extern int	ng_plans_per_statement;
extern int	ng_plan_text_memory_kb;

/*
 * ng_plans_array
 *		entry's plan array, or NULL.  Caller holds the partition lock, any
 *		mode.
 */
static inline NgPlanArray *
ng_plans_array(const NgSharedEntry *entry)
{
	if (!DsaPointerIsValid(entry->plans))
		return NULL;
	return (NgPlanArray *) dsa_get_address(ng_area, entry->plans);
}

/*
 * ng_sample_plan_differs
 *		Is sample an execution of another plan than the one slot counts?
 *		The hot path's only test of plans: planning samples and failures
 *		never change a slot's plan.
 */
static inline bool
ng_sample_plan_differs(const NgSlot *slot, const NgSample *sample)
{
	return sample->planid != slot->planid && sample->kind == NG_EXEC &&
		sample->failure == NG_SUCCEEDED;
}

extern void ng_plans_define_guc(void);
extern void ng_plans_prepare(const NgSharedEntry *entry, uint64 planid);
extern void ng_plans_prepared_release(void);
extern void ng_plans_array_ensure(NgSharedEntry *entry);
extern void ng_plans_text_note(int slot, const NgSharedEntry *entry,
							   const NgSample *sample);
extern void ng_plans_fold(NgSharedEntry *entry, const NgSlot *slot, int i,
						  bool clear_minmax);
extern bool ng_plans_record_locked(NgSharedEntry *entry,
								   const NgSample *sample, bool may_create);
extern void ng_plans_clear_minmax(NgSharedEntry *entry);
extern void ng_plans_free(NgSharedEntry *entry);

/*
 * A saved plan row put back (ng_plans_restore_locked): into a record of its
 * own, into "other" as saved, into "other" because no record was left
 * (plans_per_statement lowered since), or nowhere (no plan array: its
 * calls are counted in plan_calls_lost)
 */
typedef enum NgPlanRestore
{
	NG_PLAN_RESTORED_OWN,
	NG_PLAN_RESTORED_OTHER,
	NG_PLAN_RESTORED_FOLDED,
	NG_PLAN_RESTORED_LOST
} NgPlanRestore;

extern dsa_pointer ng_plans_text_restore(const char *text, int len);
extern void ng_plans_text_release(dsa_pointer text, int len);
extern NgPlanRestore ng_plans_restore_locked(NgSharedEntry *entry,
											 const NgPlanRecord *saved,
											 bool other, dsa_pointer *text);

/*
 * A row of pg_stat_statements_ng_plans, for the dump: its statement, its
 * plan (rec.planid; 0 for the "other" row), its text (palloc'd, or NULL)
 */
typedef struct NgPlanDumpRow
{
	NgKey		key;
	bool		other;
	int			position;		/* its record's place in the array */
	NgPlanRecord rec;			/* text unused */
	char	   *text;
	int			text_len;
	int			encoding;
} NgPlanDumpRow;

/* plans_funcs.c */
extern int	ng_plans_dump_rows(int p, NgPlanDumpRow **rows);

#pragma GCC visibility pop

#endif							/* NG_PLANS_H */
