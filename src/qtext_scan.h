/*-------------------------------------------------------------------------
 *
 * qtext_scan.h
 *		The core SQL scanner's view of a statement (qtext_scan.c): a scanner
 *		with explicit settings, and the literal tokens of a statement.
 *
 * Used by qtext.c only.  No locks; errors from the scanner propagate to
 * the caller, which catches them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_QTEXT_SCAN_H
#define NG_QTEXT_SCAN_H

#include "parser/scanner.h"

#pragma GCC visibility push(hidden)

/* a literal token: where it starts in the statement, and its length */
typedef struct NgLiteral
{
	int			location;
	int			length;
} NgLiteral;

extern core_yyscan_t ng_scan_begin(const char *stmt, core_yy_extra_type *extra,
								   bool scs);
extern NgLiteral *ng_scan_literals(const char *stmt, int len, bool scs,
								   bool keep_integers, int *n, int *max_param);

#pragma GCC visibility pop

#endif							/* NG_QTEXT_SCAN_H */
