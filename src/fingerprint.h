/*-------------------------------------------------------------------------
 *
 * fingerprint.h
 *		A statement's fingerprint (fingerprint.c): a hash of its normalized
 *		text's tokens, by rules that hold on every server and major.
 *
 * Locks: none; a scanner error propagates to the caller.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_FINGERPRINT_H
#define NG_FINGERPRINT_H

#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

extern bool ng_fingerprint(const char *s, int len, uint64 *fp);

#pragma GCC visibility pop

#endif							/* NG_FINGERPRINT_H */
