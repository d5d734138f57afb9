/*-------------------------------------------------------------------------
 *
 * qtext_scan.h
 *		The core SQL scanner's view of a statement (qtext_scan.c): a scanner
 *		with explicit settings, a statement's tokens, and its literal
 *		tokens.
 *
 * Used by qtext.c, and by fingerprint.c (tokens).  No locks; errors from
 * the scanner propagate to the caller, which catches them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_QTEXT_SCAN_H
#define NG_QTEXT_SCAN_H

#include "parser/scanner.h"

#pragma GCC visibility push(hidden)

/* what a token is, from its text */
typedef enum ScanKind
{
	SCAN_OTHER = 0,
	SCAN_STRING,				/* a string constant of any form */
	SCAN_NUMBER,				/* a numeric constant but a plain integer */
	SCAN_INTEGER,				/* digits only */
	SCAN_PARAM,					/* $n */
	SCAN_WORD,					/* an identifier or a keyword */
	SCAN_OPEN,
	SCAN_CLOSE,
	SCAN_COMMA,
	SCAN_SEMI,
	SCAN_CAST,					/* :: */
	SCAN_DOT
} ScanKind;

/* a token: where it is in the text, what it is */
typedef struct ScanToken
{
	int			location;
	int			length;
	ScanKind	kind;
	int			keyword;		/* index into ScanKeywords, or -1 */
} ScanToken;

/* a literal token: where it starts in the statement, and its length */
typedef struct NgLiteral
{
	int			location;
	int			length;
} NgLiteral;

extern core_yyscan_t ng_scan_begin(const char *stmt, core_yy_extra_type *extra,
								   bool scs);
extern ScanToken *ng_scan_tokens(const char *stmt, int len, bool scs, int *n);
extern NgLiteral *ng_scan_literals(const char *stmt, int len, bool scs,
								   bool keep_integers, int *n, int *max_param);

#pragma GCC visibility pop

#endif							/* NG_QTEXT_SCAN_H */
