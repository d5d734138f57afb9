/*-------------------------------------------------------------------------
 *
 * shmem.c
 *		The shared state: the layout of main shared memory and each
 *		process's attachment to the DSA area.
 *
 * Why a file of its own: every other module finds the shared state through
 * what is here, and this file calls none of them.  setup.c creates the
 * state (it needs the slots' and the keeper's parts too); alloc.c
 * allocates in the DSA area; store.c keeps the hash table in it.
 *
 * Memory.  The postmaster creates, in main shared memory, the fixed state
 * (NgSharedState), the first segment of a DSA area (created in place and
 * pinned, so it lives as long as the server), and the slot areas of every
 * backend (slots/area.c).  Backends attach to the DSA area lazily, on
 * first use.  Entries and query texts are DSA allocations; entry memory is bounded by
 * the max setting, text memory by query_text_memory.
 *
 * The locking protocol of the shared table is described in store.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/memutils.h"

#include "shmem.h"

NG_HOT NgSharedState *ng_shared = NULL;
NG_HOT dsa_area *ng_area = NULL;

/*
 * ng_shmem_fixed_size
 *		Bytes of the fixed part (NgSharedState) at the head of our main
 *		shared memory.
 */
Size
ng_shmem_fixed_size(void)
{
	/* cache-line aligned, so that the slot areas after it are too */
	return CACHELINEALIGN(sizeof(NgSharedState));
}

/*
 * ng_shmem_dsa_place
 *		Where the DSA area's first segment lies: after the fixed part.
 */
void *
ng_shmem_dsa_place(void)
{
	return (char *) ng_shared + ng_shmem_fixed_size();
}

/*
 * ng_store_slot_area_base
 *		Start of the slot areas in main shared memory.
 */
char *
ng_store_slot_area_base(void)
{
	return (char *) ng_shmem_dsa_place() + MAXALIGN(NG_DSA_INITIAL_SIZE);
}

/*
 * ng_store_num_slot_procs
 *		How many processes have a slot area: every process that can run
 *		queries (PGPROC numbers below MaxBackends).
 */
int
ng_store_num_slot_procs(void)
{
	return MaxBackends;
}

static void
store_detach_callback(int code, Datum arg)
{
	if (ng_area != NULL)
	{
		dsa_detach(ng_area);
		dsa_release_in_place(ng_shmem_dsa_place());
		ng_area = NULL;
	}
}

/*
 * ng_store_attach
 *		Attach this backend to the DSA area, once.  Returns false when the
 *		library was not preloaded (no shared state exists).
 */
bool
ng_store_attach(void)
{
	MemoryContext oldcxt;

	if (ng_area != NULL)
		return true;
	if (ng_shared == NULL)
		return false;

	ng_register_tranche_compat(ng_shared->dsa_tranche, NG_NAME "_dsa");
	oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	ng_area = dsa_attach_in_place(ng_shmem_dsa_place(), NULL);
	dsa_pin_mapping(ng_area);
	MemoryContextSwitchTo(oldcxt);
	before_shmem_exit(store_detach_callback, (Datum) 0);
	return true;
}
