/*-------------------------------------------------------------------------
 *
 * reset.h
 *		Resets (reset.c): pg_stat_statements_reset's semantics.
 *
 * Locks: caller holds no lock of ours.  A full reset takes every partition
 * lock exclusively, in index order; a partial one takes them one at a time.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_RESET_H
#define NG_RESET_H

#include "datatype/timestamp.h"

#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

extern TimestampTz ng_store_reset(Oid userid, Oid dbid, uint64 queryid,
								  bool minmax_only);

#pragma GCC visibility pop

#endif							/* NG_RESET_H */
