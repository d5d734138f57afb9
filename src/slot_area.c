/*-------------------------------------------------------------------------
 *
 * slot_area.c
 *		The slot areas in main shared memory: their size and layout, their
 *		initialization, and the lock-free read of one slot.
 *
 * Why a file of its own: this is all that readers (reader.c) need of the
 * slots, and all the postmaster needs at startup; it knows nothing of
 * binding, folding or the backend-local state (slots_int.h describes the
 * whole slot protocol).
 *
 * Locking.  None.  A slot is written by its owner only, inside a write
 * section bracketed by its changecount (slots_int.h); ng_slot_try_read
 * copies it between two reads of that count.  The area of a process is
 * initialized by the postmaster before any backend exists.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "slots_int.h"

/*
 * Each process's area starts on a cache line of its own (the areas' base is
 * cache-line aligned, shmem.c), so that no two processes write one line.
 */
static Size
slots_per_proc_size(void)
{
	return TYPEALIGN(PG_CACHE_LINE_SIZE,
					 add_size(slots_map_size(),
							  mul_size(sizeof(NgSlot), ng_slots_per_backend)));
}

/*
 * ng_slots_shmem_size
 *		Main shared memory for the slot areas of all processes.
 */
Size
ng_slots_shmem_size(void)
{
	return mul_size(slots_per_proc_size(), ng_store_num_slot_procs());
}

NgBackendSlots *
ng_slots_of_proc(int procno)
{
	return (NgBackendSlots *) (ng_store_slot_area_base() +
							   (Size) procno * slots_per_proc_size());
}

NgSlot *
ng_slot_at(NgBackendSlots *area, int index)
{
	return slot_at(area, index);
}

/*
 * ng_slots_init_shmem
 *		Mark every slot of every process free (postmaster, at startup).
 */
void
ng_slots_init_shmem(char *base)
{
	for (int p = 0; p < ng_store_num_slot_procs(); p++)
	{
		NgBackendSlots *area = ng_slots_of_proc(p);

		memset(area, 0, slots_per_proc_size());
		area->nslots = ng_slots_per_backend;
		memset(area->partition_of, NG_SLOT_FREE, ng_slots_per_backend);
	}
}

/*
 * ng_slot_try_read
 *		Copy a slot another backend may be writing, consistently.  No lock
 *		needed; the copy may be from just before or just after a concurrent
 *		change, never from the middle of one.  A write takes well under a
 *		microsecond, but its writer can be descheduled or stopped in the
 *		middle: after NG_SLOT_READ_SPINS tries, give up and return false, so
 *		that the caller, who may hold a partition lock and so cannot be
 *		interrupted, can release it before it waits (reader.c).
 */
bool
ng_slot_try_read(const NgSlot *slot, NgSlot *copy)
{
	for (int spins = 0; spins < NG_SLOT_READ_SPINS; spins++)
	{
		uint32		before = ((volatile const NgSlot *) slot)->changecount;

		pg_read_barrier();
		memcpy(copy, (const void *) slot, sizeof(NgSlot));
		pg_read_barrier();
		if (before == ((volatile const NgSlot *) slot)->changecount &&
			(before & 1) == 0)
			return true;
		pg_spin_delay();
	}
	return false;
}
