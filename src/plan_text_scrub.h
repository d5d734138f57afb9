/*-------------------------------------------------------------------------
 *
 * plan_text_scrub.h
 *		The plan text's scrubber (plan_text_scrub.c): the constants of an
 *		EXPLAIN text replaced by $n, and the text cut to a size.
 *
 * Pure text functions: no locks, no catalog access; they read exactly the
 * bytes they are given (no terminator is needed) and palloc their result.
 * Used by plan_text.c and by its fuzzer (plan_text_fuzz.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_PLAN_TEXT_SCRUB_H
#define NG_PLAN_TEXT_SCRUB_H

#pragma GCC visibility push(hidden)

/* the line that ends a text cut by ng_plan_text_cut */
#define NG_PLAN_TEXT_CUT_MARKER		"... (plan text cut here)"

/* Functions in plan_text_scrub.c */
extern char *ng_plan_text_scrub(const char *in, int len, int *outlen);
extern int	ng_plan_text_cut(char *text, int len, int max);

#pragma GCC visibility pop

#endif							/* NG_PLAN_TEXT_SCRUB_H */
