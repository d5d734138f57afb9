/*-------------------------------------------------------------------------
 *
 * slots.h
 *		Per-backend slots in main shared memory (the files of
 *		src/slots/, slots_int.h): the hot path's counting, binding slots
 *		to entries, folding, maintenance.
 *
 * Owns: NgSlot and NgBackendSlots.  Only the owning process writes its
 * slots, bracketing each write with the slot's change count; others read
 * them with ng_slot_try_read, without lock.  Counts move into an entry only
 * under the entry's partition lock held exclusively.
 *
 * Locks: ng_slots_count, ng_slots_note_parse, ng_slots_maintenance are
 * called by the owner holding no lock of ours.  Counting a statement that
 * already has a slot takes no lock and no atomic read-modify-write (but for
 * two rare events, count.c); ng_slots_note_parse waits for the
 * partition lock only to create an entry; ng_slots_maintenance never waits
 * for a lock.  ng_slots_of_proc, ng_slot_at, ng_slot_try_read and the walk
 * over a partition's slots (ng_partition_slots_next): no lock (a
 * reader that must see every slot of a partition consistently holds that
 * partition's lock, shared).  ng_stats_read: caller holds no lock of ours
 * (it takes the spinlock, and may wait for an owner writing its refused
 * counts).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_SLOTS_H
#define NG_SLOTS_H

#include "utils/dsa.h"

#include "counters.h"
#include "hist.h"
#include "qtext.h"
#include "shmem.h"

#pragma GCC visibility push(hidden)

/* How often (at most) a backend runs its slot maintenance, in ms */
#define NG_MAINTENANCE_INTERVAL_MS	1000

/*
 * A slot's latency histogram is a chain of cells, one per (kind, bucket) it
 * has counted since its last fold, taken from its process's cell pool
 * (NgBackendSlots): about NG_CELLS_PER_SLOT per slot, shared by all the
 * process's slots, so that a statement with a wide spread of durations can
 * use more than one with one duration.  Cells are written by the slot's
 * owner inside the slot's write section, like the rest of the slot.  A
 * count that reaches PG_UINT32_MAX goes on in a new cell of the same
 * bucket; a fold adds the cells into the entry's 64-bit groups.
 */
#define NG_CELLS_PER_SLOT		5
#define NG_NO_CELL				0xFFFF


/* A slot: counts of one statement, written by its owning backend only */
typedef struct NgSlot
{
	/*
	 * Odd while the owner writes.  The owner increments it (a plain store)
	 * before and after every change, with write barriers; readers retry until
	 * they see the same even value before and after their copy.
	 */
	uint32		changecount;
	uint32		partition_generation;	/* for unbound slots */
	uint32		minmax_generation;	/* entry's, when counts began */
	bool		in_use;
	uint8		partition;		/* of key */
	uint16		hist_head;		/* first cell, or NG_NO_CELL */
	uint16		hist_cells;		/* number of cells in the chain */
	NgKey		key;
	dsa_pointer entry;			/* bound entry, or InvalidDsaPointer */

	/*
	 * Plan statistics (plans.h): the plan all of the slot's executions since
	 * its last fold ran (0: none, or none tracked), and the start of the
	 * first of them.  Set only while the slot counts no execution.
	 */
	uint64		planid;
	TimestampTz plan_first_at;
	NgCounters	counters;		/* since last fold, but the histogram */
} NgSlot;

/*
 * Executions this process counted without a slot or an entry: refused a
 * new entry by the admission filter (count.c).  They belong to the
 * info figures evicted_calls (calls, exec_time), unadmitted_calls (calls)
 * and counts_discarded (failed), which ng_stats_read (area.c) sums from
 * the shared figures and every area.  Only the area's owner writes them,
 * inside a write section bracketed by refused_changecount as a slot's; they
 * are never folded or cleared but by the owner, and outlive the process
 * (the next owner of the area adds to them), so that no count moves while
 * a reader sums.  They count for the info figures only while
 * refused_generation is NgSharedState.stats_generation: a full reset bumps
 * that, which voids them; the owner clears them when it next writes.
 */
typedef struct NgRefusedCounts
{
	int64		calls;
	double		exec_time;
	int64		failed;
	int64		refusals;		/* executions the admission filter refused
								 * (admissions_refused) */
} NgRefusedCounts;

/*
 * Slot area of one process (indexed by its PGPROC number).  A client
 * backend's has ng_slots_per_backend slots, any other process's
 * NG_OTHER_PROC_SLOTS at most (area.c).  nslots, ncells and
 * slots_offset are set by the postmaster and never change.
 */
typedef struct NgBackendSlots
{
	uint32		nslots;			/* slots in this area */
	bool		active;			/* owner counts here: set at first use,
								 * cleared at exit after folding */
	uint32		refused_changecount;	/* odd while the owner writes refused */
	uint32		refused_generation; /* the stats_generation refused is of */
	NgRefusedCounts refused;

	uint32		ncells;			/* of the cell pool: NG_CELLS_PER_SLOT x
								 * nslots; the pool follows the map */
	uint32		slots_offset;	/* bytes from the area's start to its first
								 * slot, which follows the pool */

	/*
	 * Which partition each slot counts for (0xFF: free).  Written by the
	 * owner before a slot's counts begin; readers scan it to find the slots
	 * of one partition without touching every slot.
	 */
	uint8		partition_of[FLEXIBLE_ARRAY_MEMBER];
} NgBackendSlots;

#define NG_SLOT_FREE			0xFF

/*
 * Slots of a process that is not a client backend (autovacuum, background
 * and parallel workers, walsenders), or ng_slots_per_backend if fewer:
 * such a process runs few distinct statements, if any (docs/design.md).
 */
#define NG_OTHER_PROC_SLOTS		16

/*
 * Which partitions each process has slots in: bit p of its partition mask
 * (ng_slots_partition_masks()[procno]) is set while a slot of its area has
 * partition_of p, and may stay set a while after.  The owner alone writes
 * it, with plain stores, on its rare paths only (binding a slot, releasing
 * one, attaching; never counting): the bit is set before the map says p
 * (the write barrier that opens the slot's write section orders the two),
 * and cleared once the last such slot is folded and free, under the
 * partition lock held exclusively.  Readers, who hold that lock in shared
 * mode, skip a process whose bit is clear without looking at its area: the
 * slots of idle and unused connections cost a read one bit each.
 */
extern volatile uint32 *ng_slots_partition_masks(void);

/*
 * A walk over the slots that may count for partition p: those whose
 * partition_of is p, in the areas of the processes whose partition mask
 * has p (the others are skipped one bit each).  A slot found may be
 * changing: the caller copies it (ng_slot_try_read) and checks the copy.
 *
 *		NgPartitionSlots it;
 *		NgBackendSlots *area;
 *		int			i;
 *
 *		ng_partition_slots_begin(&it, p);
 *		while (ng_partition_slots_next(&it, &area, &i))
 *			... ng_slot_at(area, i) ...
 *
 * No lock is taken; a caller that must see every such slot holds p's
 * partition lock.
 */
typedef struct NgPartitionSlots
{
	int			p;				/* the partition */
	int			nprocs;			/* processes that have an area */
	int			proc;			/* the process whose area is walked */
	int			next;			/* its next slot to look at */
	NgBackendSlots *area;		/* its area; NULL: find the next process */
	volatile uint32 *masks;		/* ng_slots_partition_masks() */
}			NgPartitionSlots;

extern void ng_partition_slots_begin(NgPartitionSlots * it, int p);
extern bool ng_partition_slots_next(NgPartitionSlots * it,
									NgBackendSlots **area, int *index);

extern Size ng_slots_shmem_size(void);
extern Size ng_slots_areas_size(void);
extern void ng_slots_init_shmem(char *base);
extern NgBackendSlots *ng_slots_of_proc(int procno);
extern uint64 ng_slots_total(void);
extern int	ng_slots_most_cells(void);
extern NgSlot *ng_slot_at(NgBackendSlots *area, int index);
#define NG_SLOT_READ_SPINS		1000
extern bool ng_slot_try_read(NgBackendSlots *area, const NgSlot *slot,
							 NgSlot *copy, NgHistCell *cells);
extern void ng_stats_read(NgSharedStats *stats);
extern void ng_slots_count(const NgKey *key, const NgSample *sample,
						   const NgTextSource *src);
extern void ng_slots_note_parse(const Query *query, const char *source_text,
								JumbleState *jstate, bool toplevel);
extern void ng_slots_maintenance(TimestampTz now);

/* when ng_slots_maintenance is next due (backend-local) */
extern TimestampTz ng_slots_next_maintenance;

/*
 * ng_slots_maintenance_if_due
 *		At the end of a top-level statement that started at now: run the
 *		maintenance if its interval has passed (one comparison otherwise).
 */
static inline void
ng_slots_maintenance_if_due(TimestampTz now)
{
	if (unlikely(now >= ng_slots_next_maintenance))
		ng_slots_maintenance(now);
}

#pragma GCC visibility pop

#endif							/* NG_SLOTS_H */
