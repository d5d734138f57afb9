/*-------------------------------------------------------------------------
 *
 * entry.h
 *		The layout of a shared entry (NgSharedEntry), and nothing else: no
 *		function.  The bottom of the entry's modules: store.c, entry_hist.c,
 *		entry_errors.c and evict.c each own some of its fields and include
 *		this; none of them includes another's header for the layout.
 *
 * Who owns which fields (who writes them; others call the owner):
 *   key, hash, pins, next, dead: the table (store.c); pins also the
 *     slots that bind to the entry and let it go.
 *   usage: eviction (evict.h).
 *   hist_mask, hist_first_group, hist_first, hist_groups: the histograms
 *     (entry_hist.h).
 *   errors_kept: the failures by SQLSTATE (entry_errors.h).
 *   counters, minmax_generation, stats_since, minmax_stats_since: the
 *     slots' folds, resets and the restore of a dump.
 *   qtext, text_len, encoding, text_stored_at, text_dropped: whoever makes,
 *     restores or drops an entry's text (a new statement's slot, the
 *     restore, store.c, text eviction in evict.c), with qtext.h's
 *     functions.
 *
 * Locks: each field names what protects it; nearly all are under the
 * partition lock of the entry's partition (store.h), exclusive to write.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_ENTRY_H
#define NG_ENTRY_H

#include "port/atomics.h"
#include "utils/dsa.h"

#include "counters.h"
#include "hist.h"

#pragma GCC visibility push(hidden)

/*
 * A shared entry, allocated in the DSA area and chained in its partition's
 * hash table.
 *
 * Layout.  A statement counted straight into its entry (slots/direct.c, a
 * statement its backend runs less often than its slots turn over) is a
 * cache miss on each line of the entry it touches, so what a lookup and a
 * plain sample touch comes first and together: the head (the key, the
 * chain, usage, the histogram's mask), then the counters, whose time, rows
 * and shared block counts end within the first three lines (local and
 * temporary block counts are added only when not zero: counters_record.h),
 * and whose last_executed_at and changed_generation share a line with the
 * start of the entry's own histogram group.  What only inserts, texts,
 * resets and readers touch comes last.  The whole fits DSA's 640-byte size
 * class (dsa.c), NG_ENTRY_SIZE_CLASS, so that each entry starts on a cache
 * line of its own and no allocation is wasted.
 *
 * Where a new counter goes (a row of columns.h, whose F rows are the
 * counters' members in order): at the end of the list, the end of
 * NgCounters, after changed_generation.  Coming after the block counts it
 * keeps the first assertion below (what a plain sample adds ends in the
 * first three lines); the second holds while last_executed_at and the
 * start of hist_first stay on one line, for five new 8-byte counters
 * (64-bit, with 128-byte lines: hist_first starts 48 bytes before a line
 * ends).  The entry is full at 640 bytes: a first new counter moves it to
 * DSA's next size class, 768 bytes (NG_ENTRY_SIZE_CLASS; README's sizing
 * and t/059_memory.pl's bytes per entry follow), room for sixteen
 * counters.  A counter a plain sample adds (counters_record.h, inline) goes
 * with the block counts in the first three lines instead, and needs this
 * layout planned again.
 */
typedef struct NgSharedEntry
{
	/* ---- what a lookup and a count touch ---- */
	NgKey		key;			/* immutable */
	uint32		hash;			/* immutable: hash of key */

	/*
	 * Number of backend slots bound to this entry.  Changed with the
	 * partition lock held in at least shared mode; read under the partition
	 * lock in exclusive mode by eviction and reset, so it cannot change while
	 * they look.
	 */
	pg_atomic_uint32 pins;
	dsa_pointer next;			/* partition lock: next in bucket chain */
	/* partition lock; read without lock by bound slots */
	uint32		minmax_generation;
	uint32		usage;			/* partition lock, exclusive to write */
	/* partition lock: its histogram groups (entry_hist.h) */
	uint32		hist_mask;		/* which there are */
	uint8		hist_first_group;	/* the one held here: 1 + its number, or 0
									 * (ng_entry_hist_first_bit) */

	/*
	 * Set, with the partition lock held exclusively, when a reset removes an
	 * entry that slots are still bound to: the entry is out of the hash and
	 * its memory is freed by whoever drops the last pin.  Bound slots read it
	 * without a lock.
	 */
	bool		dead;

	/*
	 * Partition lock: a text was dropped for this entry (text memory full)
	 * and counted in texts_dropped; cleared when a text is stored, so each
	 * statement kept without text is counted once.
	 */
	bool		text_dropped;
	/* partition lock: it has a block of failures by SQLSTATE (entry_errors.h) */
	bool		errors_kept;
	NgCounters	counters;		/* partition lock: the folded counts */
	uint64		hist_first[NG_HIST_GROUP_SIZE]; /* partition lock */

	/* ---- what inserts, texts, resets and readers touch ---- */
	dsa_pointer hist_groups;	/* partition lock: the other groups' chain */
	dsa_pointer qtext;			/* partition lock; InvalidDsaPointer: none */
	int			text_len;		/* partition lock */
	int			encoding;		/* partition lock */
	TimestampTz stats_since;	/* partition lock */
	TimestampTz minmax_stats_since; /* partition lock */
	/* partition lock; read as a hint without it: its plans (plans.h) */
	dsa_pointer plans;
} NgSharedEntry;

/* DSA's size class an entry takes (dsa.c: ..., 512, 640, 768, 896, ...) */
#define NG_ENTRY_SIZE_CLASS		640

StaticAssertDecl(sizeof(NgSharedEntry) <= NG_ENTRY_SIZE_CLASS,
				 "an entry fits its DSA size class (entry.h: where a new counter goes)");

/* the layout is planned for 64-bit platforms; elsewhere only its size holds */
#if SIZEOF_VOID_P == 8 && MAXIMUM_ALIGNOF == 8
StaticAssertDecl(offsetof(NgSharedEntry, counters) +
				 offsetof(NgCounters, local_blks_hit) <= 3 * PG_CACHE_LINE_SIZE,
				 "a count's counters end in the entry's first three lines (entry.h: where a new counter goes)");
StaticAssertDecl((offsetof(NgSharedEntry, counters) +
				  offsetof(NgCounters, last_executed_at)) / PG_CACHE_LINE_SIZE ==
				 offsetof(NgSharedEntry, hist_first) / PG_CACHE_LINE_SIZE,
				 "last_executed_at shares a line with the entry's histogram group (entry.h: where a new counter goes)");
#endif

#pragma GCC visibility pop

#endif							/* NG_ENTRY_H */
