/*-------------------------------------------------------------------------
 *
 * setup.c
 *		Creating shared memory: the shmem_request and shmem_startup hooks'
 *		part (hooks.c calls them).
 *
 * Why a file of its own: creating the shared state needs every part that
 * lives in it (the fixed state and the DSA area, shmem.c; the slot areas,
 * slots/area.c) and the keeper's decision whether to restore (persist.c); kept
 * apart, none of those needs to know the others.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "evict.h"
#include "history.h"
#include "persist.h"
#include "setup.h"
#include "shmem.h"
#include "slots/slots.h"

static Size
store_total_size(void)
{
	Size		size = ng_shmem_fixed_size();

	size = add_size(size, MAXALIGN(NG_DSA_INITIAL_SIZE));
	size = add_size(size, ng_slots_shmem_size());
	return size;
}

/*
 * ng_store_request_shmem
 *		shmem_request_hook part: reserve main shared memory and the
 *		partition locks.
 */
void
ng_store_request_shmem(void)
{
	RequestAddinShmemSpace(store_total_size());
	RequestNamedLWLockTranche(NG_NAME, NG_NUM_PARTITIONS);
	ng_history_request_shmem();
}

/*
 * ng_store_init_shmem
 *		shmem_startup_hook part: create or find the shared state.  The
 *		process that creates it (the postmaster, or a standalone backend)
 *		also creates the DSA area in place and pins it.
 */
void
ng_store_init_shmem(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ng_shared = ShmemInitStruct(NG_NAME, store_total_size(), &found);
	if (!found)
	{
		LWLockPadded *locks = GetNamedLWLockTranche(NG_NAME);
		dsa_area   *area;

		memset(ng_shared, 0, ng_shmem_fixed_size());
		pg_atomic_init_u32(&ng_shared->entry_count, 0);
		pg_atomic_init_u64(&ng_shared->text_bytes, 0);
		pg_atomic_init_u64(&ng_shared->text_stamp, 0);
		pg_atomic_init_u32(&ng_shared->losses_logged, 0);

		/*
		 * Generations start at the time of this start in microseconds, so
		 * that one a collector got before a restart, clean or not, is below
		 * every generation of this run (no run hands out more than one a
		 * microsecond), and restored entries keep theirs (persist_read.c).
		 */
		pg_atomic_init_u64(&ng_shared->change_generation,
						   (uint64) Max(GetCurrentTimestamp(), 1));
		pg_atomic_init_u64(&ng_shared->folds, 0);
		pg_atomic_init_u64(&ng_shared->hist_bytes, 0);
		pg_atomic_init_u64(&ng_shared->sqlstates_lost, 0);
		pg_atomic_init_u64(&ng_shared->plan_text_bytes, 0);
		pg_atomic_init_u64(&ng_shared->plan_texts_dropped, 0);
		pg_atomic_init_u64(&ng_shared->plan_calls_lost, 0);
		pg_atomic_init_u32(&ng_shared->dsa_capped, 0);
		pg_atomic_init_u64(&ng_shared->dsa_retry_at, 0);
		ng_evict_init_shmem();
		SpinLockInit(&ng_shared->mutex);
		ng_shared->stats.stats_reset = GetCurrentTimestamp();
		for (int i = 0; i < NG_NUM_PARTITIONS; i++)
		{
			NgSharedPartition *part = &ng_shared->partitions[i];

			part->lock = &locks[i].lock;
			part->buckets = InvalidDsaPointer;
			part->history_evicted = InvalidDsaPointer;
			part->history_departed = InvalidDsaPointer;
			part->errors = InvalidDsaPointer;
		}

		ng_shared->dsa_tranche = ng_new_tranche_id_compat(NG_NAME "_dsa");
		area = dsa_create_in_place(ng_shmem_dsa_place(), NG_DSA_INITIAL_SIZE,
								   ng_shared->dsa_tranche, NULL);
		dsa_pin(area);
		dsa_detach(area);

		ng_slots_init_shmem(ng_store_slot_area_base());
		ng_persist_startup();
	}
	ng_history_init_shmem();
	LWLockRelease(AddinShmemInitLock);
}
