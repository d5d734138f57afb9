/*-------------------------------------------------------------------------
 *
 * setup.h
 *		Creating shared memory (setup.c): the shmem_request and
 *		shmem_startup hooks' part, for hooks.c.
 *
 * Locks: ng_store_init_shmem takes AddinShmemInitLock itself.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_SETUP_H
#define NG_SETUP_H

#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

extern void ng_store_request_shmem(void);
extern void ng_store_init_shmem(void);

#pragma GCC visibility pop

#endif							/* NG_SETUP_H */
