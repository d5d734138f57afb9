/*-------------------------------------------------------------------------
 *
 * area.c
 *		The slot areas in main shared memory: their size and layout, their
 *		initialization, the lock-free read of one slot, and the read of the
 *		info figures, which sums the areas' refused counts (slots.h).
 *
 * Why a file of its own: this is all that readers (reader.c) need of the
 * slots, and all the postmaster needs at startup; it knows nothing of
 * binding, folding or the backend-local state (slots_int.h describes the
 * whole slot protocol).
 *
 * Locking.  None.  A slot is written by its owner only, inside a write
 * section bracketed by its changecount (slots_int.h); ng_slot_try_read
 * copies it between two reads of that count.  The refused counts of an
 * area (slots.h) are written and read the same way, by their own count.
 * The area of a process is initialized by the postmaster before any
 * backend exists.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "slots_int.h"

/*
 * Areas of two sizes.  Client backends, which run the statements worth
 * counting, have ng_slots_per_backend slots each; every other process with
 * a process number below MaxBackends (autovacuum, background and parallel
 * workers, walsenders) has NG_OTHER_PROC_SLOTS, or ng_slots_per_backend if
 * that is fewer.  Client backends own the first NG_NUM_CLIENT_PROCS()
 * process numbers (compat.h), so the client areas come first, then the
 * others':
 *
 *		procno < nclient:	base + procno x client area size
 *		otherwise:			base + nclient x client area size
 *							+ (procno - nclient) x other area size
 *
 * Each area starts on a cache line of its own (the areas' base is
 * cache-line aligned, shmem.c), so that no two processes write one line.
 *
 * Before the areas, one array of every process's partition mask (slots.h):
 * a read tests it for each process and partition, so it is dense (a few
 * cache lines per hundred processes) rather than spread over the areas.
 */
StaticAssertDecl(NG_NUM_PARTITIONS <= 32,
				 "a partition mask has one bit per partition");

static Size
slots_masks_size(void)
{
	return CACHELINEALIGN(mul_size(sizeof(uint32), ng_store_num_slot_procs()));
}

static int
slots_other_nslots(void)
{
	return Min(ng_slots_per_backend, NG_OTHER_PROC_SLOTS);
}

/* client areas: the first MaxConnections process numbers (compat.h) */
static int
slots_num_client_procs(void)
{
	return Min(NG_NUM_CLIENT_PROCS(), ng_store_num_slot_procs());
}

static int
slots_nslots_of_proc(int procno)
{
	return procno < slots_num_client_procs() ? ng_slots_per_backend :
		slots_other_nslots();
}

/* where an area of nslots puts its first slot: after the map and the pool */
static Size
slots_first_slot_offset(int nslots)
{
	return add_size(slots_map_size(nslots),
					MAXALIGN(mul_size(sizeof(NgHistCell),
									  slots_pool_cells(nslots))));
}

static Size
slots_area_size(int nslots)
{
	return TYPEALIGN(PG_CACHE_LINE_SIZE,
					 add_size(slots_first_slot_offset(nslots),
							  mul_size(sizeof(NgSlot), nslots)));
}

/*
 * ng_slots_areas_size
 *		The slot areas of all processes (the info view's slots_memory).
 */
Size
ng_slots_areas_size(void)
{
	int			nclient = slots_num_client_procs();

	return add_size(mul_size(slots_area_size(ng_slots_per_backend), nclient),
					mul_size(slots_area_size(slots_other_nslots()),
							 ng_store_num_slot_procs() - nclient));
}

/*
 * ng_slots_shmem_size
 *		Main shared memory for the partition masks and the slot areas.
 */
Size
ng_slots_shmem_size(void)
{
	return add_size(slots_masks_size(), ng_slots_areas_size());
}

/*
 * ng_slots_total
 *		Slots of all areas together.
 */
uint64
ng_slots_total(void)
{
	int			nclient = slots_num_client_procs();

	return (uint64) nclient * ng_slots_per_backend +
		(uint64) (ng_store_num_slot_procs() - nclient) * slots_other_nslots();
}

/*
 * ng_slots_most_cells
 *		The largest cell pool of any area (a client backend's).
 */
int
ng_slots_most_cells(void)
{
	return slots_pool_cells(Max(ng_slots_per_backend, slots_other_nslots()));
}

NgBackendSlots *
ng_slots_of_proc(int procno)
{
	int			nclient = slots_num_client_procs();
	Size		offset = slots_masks_size();

	if (procno < nclient)
		offset += (Size) procno * slots_area_size(ng_slots_per_backend);
	else
		offset += (Size) nclient * slots_area_size(ng_slots_per_backend) +
			(Size) (procno - nclient) * slots_area_size(slots_other_nslots());
	return (NgBackendSlots *) (ng_store_slot_area_base() + offset);
}

/*
 * ng_slots_partition_masks
 *		Every process's partition mask, by process number (slots.h).  A
 *		process writes its own only; anyone reads them, without a lock.
 */
volatile uint32 *
ng_slots_partition_masks(void)
{
	return (volatile uint32 *) ng_store_slot_area_base();
}

NgSlot *
ng_slot_at(NgBackendSlots *area, int index)
{
	return slot_at(area, index);
}

/*
 * ng_partition_slots_begin
 *		Start a walk over the slots that may count for partition p
 *		(slots.h).  No lock.
 */
void
ng_partition_slots_begin(NgPartitionSlots * it, int p)
{
	it->p = p;
	it->nprocs = ng_store_num_slot_procs();
	it->proc = -1;
	it->next = 0;
	it->area = NULL;
	it->masks = ng_slots_partition_masks();
}

/*
 * ng_partition_slots_next
 *		The walk's next slot whose map says it counts for the partition:
 *		its area and index into *area and *index; false when there is none
 *		left.  No lock.
 */
bool
ng_partition_slots_next(NgPartitionSlots * it, NgBackendSlots **area,
						int *index)
{
	for (;;)
	{
		if (it->area == NULL)
		{
			while (++it->proc < it->nprocs &&
				   (it->masks[it->proc] & NG_PARTITION_BIT(it->p)) == 0)
				;				/* no slot of this process counts for p */
			if (it->proc >= it->nprocs)
				return false;
			it->area = ng_slots_of_proc(it->proc);
			it->next = 0;
		}
		while (it->next < (int) it->area->nslots)
		{
			int			i = it->next++;

			if (it->area->partition_of[i] == it->p)
			{
				*area = it->area;
				*index = i;
				return true;
			}
		}
		it->area = NULL;
	}
}

/*
 * ng_slots_init_shmem
 *		Lay out every process's area and mark its slots free (postmaster, at
 *		startup).
 */
void
ng_slots_init_shmem(char *base)
{
	memset(ng_store_slot_area_base(), 0, slots_masks_size());
	for (int p = 0; p < ng_store_num_slot_procs(); p++)
	{
		NgBackendSlots *area = ng_slots_of_proc(p);
		int			nslots = slots_nslots_of_proc(p);

		memset(area, 0, slots_area_size(nslots));
		area->nslots = nslots;
		area->ncells = slots_pool_cells(nslots);
		area->slots_offset = slots_first_slot_offset(nslots);
		memset(area->partition_of, NG_SLOT_FREE, nslots);
		for (int i = 0; i < nslots; i++)
			slot_at(area, i)->hist_head = NG_NO_CELL;
	}
}

/*
 * copy_cells
 *		Copy slot's chain of cells from area's pool into cells[], in chain
 *		order; returns how many.  The chain may be in the middle of a change
 *		(the caller checks the changecount after): never follow more links
 *		than the pool has cells, nor one outside it.
 */
static int
copy_cells(NgBackendSlots *area, const NgSlot *slot, NgHistCell *cells)
{
	const volatile NgHistCell *pool = area_cells(area);
	uint32		ncells = area->ncells;
	uint32		n = 0;
	uint32		at = ((volatile const NgSlot *) slot)->hist_head;

	while (at < ncells && n < ncells)
	{
		cells[n].kind = pool[at].kind;
		cells[n].bucket = pool[at].bucket;
		cells[n].count = pool[at].count;
		cells[n].next = NG_NO_CELL;
		n++;
		at = pool[at].next;
	}
	return n;
}

/*
 * ng_slot_try_read
 *		Copy a slot of area another backend may be writing, consistently,
 *		with its histogram cells into cells[] (room for area->ncells; NULL:
 *		not wanted), in chain order: copy->hist_cells says how many.  No lock needed; the copy
 *		may be from just before or just after a concurrent change, never from
 *		the middle of one.  A write takes well under a microsecond, but its
 *		writer can be descheduled or stopped in the middle: after
 *		NG_SLOT_READ_SPINS tries, give up and return false, so that the
 *		caller, who may hold a partition lock and so cannot be interrupted,
 *		can release it before it waits (reader.c).
 *
 *		A cell the slot gave back and another slot of the owner took is
 *		written under the other slot's changecount only; but giving it back
 *		was a change to this slot, so a copy that read it sees this slot's
 *		count move, and retries.
 */
bool
ng_slot_try_read(NgBackendSlots *area, const NgSlot *slot, NgSlot *copy,
				 NgHistCell *cells)
{
	for (int spins = 0; spins < NG_SLOT_READ_SPINS; spins++)
	{
		uint32		before = ((volatile const NgSlot *) slot)->changecount;
		int			n;

		pg_read_barrier();
		memcpy(copy, (const void *) slot, sizeof(NgSlot));
		n = cells ? copy_cells(area, slot, cells) : copy->hist_cells;
		pg_read_barrier();
		if (before == ((volatile const NgSlot *) slot)->changecount &&
			(before & 1) == 0)
		{
			Assert(n == copy->hist_cells);
			copy->hist_cells = n;
			return true;
		}
		pg_spin_delay();
	}
	return false;
}

/*
 * slots_refused_sum
 *		Add to *sum the refused counts (NgRefusedCounts) of every area that
 *		are of the given stats generation, each copied consistently.  No
 *		lock.  A write takes a few instructions; a writer descheduled in the
 *		middle of one is waited for, sleeping after NG_SLOT_READ_SPINS tries
 *		(the caller holds no lock of ours), and the wait can be canceled.
 */
static void
slots_refused_sum(uint32 generation, NgRefusedCounts *sum)
{
	for (int p = 0; p < ng_store_num_slot_procs(); p++)
	{
		volatile NgBackendSlots *area = ng_slots_of_proc(p);

		for (int spins = 0;; spins++)
		{
			uint32		before = area->refused_changecount;
			uint32		copy_generation;
			NgRefusedCounts copy;

			pg_read_barrier();
			copy_generation = area->refused_generation;
			copy.calls = area->refused.calls;
			copy.exec_time = area->refused.exec_time;
			copy.failed = area->refused.failed;
			copy.refusals = area->refused.refusals;
			pg_read_barrier();
			if (before == area->refused_changecount && (before & 1) == 0)
			{
				if (copy_generation == generation)
				{
					sum->calls += copy.calls;
					sum->exec_time += copy.exec_time;
					sum->failed += copy.failed;
					sum->refusals += copy.refusals;
				}
				break;
			}
			if (spins < NG_SLOT_READ_SPINS)
				pg_spin_delay();
			else
			{
				CHECK_FOR_INTERRUPTS();
				pg_usleep(1000L);
			}
		}
	}
}

/*
 * ng_stats_read
 *		The info figures: the shared ones, copied under the spinlock, plus
 *		the executions every process counted in its slot area without an
 *		entry (NgRefusedCounts, slots.h).  Those count as evicted counts do
 *		(evicted_calls, evicted_exec_time) and in unadmitted_calls, their
 *		failures, which are not calls, as discarded: so sum(calls) plus
 *		evicted_calls stays every execution.  Caller holds no lock of ours
 *		(the areas' read may wait for a writer, area.c).
 */
void
ng_stats_read(NgSharedStats *stats)
{
	uint32		generation;
	NgRefusedCounts refused = {0};

	SpinLockAcquire(&ng_shared->mutex);
	*stats = ng_shared->stats;
	generation = ng_shared->stats_generation;
	SpinLockRelease(&ng_shared->mutex);

	slots_refused_sum(generation, &refused);
	stats->evicted_calls += refused.calls;
	stats->evicted_exec_time += refused.exec_time;
	stats->unadmitted_calls += refused.calls;
	stats->counts_discarded += refused.failed;
	stats->admissions_refused += refused.refusals;
}
