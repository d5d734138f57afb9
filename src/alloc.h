/*-------------------------------------------------------------------------
 *
 * alloc.h
 *		When memory runs out (alloc.c): every DSA allocation, with its
 *		error containment, and the accounting of every loss.
 *
 * Promises: ng_dsa_allocate never raises an error; it returns
 * InvalidDsaPointer when the area has no room and cannot grow, and counts
 * that.  Whatever is lost (a text, an entry, counts, an allocation) is
 * counted in the info figures by ng_note_loss and logged once per server by
 * ng_log_losses.
 *
 * Locks: ng_dsa_allocate and ng_log_losses: caller holds no partition lock
 * (nor, for ng_dsa_allocate, any other LWLock).  ng_note_loss and
 * ng_count_stat: any partition lock may be held (they take only the
 * spinlock, and log nothing).  Never call them with the spinlock held.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_ALLOC_H
#define NG_ALLOC_H

#include "utils/dsa.h"

#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

/* Kinds of degradation, each logged once per server until the next reset */
typedef enum NgLoss
{
	NG_LOSS_TEXT_MEMORY = 0,	/* a text did not fit query_text_memory */
	NG_LOSS_TABLE_FULL,			/* no entry could be made room for */
	NG_LOSS_COUNTS,				/* counts were discarded */
	NG_LOSS_DSA,				/* the DSA area could not grow */
	NG_NUM_LOSSES
} NgLoss;

extern void ng_note_loss(NgLoss loss, int64 n);
extern void ng_log_losses_now(void);

/* losses noted by this backend and not logged yet (bit per NgLoss) */
extern uint32 ng_pending_loss_logs;

/* log the losses noted since the last time, if any (one test otherwise) */
static inline void
ng_log_losses(void)
{
	if (unlikely(ng_pending_loss_logs != 0))
		ng_log_losses_now();
}

extern void ng_count_stat(int64 *field, int64 n);

extern bool ng_dsa_can_allocate(void);
extern dsa_pointer ng_dsa_allocate(size_t size, int flags);

#pragma GCC visibility pop

#endif							/* NG_ALLOC_H */
