/*-------------------------------------------------------------------------
 *
 * pg_stat_statements_ng.h
 *		What every file of pg_stat_statements_ng needs: the name, the key
 *		of a statistics row, the two kinds of counted work, and compat.h.
 *		Each module has a header of its own for the rest (the table in
 *		docs/design.md lists them); include those only where they are used.
 *
 * The architecture in one paragraph (docs/design.md has the long form):
 * statistics live in two places.  Shared entries (store.c) sit in a
 * partitioned hash table in a DSA area; each partition has one LWLock.
 * Every backend also owns a fixed array of slots in main shared memory
 * (slots.c), which accumulate the counts of the statements it runs; only
 * the owner writes its slots, bracketing each write with a change count so
 * that readers copy them consistently without a lock.  A reader
 * (funcs.c) adds, partition by partition and under that partition's lock
 * in shared mode, the entries and every slot bound to the partition.  A
 * backend moves ("folds") a slot's counts into its entry only while
 * holding the partition lock exclusively, so a read sees each execution
 * exactly once.  Entries are evicted by a clock sweep (evict.c) that never
 * waits for a lock and never takes an entry a slot is bound to.  Query
 * texts are normalized and kept in the same DSA area (qtext.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_STAT_STATEMENTS_NG_H
#define PG_STAT_STATEMENTS_NG_H

#include "compat.h"

#define NG_NAME					"pg_stat_statements_ng"

/* The key of a statistics row: one per (user, database, queryid, toplevel) */
typedef struct NgKey
{
	Oid			userid;
	Oid			dbid;
	uint64		queryid;
	bool		toplevel;
	/* padding is always zeroed: keys are hashed and compared as bytes */
} NgKey;

typedef enum NgKind
{
	NG_PLAN = 0,
	NG_EXEC,
	NG_NUM_KINDS
} NgKind;

#endif							/* PG_STAT_STATEMENTS_NG_H */
