/*-------------------------------------------------------------------------
 *
 * keeper_start.h
 *		Getting the keeper started, and knowing when it is not
 *		(keeper_start.c).
 *
 * ng_keeper_register: _PG_init.  ng_keeper_startup: the postmaster,
 * creating shared memory.  ng_keeper_note_running: the keeper.
 * ng_keeper_maintenance: a backend at maintenance, holding no lock.  The
 * others read atomics, under any lock.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_KEEPER_START_H
#define NG_KEEPER_START_H

#include "datatype/timestamp.h"

#include "pg_stat_statements_ng.h"
#include "shmem.h"

#pragma GCC visibility push(hidden)

extern void ng_keeper_register(void);
extern void ng_keeper_startup(void);
extern void ng_keeper_note_running(void);
extern bool ng_keeper_ran(void);
extern int64 ng_keeper_start_failures(void);
extern void ng_keeper_retry_start(TimestampTz now);

/* at maintenance: if the keeper is missing, try to start it (rate-limited) */
static inline void
ng_keeper_maintenance(TimestampTz now)
{
	if (unlikely(pg_atomic_read_u32(&ng_shared->keeper_missing) != 0))
		ng_keeper_retry_start(now);
}

#pragma GCC visibility pop

#endif							/* NG_KEEPER_START_H */
