/*-------------------------------------------------------------------------
 *
 * slots.c
 *		Per-backend slots: where a backend counts the statements it runs,
 *		without locks, and how those counts reach the shared entries.
 *
 * Why a file of its own: this is the hot path, and the protocol that lets
 * readers see every execution exactly once without the writer taking a
 * lock.  Everything a backend keeps about its own statements is here.
 *
 * Layout.  Each process that can run queries owns an NgBackendSlots area in
 * main shared memory (indexed by its PGPROC number): a map saying which
 * partition each slot counts for, then ng_slots_per_backend NgSlot structs.
 * A backend-local hash table maps a key to the slot counting it, so finding
 * the slot of a statement the backend already tracks touches no shared
 * memory at all.
 *
 * Write protocol (single writer: the owner).  Every change to a slot is
 * bracketed by two increments of slot->changecount, plain stores separated
 * from the change by pg_write_barrier(), as backend_status.c does for
 * st_changecount.  A reader copies the slot between two reads of the count
 * (with read barriers) and retries until both are equal and even.  Counting
 * an execution of a tracked statement is therefore: one local hash lookup,
 * three reads of the bound entry (dead flag, min/max generation, dead flag
 * again after the sample is in), and the bracketed update: no lock, no
 * spinlock, no atomic read-modify-write.
 *
 * Binding.  A slot counts for one key.  When it is bound to a shared entry
 * it pins the entry (store.c), which keeps eviction away from it; the pin
 * is taken under the partition lock.  When no entry can be had (table
 * full, lock busy, memory short), the slot counts unbound and the backend
 * tries again at its next maintenance.
 *
 * Folding.  The owner moves a slot's counts into its entry only while it
 * holds the entry's partition lock exclusively, and zeroes the slot in the
 * same critical section.  Readers hold the partition lock in shared mode
 * while they add the entries and the slots of that partition, so a read
 * sees each execution either in the slot or in the entry, never both and
 * never neither.  A slot's counts are folded when the slot is released:
 * when the backend needs the slot for another statement, when maintenance
 * finds it idle since the last maintenance, and when the backend exits.
 *
 * Resets.  Other backends cannot write our slots, so a reset voids them
 * instead: an entry removed while bound is marked dead, and counts in a
 * slot bound to a dead entry are ignored by readers and dropped by the
 * owner; a reset of min/max bumps the entry's min/max generation, which
 * the owner and readers compare with the slot's; unbound slots carry the
 * partition generation they started in.  The owner looks at the dead flag
 * (or the partition generation) again once a sample is in the slot, and
 * counts the sample again if a reset voided the slot meanwhile.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "mb/pg_wchar.h"
#include "storage/ipc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "alloc.h"
#include "counters.h"
#include "evict.h"
#include "guc.h"
#include "qtext.h"
#include "shmem.h"
#include "slots.h"
#include "store.h"

/* What the backend knows of a key's constants, from its last parse */
typedef enum NgConstants
{
	NG_CONSTANTS_UNKNOWN = 0,
	NG_CONSTANTS_NONE,			/* raw text is safe to store */
	NG_CONSTANTS_SOME			/* only a normalized text may be stored */
} NgConstants;

/* Backend-local: what this backend knows about one key */
typedef struct NgLocalEntry
{
	NgKey		key;			/* hash key */
	uint32		hash;			/* ng_key_hash(key) */
	char		status;			/* for simplehash */
	int			slot;			/* my slot counting it, or -1 */
	NgConstants constants;
	bool		text_done;		/* its shared entry has a text, or will get
								 * none for now (text_missing) ... */
	uint32		text_epoch;		/* ... as of this partition text epoch */
	bool		text_missing;	/* no text: memory was full, or none could be
								 * made */
	int			text_cap_seen;	/* query_text_memory then */
	uint64		text_bytes_seen;	/* text memory in use then */
} NgLocalEntry;

/*
 * The map from key to NgLocalEntry: a simplehash table (open addressing,
 * inlined), keyed with the same cheap hash that picks the partition, so the
 * hot path computes one hash and probes one array.  Entries move when the
 * table changes, so nothing keeps pointers to them across an insert or a
 * delete.
 */
#define SH_PREFIX			nglocal
#define SH_ELEMENT_TYPE		NgLocalEntry
#define SH_KEY_TYPE			NgKey
#define SH_KEY				key
#define SH_HASH_KEY(tb, k)	ng_key_hash(&(k))
#define SH_EQUAL(tb, a, b)	(memcmp(&(a), &(b), sizeof(NgKey)) == 0)
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a)	((a)->hash)
#define SH_SCOPE			static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* Backend-local bookkeeping of one of my slots */
typedef struct NgLocalSlot
{
	bool		in_use;
	NgKey		key;			/* the key it counts for, when in use */
	NgSharedEntry *entry;		/* bound entry (address), or NULL */
	uint64		last_used;		/* use_clock at last count */
	bool		used;			/* counted since the last maintenance */
} NgLocalSlot;

static NgBackendSlots *my_area = NULL;
static NgLocalSlot *local_slots = NULL;
static nglocal_hash *local_map = NULL;
static uint64 use_clock = 0;
static TimestampTz last_maintenance = 0;
static bool slots_attached = false;
static bool slots_unavailable = false;

static Size
slots_map_size(void)
{
	return MAXALIGN(offsetof(NgBackendSlots, partition_of) +
					sizeof(uint8) * ng_slots_per_backend);
}

static Size
slots_per_proc_size(void)
{
	return add_size(slots_map_size(),
					mul_size(sizeof(NgSlot), ng_slots_per_backend));
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
	return (NgSlot *) ((char *) area + slots_map_size()) + index;
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

/* ---- the write protocol ---- */

static inline void
slot_begin_write(NgSlot *slot)
{
	slot->changecount++;
	pg_write_barrier();
}

static inline void
slot_end_write(NgSlot *slot)
{
	pg_write_barrier();
	slot->changecount++;
	Assert((slot->changecount & 1) == 0);
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

/* ---- attaching ---- */

static void slots_exit_callback(int code, Datum arg);
static NgLocalEntry *local_entry(const NgKey *key, uint32 hash);

/*
 * slots_inherit
 *		Take over the slots a previous owner of this slot area left in use.
 *		A backend folds all its slots at exit, but if its exit callback
 *		failed (an ERROR there is FATAL, and the rest of the callback is
 *		skipped), slots can still be in use, bound slots still pinning their
 *		entries.  Readers count them all along; this backend now owns them:
 *		it folds them as its own (and so drops their pins) at its next
 *		maintenance, or when it needs the slots, or at its exit.  Nothing is
 *		overwritten.  Logged once per backend that inherits.
 */
static void
slots_inherit(void)
{
	int			inherited = 0;

	for (int i = 0; i < ng_slots_per_backend; i++)
	{
		NgSlot	   *slot = ng_slot_at(my_area, i);
		NgLocalEntry *le;

		if (my_area->partition_of[i] == NG_SLOT_FREE)
			continue;

		/*
		 * The previous owner never fails inside a write section, but if it
		 * had, readers would wait on an odd count forever: end it.
		 */
		if (slot->changecount & 1)
			slot_end_write(slot);
		Assert(slot->in_use);
		local_slots[i].in_use = true;
		local_slots[i].key = slot->key;
		local_slots[i].entry = DsaPointerIsValid(slot->entry) ?
			dsa_get_address(ng_area, slot->entry) : NULL;
		local_slots[i].last_used = 0;
		local_slots[i].used = false;
		le = local_entry(&slot->key, ng_key_hash(&slot->key));
		le->slot = i;
		inherited++;
	}
	if (inherited > 0)
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: took over %d slots that the previous backend with this process number left in use",
						inherited),
				 errdetail("Its exit did not complete; the counts are kept and will be folded by this backend.")));
}

/*
 * slots_attach
 *		Set up this backend's local state, once.  Returns false if the
 *		backend cannot count (library not preloaded, no shared memory).
 */
static bool
slots_attach(void)
{
	int			procno;

	if (slots_attached)
		return ng_area != NULL; /* false once detached, at backend exit */
	if (slots_unavailable || !ng_store_attach())
	{
		slots_unavailable = true;
		return false;
	}

	local_map = nglocal_create(TopMemoryContext, 256, NULL);

	procno = NG_MY_PROC_NUMBER();
	if (procno >= 0 && procno < ng_store_num_slot_procs())
	{
		my_area = ng_slots_of_proc(procno);
		local_slots = MemoryContextAllocZero(TopMemoryContext,
											 sizeof(NgLocalSlot) * ng_slots_per_backend);
		slots_inherit();
		my_area->active = true;
	}
	before_shmem_exit(slots_exit_callback, (Datum) 0);
	last_maintenance = GetCurrentTimestamp();
	slots_attached = true;
	return true;
}

/*
 * local_entry
 *		This backend's entry for key (hash = ng_key_hash(key)), created if
 *		new.  The pointer is valid until the next insert into or delete from
 *		the local map.
 */
static NgLocalEntry *
local_entry(const NgKey *key, uint32 hash)
{
	bool		found;
	NgLocalEntry *le = nglocal_insert_hash(local_map, *key, hash, &found);

	if (!found)
	{
		le->slot = -1;
		le->constants = NG_CONSTANTS_UNKNOWN;
		le->text_done = false;
		le->text_epoch = 0;
		le->text_missing = false;
	}
	return le;
}

/*
 * text_settled
 *		Is there nothing to do about le's text: its entry has one, or was
 *		left without one and nothing has changed since that could make room
 *		(texts freed, the cap raised) or take the entry's text away (the
 *		partition's text epoch)?  Plain reads only: no lock.
 */
static inline bool
text_settled(const NgLocalEntry *le, const NgSharedPartition *part)
{
	if (!le->text_done || le->text_epoch != part->text_epoch)
		return false;
	if (!le->text_missing)
		return true;
	return le->text_cap_seen == ng_query_text_memory_kb &&
		pg_atomic_read_u64(&ng_shared->text_bytes) >= le->text_bytes_seen;
}

/*
 * text_note
 *		Remember what slot_get_entry found out about le's text, having
 *		offered one (qtext_offered) or not.
 */
static inline void
text_note(NgLocalEntry *le, bool qtext_offered, bool got_entry, bool has_text)
{
	if (!got_entry)
	{
		le->text_done = false;
		return;
	}
	if (!qtext_offered && !has_text)
		return;					/* learnt nothing new */
	le->text_done = true;
	le->text_missing = !has_text;
	le->text_cap_seen = ng_query_text_memory_kb;
	le->text_bytes_seen = pg_atomic_read_u64(&ng_shared->text_bytes);
}

/*
 * What the last few parses in this backend showed, by queryid: whether the
 * statement had constants, and its normalized text if one was made.  It
 * serves an execution that must create an entry when the parse could not
 * (the entry was removed in between, or the statement runs under another
 * user than it was parsed as, after SET ROLE), so that such an entry still
 * gets a text that is safe to store.  Whether a statement has constants is
 * a property of its queryid, so the key here is the queryid alone.
 */
#define NG_RECENT_PARSES	16

typedef struct NgRecentParse
{
	uint64		queryid;		/* 0: unused */
	bool		has_constants;
	char	   *normalized;		/* in recent_cxt, or NULL; the raw text when
								 * the statement has no constants */
	int			len;
} NgRecentParse;

static NgRecentParse recent_parses[NG_RECENT_PARSES];
static int	recent_next = 0;
static MemoryContext recent_cxt = NULL;

static NgRecentParse *
recent_find(uint64 queryid)
{
	for (int i = 0; i < NG_RECENT_PARSES; i++)
		if (recent_parses[i].queryid == queryid)
			return &recent_parses[i];
	return NULL;
}

static void
recent_note(uint64 queryid, bool has_constants, const char *normalized, int len)
{
	NgRecentParse *r = recent_find(queryid);

	if (recent_cxt == NULL)
		recent_cxt = AllocSetContextCreate(TopMemoryContext,
										   "pg_stat_statements_ng recent parses",
										   ALLOCSET_SMALL_SIZES);
	if (r == NULL)
	{
		r = &recent_parses[recent_next];
		recent_next = (recent_next + 1) % NG_RECENT_PARSES;
	}
	if (r->normalized)
		pfree(r->normalized);
	r->queryid = queryid;
	r->has_constants = has_constants;
	r->normalized = normalized ? MemoryContextStrdup(recent_cxt, normalized) : NULL;
	r->len = normalized ? len : 0;
}

/*
 * slot_text
 *		The text this backend may store for a new entry of le's key: the raw
 *		statement when its parse showed no constants; the normalized text
 *		made at its parse, if still at hand; else none (the next parse
 *		supplies it).  Never a text with literals.
 */
static char *
slot_text(const NgLocalEntry *le, const NgTextSource *src, int *len)
{
	NgTextSource raw = *src;
	NgConstants constants = le->constants;
	NgRecentParse *r = recent_find(le->key.queryid);

	if (constants == NG_CONSTANTS_UNKNOWN && r != NULL)
		constants = r->has_constants ? NG_CONSTANTS_SOME : NG_CONSTANTS_NONE;
	if (constants == NG_CONSTANTS_NONE && src->query != NULL)
	{
		raw.jstate = NULL;
		return ng_qtext_prepare(&raw, len);
	}
	/* no source text (a failure) or only a normalized one may be stored */
	if (r != NULL && r->normalized != NULL &&
		r->has_constants == (constants == NG_CONSTANTS_SOME))
	{
		*len = r->len;
		return pstrdup(r->normalized);
	}
	return NULL;
}

static int	slots_release_lru(int n);
static inline bool slot_record(NgSlot *slot, NgSharedEntry *entry,
							   NgSharedPartition *part, const NgSample *sample);

/*
 * slot_get_entry
 *		Find or create the shared entry of key and return it pinned (if pin)
 *		with its DSA pointer, or NULL if it cannot be had now.
 *
 *		text (palloc'd, may be NULL) is stored if the entry has none.  With
 *		wait = false nothing here waits for a lock: a busy partition means
 *		"not now".  *has_text tells whether the entry ends up with a text.
 *		Caller holds no partition lock.
 */
static NgSharedEntry *
slot_get_entry(const NgKey *key, uint32 hash, const char *qtext, int text_len,
			   bool pin, bool wait, dsa_pointer *dp, bool *has_text)
{
	NgSharedPartition *part = ng_partition(hash);
	NgSharedEntry *entry;
	dsa_pointer tdp = InvalidDsaPointer;
	bool		reserved = false;
	bool		found;

	/* The common case: it exists; pin it under the shared lock. */
	if (wait)
		LWLockAcquire(part->lock, LW_SHARED);
	else if (!LWLockConditionalAcquire(part->lock, LW_SHARED))
	{
		ng_count_stat(&ng_shared->stats.lock_misses, 1);
		return NULL;
	}
	entry = ng_entry_lookup(part, key, hash, dp);
	if (entry != NULL && (DsaPointerIsValid(entry->qtext) || qtext == NULL ||
						  !ng_dsa_can_allocate()))
	{
		if (pin)
			pg_atomic_fetch_add_u32(&entry->pins, 1);
		*has_text = DsaPointerIsValid(entry->qtext);
		LWLockRelease(part->lock);
		return entry;
	}
	LWLockRelease(part->lock);

	/*
	 * Creating it, or adding its text, needs DSA memory, which cannot be had
	 * while the process exits or a transaction aborts (store.c): not now.
	 */
	if (!ng_dsa_can_allocate())
		return NULL;

	/* Creating it, or adding its text: prepare everything outside locks. */
	if (entry == NULL)
	{
		reserved = ng_entry_reserve();
		if (!reserved && ng_evict_make_room())
			reserved = ng_entry_reserve();
		if (!reserved && slots_release_lru(ng_slots_per_backend / 2) > 0 &&
			ng_evict_make_room())
			reserved = ng_entry_reserve();
	}
	if (qtext != NULL && (entry != NULL || reserved))
		tdp = ng_qtext_store(qtext, text_len);
	if (reserved)
		(void) ng_entry_prepare(part);

	if (wait)
		LWLockAcquire(part->lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(part->lock, LW_EXCLUSIVE))
	{
		ng_count_stat(&ng_shared->stats.lock_misses, 1);
		if (reserved)
			ng_entry_unreserve();
		if (DsaPointerIsValid(tdp))
			ng_qtext_free(tdp, text_len);
		ng_entry_prepared_release();
		return NULL;
	}

	entry = ng_entry_lookup(part, key, hash, dp);
	if (entry == NULL && reserved)
	{
		*dp = ng_entry_insert(part, key, hash, tdp, text_len,
							  GetDatabaseEncoding(), &found);
		Assert(!found);
		if (DsaPointerIsValid(*dp))
		{
			entry = dsa_get_address(ng_area, *dp);
			tdp = InvalidDsaPointer;	/* the entry owns it now */
			reserved = false;
		}
	}
	else if (entry == NULL)
		ng_note_loss(NG_LOSS_TABLE_FULL, 1);
	if (entry != NULL && !DsaPointerIsValid(entry->qtext) &&
		DsaPointerIsValid(tdp))
	{
		entry->qtext = tdp;
		entry->text_stored_at = GetCurrentTimestamp();
		entry->text_len = text_len;
		entry->encoding = GetDatabaseEncoding();
		entry->text_dropped = false;
		tdp = InvalidDsaPointer;
	}
	else if (entry != NULL && !DsaPointerIsValid(entry->qtext) &&
			 qtext != NULL && !entry->text_dropped)
	{
		/* the text did not fit: counted once per statement */
		entry->text_dropped = true;
		ng_note_loss(NG_LOSS_TEXT_MEMORY, 1);
	}
	if (entry != NULL)
	{
		if (pin)
			pg_atomic_fetch_add_u32(&entry->pins, 1);
		*has_text = DsaPointerIsValid(entry->qtext);
	}
	LWLockRelease(part->lock);

	if (reserved)
		ng_entry_unreserve();
	if (DsaPointerIsValid(tdp))
		ng_qtext_free(tdp, text_len);
	ng_entry_prepared_release();
	return entry;
}

/*
 * slot_fold_locked
 *		Move slot i's counts into the shared table and free the slot.
 *		Caller holds the slot's partition lock exclusively.
 *
 *		A bound slot adds its counts to its entry (unless the entry is dead:
 *		a reset voided them) and drops its pin, freeing a dead entry when it
 *		was the last.  An unbound slot adds its counts to the key's entry if
 *		one exists by now; otherwise they go where evicted entries' counts
 *		go (evicted_calls), and are also counted as unadmitted_calls.
 */
static void
slot_fold_locked(int i)
{
	NgSlot	   *slot = ng_slot_at(my_area, i);
	NgLocalSlot *ls = &local_slots[i];
	NgSharedPartition *part = &ng_shared->partitions[slot->partition];
	NgCounters	counts = slot->counters;

	Assert(LWLockHeldByMeInMode(part->lock, LW_EXCLUSIVE));
	pg_atomic_fetch_add_u64(&ng_shared->folds, 1);
	if (ls->entry != NULL)
	{
		NgSharedEntry *entry = ls->entry;

		if (!entry->dead)
		{
			if (slot->minmax_generation != entry->minmax_generation)
				ng_counters_clear_minmax(&counts);
			ng_counters_merge(&entry->counters, &counts);
			ng_evict_earn_usage(entry, counts.calls[NG_EXEC] + counts.calls[NG_PLAN]);
		}
		if (pg_atomic_sub_fetch_u32(&entry->pins, 1) == 0 && entry->dead)
			ng_entry_release_memory(entry, slot->entry);
	}
	else if (slot->partition_generation == part->generation &&
			 ng_counters_any(&counts))
	{
		dsa_pointer dp;
		NgSharedEntry *entry = ng_entry_lookup(part, &slot->key,
											   ng_key_hash(&slot->key), &dp);

		if (entry != NULL)
		{
			ng_counters_merge(&entry->counters, &counts);
			ng_evict_earn_usage(entry, counts.calls[NG_EXEC] + counts.calls[NG_PLAN]);
		}
		else
		{
			/*
			 * The statement never got an entry (the table was full of entries
			 * in use): its counts leave the table as an evicted entry's do,
			 * into evicted_calls and evicted_exec_time, so that sum(calls)
			 * plus evicted_calls still counts every execution.  Its failed
			 * executions, which are not calls, are counted as discarded.
			 */
			SpinLockAcquire(&ng_shared->mutex);
			ng_shared->stats.evicted_calls += counts.calls[NG_EXEC];
			ng_shared->stats.evicted_exec_time += counts.total_time[NG_EXEC];
			ng_shared->stats.unadmitted_calls += counts.calls[NG_EXEC];
			ng_shared->stats.counts_discarded += ng_counters_failed(&counts);
			SpinLockRelease(&ng_shared->mutex);
		}
	}

	slot_begin_write(slot);
	slot->in_use = false;
	slot->entry = InvalidDsaPointer;
	memset(&slot->counters, 0, sizeof(NgCounters));
	my_area->partition_of[i] = NG_SLOT_FREE;
	slot_end_write(slot);

	{
		NgLocalEntry *le = nglocal_lookup(local_map, ls->key);

		if (le != NULL)
			le->slot = -1;
	}
	ls->in_use = false;
	ls->entry = NULL;
	ls->used = false;
}

/*
 * slot_release
 *		Fold slot i and free it.  With wait = false, gives up (returns
 *		false) if the partition lock is busy.  Caller holds no partition lock.
 */
static bool
slot_release(int i, bool wait)
{
	NgSlot	   *slot = ng_slot_at(my_area, i);
	LWLock	   *lock = ng_shared->partitions[slot->partition].lock;

	if (wait)
		LWLockAcquire(lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(lock, LW_EXCLUSIVE))
	{
		ng_count_stat(&ng_shared->stats.lock_misses, 1);
		return false;
	}
	slot_fold_locked(i);
	LWLockRelease(lock);
	return true;
}

/*
 * slots_release_lru
 *		The table is full of entries in use and a new statement needs one:
 *		release (fold and unpin) up to n of this backend's least recently
 *		used bound slots, without waiting, so that eviction can take the
 *		cold ones among their entries.  Without this, backends that each
 *		keep their last slots_per_backend statements bound could together
 *		pin the whole table, and a workload of ever-new statements would
 *		find nothing to evict.  Returns the number released.
 */
static int
slots_release_lru(int n)
{
	int			released = 0;

	if (my_area == NULL)
		return 0;
	while (released < n)
	{
		int			best = -1;

		for (int i = 0; i < ng_slots_per_backend; i++)
		{
			if (!local_slots[i].in_use || local_slots[i].entry == NULL)
				continue;
			if (best < 0 || local_slots[i].last_used < local_slots[best].last_used)
				best = i;
		}
		if (best < 0 || !slot_release(best, false))
			break;
		released++;
	}
	return released;
}

/*
 * slot_adopt_entry
 *		For an unbound slot with counts: make sure its key has an entry, so
 *		that folding the slot keeps the counts.  Returns true if the slot
 *		can be folded without loss (an entry exists, or there is nothing to
 *		keep).  With wait, waits for the partition lock (at exit).
 */
static bool
slot_adopt_entry(int i, bool wait)
{
	NgSlot	   *slot = ng_slot_at(my_area, i);
	dsa_pointer dp;
	bool		has_text;

	if (!ng_counters_any(&slot->counters))
		return true;
	return slot_get_entry(&slot->key, ng_key_hash(&slot->key), NULL, 0,
						  false, wait, &dp, &has_text) != NULL;
}

/*
 * slot_find_free
 *		A free slot of mine, releasing the least recently used bound slot if
 *		all are taken: a bound slot folds into its entry without loss.  An
 *		unbound slot is given up only if its key has an entry by now (or
 *		has nothing to keep).  Tries a few victims without waiting before it
 *		waits for one.
 */
static int
slot_find_free(void)
{
	int			victims[4];
	int			nvictims = 0;
	int			bound = 0;

	for (int i = 0; i < ng_slots_per_backend; i++)
		if (!local_slots[i].in_use)
			return i;

	/* the least recently used slots, bound ones first */
	for (int pass = 0; pass < 2 && nvictims < lengthof(victims); pass++)
	{
		while (nvictims < lengthof(victims))
		{
			int			best = -1;

			for (int i = 0; i < ng_slots_per_backend; i++)
			{
				bool		taken = false;

				if ((local_slots[i].entry != NULL) != (pass == 0))
					continue;
				for (int v = 0; v < nvictims; v++)
					taken |= (victims[v] == i);
				if (!taken && (best < 0 ||
							   local_slots[i].last_used < local_slots[best].last_used))
					best = i;
			}
			if (best < 0)
				break;
			victims[nvictims++] = best;
			if (pass == 0)
				bound++;
		}
	}
	for (int v = 0; v < nvictims; v++)
	{
		if (local_slots[victims[v]].entry == NULL &&
			!slot_adopt_entry(victims[v], false))
			continue;
		if (slot_release(victims[v], false))
			return victims[v];
	}

	/* wait: for a bound victim's lock, or for an unbound one's entry */
	if (bound > 0)
	{
		slot_release(victims[0], true);
		return victims[0];
	}
	for (int v = 0; v < nvictims; v++)
	{
		if (slot_adopt_entry(victims[v], true))
		{
			slot_release(victims[v], true);
			return victims[v];
		}
	}

	/*
	 * Every slot counts for a statement that has no entry and can get none
	 * (the table is full of entries other backends are using): give up the
	 * oldest one's counts, counted as discarded.
	 */
	slot_release(victims[0], true);
	return victims[0];
}

/*
 * slot_bind
 *		Give key a slot of mine, bound to its shared entry if that can be had
 *		without waiting.  Returns the slot index.
 */
static int
slot_bind(NgLocalEntry *le, const NgTextSource *src)
{
	int			i = slot_find_free();
	NgSlot	   *slot = ng_slot_at(my_area, i);
	uint32		hash = le->hash;
	NgSharedPartition *part = ng_partition(hash);
	int			text_len = 0;
	uint32		text_epoch = part->text_epoch;
	char	   *qtext = NULL;
	dsa_pointer dp = InvalidDsaPointer;
	bool		has_text = false;
	NgSharedEntry *entry;

	/* offer a text unless the entry has one or can get none for now */
	if (!text_settled(le, part))
		qtext = slot_text(le, src, &text_len);
	entry = slot_get_entry(&le->key, hash, qtext, text_len, true, false,
						   &dp, &has_text);
	if (qtext)
	{
		pfree(qtext);
		le->text_epoch = text_epoch;
	}
	text_note(le, qtext != NULL, entry != NULL, has_text);

	slot_begin_write(slot);
	slot->in_use = true;
	slot->key = le->key;
	slot->partition = ng_partition_of_hash(hash);
	slot->entry = entry ? dp : InvalidDsaPointer;
	slot->minmax_generation = entry ? entry->minmax_generation : 0;
	slot->partition_generation = part->generation;
	memset(&slot->counters, 0, sizeof(NgCounters));
	my_area->partition_of[i] = slot->partition;
	slot_end_write(slot);

	local_slots[i].in_use = true;
	local_slots[i].key = le->key;
	local_slots[i].entry = entry;
	local_slots[i].used = false;
	le->slot = i;
	return i;
}

/*
 * count_direct
 *		Count a sample straight into the shared entry, for a process that
 *		has no slot area.  Waits for the partition lock; such processes do
 *		not run user queries.
 */
static void
count_direct(NgLocalEntry *le, const NgSample *sample, const NgTextSource *src)
{
	uint32		hash = le->hash;
	NgSharedPartition *part = ng_partition(hash);
	int			text_len = 0;
	char	   *qtext = slot_text(le, src, &text_len);
	dsa_pointer dp;
	bool		has_text;
	NgSharedEntry *entry;

	entry = slot_get_entry(&le->key, hash, qtext, text_len, false, true,
						   &dp, &has_text);
	if (qtext)
		pfree(qtext);
	LWLockAcquire(part->lock, LW_EXCLUSIVE);
	if (entry != NULL)
		entry = ng_entry_lookup(part, &le->key, hash, &dp);
	if (entry != NULL)
	{
		ng_counters_record(&entry->counters, sample);
		entry->counters.changed_generation =
			pg_atomic_read_u64(&ng_shared->change_generation);
		ng_evict_earn_usage(entry, 1);
	}
	LWLockRelease(part->lock);
	if (entry == NULL)
		ng_note_loss(NG_LOSS_COUNTS, 1);
}

/*
 * ng_slots_count
 *		Count one execution or planning of key.  Called from the hooks.
 *
 *		For a statement this backend already has a slot for, this is the hot
 *		path: no lock, no atomic read-modify-write, no shared-memory write
 *		but to our own slot.  Never raises an error because of the
 *		extension's limits.
 */
void
ng_slots_count(const NgKey *key, const NgSample *sample, const NgTextSource *src)
{
	NgLocalEntry *le;
	NgSlot	   *slot;
	NgSharedEntry *entry;
	int			i;

	if (!slots_attach())
		return;
	le = local_entry(key, ng_key_hash(key));
	if (my_area == NULL)
	{
		count_direct(le, sample, src);
		return;
	}

	for (int attempt = 0;; attempt++)
	{
		NgSharedPartition *part;
		bool		voided;

		i = le->slot;
		if (i >= 0 && local_slots[i].entry != NULL && local_slots[i].entry->dead)
		{
			/* a reset removed the entry: its counts are void; bind anew */
			slot_release(i, true);
			i = -1;
		}
		if (i < 0)
			i = slot_bind(le, src);

		slot = ng_slot_at(my_area, i);
		part = &ng_shared->partitions[slot->partition];
		entry = local_slots[i].entry;
		slot_begin_write(slot);
		if (NG_DEBUG_FAULT(NG_FAULT_STALL_WRITE))
			ng_debug_stall();	/* a writer stopped mid-write (tests) */
		voided = slot_record(slot, entry, part, sample);
		slot_end_write(slot);

		local_slots[i].used = true;
		local_slots[i].last_used = ++use_clock;

		/*
		 * A reset voided this slot while we wrote: the sample went with the
		 * void counts.  It belongs after the reset, so count it again, in a
		 * slot bound anew (once: a second reset that overlaps the retry
		 * overlaps this execution too).
		 */
		if (likely(!voided) || attempt > 0)
			break;
	}
}

/*
 * slot_record
 *		Inside slot's write section: add sample, and stamp the change
 *		generation.  Returns true if a reset has voided the slot meanwhile
 *		(removed its bound entry, or moved the partition generation of an
 *		unbound slot), in which case the sample is lost with the slot's
 *		other counts and must be counted again.
 */
static inline bool
slot_record(NgSlot *slot, NgSharedEntry *entry, NgSharedPartition *part,
			const NgSample *sample)
{
	if (entry != NULL)
	{
		uint32		gen = entry->minmax_generation;

		if (unlikely(slot->minmax_generation != gen))
		{
			ng_counters_clear_minmax(&slot->counters);
			slot->minmax_generation = gen;
		}
	}
	else
	{
		uint32		gen = part->generation;

		if (unlikely(slot->partition_generation != gen))
		{
			memset(&slot->counters, 0, sizeof(NgCounters));
			slot->partition_generation = gen;
		}
	}
	ng_counters_record(&slot->counters, sample);

	/*
	 * Stamp the change generation, read after this write section began (a
	 * full barrier orders our changecount store before the load): a
	 * changed_since call that advanced the generation before this load sees
	 * this write in its scan (it waits out an odd changecount) or, if it
	 * copied the slot before the write began, the next call sees it.
	 */
	pg_memory_barrier();
	slot->counters.changed_generation =
		pg_atomic_read_u64(&ng_shared->change_generation);

	/*
	 * The same barrier orders the counts before these loads: if they show no
	 * reset, a reset that voids this slot comes after the sample was in
	 * place, and rightly takes it.
	 */
	if (entry != NULL)
		return entry->dead;
	return slot->partition_generation != part->generation;
}

/*
 * ng_slots_note_parse
 *		Called when a statement is parsed: remember whether it had
 *		constants, and make sure its entry exists with its normalized text
 *		if it had (the only moment a normalized text can be made).  Waits
 *		for the partition lock if it must create the entry, never for
 *		eviction.
 */
void
ng_slots_note_parse(const NgKey *key, const NgTextSource *src)
{
	NgLocalEntry *le;
	char	   *qtext;
	int			text_len = 0;
	dsa_pointer dp;
	bool		has_text = false;
	NgSharedEntry *entry;
	uint32		hash;
	NgSharedPartition *part;

	if (!slots_attach())
		return;
	hash = ng_key_hash(key);
	le = local_entry(key, hash);
	part = ng_partition(hash);

	/*
	 * Known to have its text, or to get none for now (text memory full)?  A
	 * reset, or text memory being shrunk, since then (the partition's text
	 * epoch moved) may have taken it, and texts freed or a higher cap may
	 * make room: then look again.  Otherwise nothing to do, and no lock.
	 */
	if (text_settled(le, part))
		return;
	if (src->jstate == NULL || src->jstate->clocations_count == 0)
	{
		/*
		 * No constants: the raw text is stored when it first runs.  Keep it
		 * at hand too, for a failure recorded after the source text is gone.
		 */
		le->constants = NG_CONSTANTS_NONE;
		qtext = ng_qtext_prepare(src, &text_len);
		recent_note(key->queryid, false, qtext, text_len);
		if (qtext)
			pfree(qtext);
		return;
	}
	le->constants = NG_CONSTANTS_SOME;

	le->text_epoch = part->text_epoch;
	qtext = ng_qtext_prepare(src, &text_len);
	recent_note(key->queryid, true, qtext, text_len);
	entry = slot_get_entry(key, hash, qtext, text_len, false, true,
						   &dp, &has_text);
	if (qtext)
		pfree(qtext);
	/* a statement whose text cannot be made is settled too */
	text_note(le, true, entry != NULL, has_text);
}

/*
 * slots_trim_local_map
 *		Forget what we know of keys that have no slot when the local map has
 *		grown large (a backend running endless distinct statements).
 */
static void
slots_trim_local_map(void)
{
	nglocal_iterator iter;
	NgLocalEntry *le;
	nglocal_hash *kept;

	if (local_map->members <= 4 * (uint32) ng_slots_per_backend + 1024)
		return;
	kept = nglocal_create(TopMemoryContext, 2 * ng_slots_per_backend, NULL);
	nglocal_start_iterate(local_map, &iter);
	while ((le = nglocal_iterate(local_map, &iter)) != NULL)
	{
		if (le->slot >= 0)
		{
			bool		found;
			NgLocalEntry *copy = nglocal_insert_hash(kept, le->key, le->hash,
													 &found);

			copy->slot = le->slot;
			copy->constants = le->constants;
			copy->text_done = le->text_done;
			copy->text_epoch = le->text_epoch;
			copy->text_missing = le->text_missing;
			copy->text_cap_seen = le->text_cap_seen;
			copy->text_bytes_seen = le->text_bytes_seen;
		}
	}
	nglocal_destroy(local_map);
	local_map = kept;
}

/*
 * ng_slots_maintenance
 *		From time to time, at the end of a top-level statement: release the
 *		slots this backend has not used since the last time (so idle
 *		statements stop pinning entries), try to bind unbound slots, and
 *		help bring the table down to max.  Never waits for a lock.
 */
void
ng_slots_maintenance(void)
{
	TimestampTz now;
	bool		over_max;

	if (!slots_attached || my_area == NULL)
		return;
	now = GetCurrentStatementStartTimestamp();
	if (now - last_maintenance < NG_MAINTENANCE_INTERVAL_MS * (TimestampTz) 1000)
		return;
	last_maintenance = now;

	over_max = pg_atomic_read_u32(&ng_shared->entry_count) > (uint32) ng_max;
	for (int i = 0; i < ng_slots_per_backend; i++)
	{
		NgLocalSlot *ls = &local_slots[i];

		if (!ls->in_use)
			continue;
		if (ls->entry == NULL)
		{
			/* unbound: fold once its entry can be had; until then, keep */
			if (slot_adopt_entry(i, false))
				slot_release(i, false);
		}
		else if (!ls->used || over_max)
		{
			/*
			 * Idle since the last time, or the table is over max (max was
			 * lowered): fold and drop the pin, so that eviction can take the
			 * entry if it is cold.  A statement still running binds again.
			 */
			slot_release(i, false);
		}
		else
			ls->used = false;
	}

	if (pg_atomic_read_u32(&ng_shared->entry_count) > (uint32) ng_max)
		ng_evict_to_limit();
	slots_trim_local_map();
}

/*
 * slots_exit_callback
 *		Fold every slot before the backend goes (waiting for locks: the
 *		counts must not be lost).
 *
 *		This before_shmem_exit callback is registered after InitPostgres
 *		registered ShutdownPostgres, so it runs first: a backend that exits
 *		in the middle of a transaction (FATAL, pg_terminate_backend) still has
 *		it open here, possibly with LWLocks held.  So it first does what
 *		ShutdownPostgres would do next anyway, as RemoveTempRelationsCallback
 *		does in the same position: AbortOutOfAnyTransaction, which releases
 *		every LWLock and runs the abort callbacks (failures.c records the
 *		failed statement into our slots now, before they are folded);
 *		LWLockReleaseAll covers an exit outside a transaction.
 *
 *		Nothing here allocates DSA memory (ng_dsa_can_allocate is false while
 *		the process exits): an unbound slot whose key has no entry leaves its
 *		counts in evicted_calls and unadmitted_calls.  If this callback
 *		fails nonetheless (an ERROR here is FATAL and skips the rest of it),
 *		each slot is either folded or still in use and consistent; readers
 *		count the latter, and the next backend with this process number takes
 *		them over (slots_inherit).
 */
static void
slots_exit_callback(int code, Datum arg)
{
	if (my_area == NULL || ng_area == NULL)
		return;
	AbortOutOfAnyTransaction();
	LWLockReleaseAll();
	/* bound slots first: dropping their pins may make room for the others */
	for (int i = 0; i < ng_slots_per_backend; i++)
	{
		if (local_slots[i].in_use && local_slots[i].entry != NULL)
		{
			slot_release(i, true);
#ifdef USE_ASSERT_CHECKING
			if (ng_debug_fail_at_exit)
				elog(ERROR, "pg_stat_statements_ng: failure injected at exit");
#endif
		}
	}
	for (int i = 0; i < ng_slots_per_backend; i++)
	{
		if (!local_slots[i].in_use)
			continue;
		(void) slot_adopt_entry(i, true);
		slot_release(i, true);
	}
	pg_write_barrier();
	my_area->active = false;
	my_area = NULL;
}
