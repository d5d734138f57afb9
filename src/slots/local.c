/*-------------------------------------------------------------------------
 *
 * local.c
 *		The backend-local state of this backend's slots and keys: the
 *		variables slots_int.h declares (with the inline helpers the hot path
 *		uses), defined here once.
 *
 * Why a file of its own: every slot file reads and writes this state, and
 * none of them owns it; the variables the hot path touches are placed
 * together (NG_HOT).
 *
 * Locking.  None: everything here is private to the backend.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "slots_int.h"

NG_HOT NgBackendSlots *ngs_my_area = NULL;
NG_HOT int	ngs_nslots = 0;
NG_HOT NgLocalSlot *ngs_local_slots = NULL;
NG_HOT nglocal_hash *ngs_local_map = NULL;
NgRecentKey ngs_recent_keys[NG_RECENT_KEYS];
NG_HOT uint64 ngs_map_version = 1;
NG_HOT uint64 ngs_use_clock = 0;
NG_HOT bool ngs_attached = false;
int			ngs_nfree = 0;
NG_HOT uint16 ngs_free_cell = NG_NO_CELL;
NG_HOT int	ngs_cells_free = 0;
bool		ngs_exiting = false;
NG_HOT int	ngs_spares_owed = 0;
NG_HOT NgHistCell *ngs_pool = NULL;
NG_HOT uint16 *ngs_cell_index = NULL;
volatile uint32 *ngs_my_partitions = NULL;
uint16		ngs_partition_slots[NG_NUM_PARTITIONS];
