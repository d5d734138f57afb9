/*-------------------------------------------------------------------------
 *
 * entry_errors.h
 *		A shared entry's failed executions by SQLSTATE (entry_errors.c):
 *		one block in DSA per entry that has failed, chained from its
 *		partition, holding NG_ERROR_SQLSTATES SQLSTATEs and one row for
 *		the rest.  No error message is kept.
 *
 * Owns: NgEntryErrors, the partition's errors chain, the entry's
 * errors_kept flag, sqlstates_lost.
 *
 * Locks, per function:
 *   ng_entry_errors_add, ng_entry_errors_free: the
 *     entry's partition lock, exclusive.
 *   ng_entry_errors_copy: takes partition p's lock in shared mode itself;
 *     caller holds no partition lock.
 *   ng_entry_errors_lost: none (an atomic).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_ENTRY_ERRORS_H
#define NG_ENTRY_ERRORS_H

#include "entry.h"
#include "shmem.h"

#pragma GCC visibility push(hidden)

/* SQLSTATEs kept apart per statement; the rest share one row */
#define NG_ERROR_SQLSTATES	4

/* Failures of one SQLSTATE (0: the row of the rest) */
typedef struct NgErrorCount
{
	int32		sqlstate;		/* packed as errcode() takes it, or 0 */
	int32		pad;
	int64		errors;
	TimestampTz last_error_at;
} NgErrorCount;

/*
 * An entry's failures by SQLSTATE, in DSA: the SQLSTATEs in the order they
 * first failed, then the rest.  Chained from the partition's errors list;
 * made for an entry at its first failure, freed when the entry leaves the
 * table (ng_entry_unlink).
 */
typedef struct NgEntryErrors
{
	dsa_pointer next;			/* partition lock: next of the partition */
	dsa_pointer entry;			/* the entry's own pointer */
	NgKey		key;			/* the entry's key (immutable) */
	NgErrorCount counts[NG_ERROR_SQLSTATES + 1];
} NgEntryErrors;

extern bool ng_entry_errors_add(NgSharedPartition *part, NgSharedEntry *entry,
								dsa_pointer dp, const NgErrorCount *add,
								dsa_pointer *spare);
extern void ng_entry_errors_free(NgSharedPartition *part,
								 NgSharedEntry *entry, dsa_pointer dp);
extern int	ng_entry_errors_copy(int p, NgEntryErrors *buf, int room);
extern void ng_entry_errors_lost(int64 n);

#pragma GCC visibility pop

#endif							/* NG_ENTRY_ERRORS_H */
