/*-------------------------------------------------------------------------
 *
 * guc.h
 *		The settings (guc.c), and the faults tests inject in assertion
 *		builds.
 *
 * The variables are backend-local copies of the settings: no lock.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_GUC_H
#define NG_GUC_H

#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

typedef enum NgTrackLevel
{
	NG_TRACK_NONE,
	NG_TRACK_TOP,
	NG_TRACK_ALL
} NgTrackLevel;

/* pg_stat_statements_ng.admission: who gets a new entry on a full table */
typedef enum NgAdmission
{
	NG_ADMIT_RECURRING,			/* statements seen before (slots/admit.h) */
	NG_ADMIT_ALL				/* every statement, evicting (contrib) */
} NgAdmission;

extern int	ng_max;
extern int	ng_track;
extern int	ng_track_depth;		/* levels below it are tracked: 0, 1 or
								 * INT_MAX for track = none, top, all (one
								 * comparison for the hooks) */
extern bool ng_track_utility;
extern bool ng_track_planning;
extern bool ng_save;
extern int	ng_query_text_memory_kb;
extern int	ng_slots_per_backend;
#ifdef USE_ASSERT_CHECKING
extern bool ng_debug_fail_at_exit;
#endif
extern double ng_sample_rate;
extern int	ng_admission;

extern void ng_define_gucs(void);
extern bool ng_dropin_preloaded(void);

/*
 * Faults that tests inject, in assertion builds only (the setting
 * pg_stat_statements_ng.debug_fault does not exist in release builds, and
 * NG_DEBUG_FAULT is then false): an ERROR inside the recording of failures,
 * a full disk under the dump, each plan's text logged at ExecutorEnd (or
 * its making failing with an ERROR, caught: plan_text.c), the next DSA
 * allocation of a plan array or of a plan text refused (plans.c), Hash
 * Join nodes hashed as a node type the plan id does not know (planid.c),
 * or a stall, while the file "pgssng_stall" exists in the data directory
 * (at most 60 s), at a point a real process can be stopped at.
 */
typedef enum NgDebugFault
{
	NG_FAULT_NONE = 0,
	NG_FAULT_FAILURES_RECORD_ERROR, /* once, when recording a failure */
	NG_FAULT_STALL_WRITE,		/* a backend, inside a slot write section */
	NG_FAULT_STALL_READ,		/* a reader, holding every partition lock
								 * shared */
	NG_FAULT_STALL_RESTORE,		/* the keeper, before it restores the file */
	NG_FAULT_DUMP_FULL,			/* the dump's writes fail with ENOSPC */
	NG_FAULT_STALL_RESET,		/* a reset, between a partition's void and its
								 * copy for the history */
	NG_FAULT_PLAN_TEXT_LOG,		/* every ExecutorEnd logs its plan's text */
	NG_FAULT_PLAN_TEXT_ERROR,	/* the same, the text's making failing */
	NG_FAULT_PLAN_ARRAY_REFUSED,	/* once, a plan array's allocation */
	NG_FAULT_PLAN_TEXT_REFUSED, /* once, a plan text's allocation */
	NG_FAULT_PLANID_UNKNOWN_HASHJOIN	/* every Hash Join, in plan ids */
} NgDebugFault;

extern int	ng_debug_fault;
extern bool ng_debug_fault_armed;
#ifdef USE_ASSERT_CHECKING
#define NG_DEBUG_FAULT(f)	unlikely(ng_debug_fault == (f) && ng_debug_fault_armed)
extern void ng_debug_stall(void);
#else
#define NG_DEBUG_FAULT(f)	false
#define ng_debug_stall()	((void) 0)
#endif

#pragma GCC visibility pop

#endif							/* NG_GUC_H */
