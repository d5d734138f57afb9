/*-------------------------------------------------------------------------
 *
 * plan_text_stub.c
 *		A stand-in for the plan texts of plan_text.h: makes none.
 *
 * Locks: none.  Backend-local.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "plan_text.h"

/*
 * ng_plan_text_make
 *		No text: every plan's text is NULL.
 */
char *
ng_plan_text_make(QueryDesc *queryDesc, int *len, NgPlanTextResult *result)
{
	*len = 0;
	*result = NG_PLAN_TEXT_FAILED;
	return NULL;
}
