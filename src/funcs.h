/*-------------------------------------------------------------------------
 *
 * funcs.h
 *		The SQL functions (funcs.c, funcs_statements.c, history_funcs.c), and
 *		the shapes of their results, for dropin.c's entry points.
 *
 * Locks: none held by the caller (a function call from SQL).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_FUNCS_H
#define NG_FUNCS_H

#include "fmgr.h"

#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

/*
 * Shapes of the statement-listing functions: pg_stat_statements' API
 * versions, and ours; the columns of each are columns.h's.
 */
typedef enum NgApi
{
	NG_API_PGSS_1_0,
	NG_API_PGSS_1_1,
	NG_API_PGSS_1_2,
	NG_API_PGSS_1_3,
	NG_API_PGSS_1_8,
	NG_API_PGSS_1_9,
	NG_API_PGSS_1_10,
	NG_API_PGSS_1_11,
	NG_API_PGSS_1_12,
	NG_API_NG_1_0,				/* pg_stat_statements_ng 1.0: 1.12's shape */
	NG_API_NG_1_2				/* 1.2: 1.0's, then fingerprint */
} NgApi;

/* columns.h's bounds: the newest API (a new one moves it), and none */
#define NG_API_LAST		NG_API_NG_1_2
#define NG_API_NONE		(NG_API_LAST + 1)

/* the extension name the drop-in's SQL functions belong to */
#define NG_DROPIN_NAME	"pg_stat_statements"

extern void ng_check_loaded(void);
extern void ng_check_loaded_as(const char *name);
extern Datum ng_sql_statements(FunctionCallInfo fcinfo, NgApi api,
							   bool showtext);
extern Datum ng_sql_statements_since(FunctionCallInfo fcinfo, NgApi api,
									 bool showtext, int64 since,
									 uint64 generation);

#pragma GCC visibility pop

#endif							/* NG_FUNCS_H */
