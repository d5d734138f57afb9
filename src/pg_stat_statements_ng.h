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
 * (src/slots/), which accumulate the counts of the statements it runs;
 * only the owner writes its slots, bracketing each write with a change
 * count so that readers copy them consistently without a lock.  A reader
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

#include "miscadmin.h"

#include "compat.h"

#pragma GCC visibility push(hidden)

#define NG_NAME					"pg_stat_statements_ng"

/*
 * NG_HOT marks the definition of a backend-local variable that the hooks
 * read or write at every count (of a tracked statement, or of one counted
 * without a slot); what only new statements, sampling below 1 or setting
 * changes use is left out.  All of them go to one
 * section of the library (an ELF section the linker gathers whole, named
 * without a dot so that it is not merged into .data file by file), so that
 * a statement whose backend was switched out finds them on a few cache
 * lines instead of one line each, spread over the whole data segment
 * (docs/design.md, "Cache lines").  Only a placement: elsewhere, nothing.
 */
#if defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))
#define NG_HOT					__attribute__((section("ng_hot")))
#else
#define NG_HOT
#endif

/* The key of a statistics row: one per (user, database, queryid, toplevel) */
typedef struct NgKey
{
	Oid			userid;
	Oid			dbid;
	uint64		queryid;
	bool		toplevel;

	/*
	 * The padding after toplevel is not to be relied on: C lets a copy of the
	 * struct (an assignment, a pass by value) leave it as garbage, and
	 * compilers do, depending on inlining.  Keys are hashed and compared
	 * field by field (ng_key_equal), never as bytes.
	 */
} NgKey;

/*
 * ng_key_set
 *		The key of queryid run now by the current user in this database, at
 *		the top level or not (its padding left as it is: see NgKey).
 */
static inline void
ng_key_set(NgKey *key, uint64 queryid, bool toplevel)
{
	key->userid = GetUserId();
	key->dbid = MyDatabaseId;
	key->queryid = queryid;
	key->toplevel = toplevel;
}

/* are a and b the same key?  (not memcmp: see NgKey) */
static inline bool
ng_key_equal(const NgKey *a, const NgKey *b)
{
	return a->queryid == b->queryid && a->userid == b->userid &&
		a->dbid == b->dbid && a->toplevel == b->toplevel;
}

/*
 * ng_key_poison_padding
 *		Assertion builds fill a stored key's padding with garbage, as a
 *		struct copy may, different each time: code that hashes or compares
 *		keys as bytes then fails the tests, whatever the compiler does with
 *		the copies.
 */
static inline void
ng_key_poison_padding(NgKey *key)
{
#ifdef USE_ASSERT_CHECKING
	static uint8 garbage = 0;
	Size		used = offsetof(NgKey, toplevel) + sizeof(bool);

	memset((char *) key + used, ++garbage | 1, sizeof(NgKey) - used);
#endif
}

typedef enum NgKind
{
	NG_PLAN = 0,
	NG_EXEC,
	NG_NUM_KINDS
} NgKind;

#pragma GCC visibility pop

#endif							/* PG_STAT_STATEMENTS_NG_H */
