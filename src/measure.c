/*-------------------------------------------------------------------------
 *
 * measure.c
 *		What the hooks (hooks.c, utility.c) share to turn a measurement into
 *		a counted sample: the nesting level, the key of a statement, the
 *		sampling decision, buffer/WAL usage between two snapshots, and
 *		handing the sample to the slots.
 *
 * Why a file of its own: hooks.c and utility.c both use these, and
 * hooks.c installs utility.c's hook; with these in either of them the two
 * would call each other.  No lock of ours is taken here (ng_slots_count's
 * contract: none held by the caller).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/pg_prng.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "utils/timestamp.h"

#include "alloc.h"
#include "failures.h"
#include "guc.h"
#include "measure.h"
#include "slots.h"

int			ng_nesting_level = 0;

/* the sampling decision of the current top-level statement */
static TimestampTz sample_decided_for = 0;
static bool sample_in = true;

void
ng_make_key(NgKey *key, uint64 queryid)
{
	memset(key, 0, sizeof(NgKey));
	key->userid = GetUserId();
	key->dbid = MyDatabaseId;
	key->queryid = queryid;
	key->toplevel = (ng_nesting_level == 0);
}

/*
 * ng_sampled
 *		Is the current top-level statement counted?  Decided once per
 *		top-level statement (by its start time), with probability
 *		sample_rate; the statements it runs follow the decision.  Parsing,
 *		and so normalization, is never sampled.
 */
bool
ng_sampled(void)
{
	TimestampTz ts;

	if (ng_sample_rate >= 1.0)
		return true;
	ts = GetCurrentStatementStartTimestamp();
	if (ts != sample_decided_for)
	{
		sample_decided_for = ts;
		sample_in = pg_prng_double(&pg_global_prng_state) < ng_sample_rate;
	}
	return sample_in;
}

void
ng_count(uint64 queryid, const char *query, int location, int len,
		 bool utility, NgSample *sample)
{
	NgKey		key;
	NgTextSource src;

	ng_failures_flush();
	if (!ng_sampled())
		return;
	sample->started_at = GetCurrentStatementStartTimestamp();
	ng_make_key(&key, queryid);
	src.query = query;
	src.location = location;
	src.len = len;
	src.jstate = NULL;
	src.utility = utility;
	ng_slots_count(&key, sample, &src);
	if (ng_nesting_level == 0)
		ng_slots_maintenance();
	ng_log_losses();
}

/*
 * ng_usage_since
 *		Point sample at the buffer and WAL usage since the snapshots, diffed
 *		into *bufusage and *walusage; or at none when nothing changed (the
 *		usual case of a statement that touches no block: no diff to make).
 */
void
ng_usage_since(NgSample *sample, BufferUsage *bufusage,
			   const BufferUsage *bufusage_start, WalUsage *walusage,
			   const WalUsage *walusage_start)
{
	if (memcmp(&pgBufferUsage, bufusage_start, sizeof(BufferUsage)) != 0)
	{
		memset(bufusage, 0, sizeof(BufferUsage));
		BufferUsageAccumDiff(bufusage, &pgBufferUsage, bufusage_start);
		sample->bufusage = bufusage;
	}
	if (!ng_walusage_equal(&pgWalUsage, walusage_start))
	{
		memset(walusage, 0, sizeof(WalUsage));
		WalUsageAccumDiff(walusage, &pgWalUsage, walusage_start);
		sample->walusage = walusage;
	}
}
