/*-------------------------------------------------------------------------
 *
 * persist.h
 *		Statistics across clean restarts (persist.c): the keeper worker.
 *
 * ng_persist_startup: the postmaster, creating shared memory (no lock of
 * ours exists yet).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_PERSIST_H
#define NG_PERSIST_H

#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

extern void ng_persist_startup(void);

#pragma GCC visibility pop

#endif							/* NG_PERSIST_H */
