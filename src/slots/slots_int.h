/*-------------------------------------------------------------------------
 *
 * slots_int.h
 *		What the slot files share among themselves: the backend-local state
 *		of this backend's slots, the slot write protocol, and the inline
 *		helpers the hot path needs.  Included by the files of src/slots/ only;
 *		other files use slots.h.
 *
 * The slot files, and what each owns, from the top down: a file calls only
 * files below it in this list (scripts/check-house.sh checks that it lists
 * every file of the folder, and that no call goes up).
 *
 *	count.c		the hot path: counting an execution or a planning in the
 *				statement's slot
 *	parse.c		a parse: noting whether the statement had constants, its
 *				entry made with its normalized text, a pin carried to its
 *				execution
 *	life.c		attaching (and taking over slots a failed exit left), the
 *				periodic maintenance, the fold of every slot at exit
 *	bind.c		binding a slot to a statement: its entry (the pin its parse
 *				carried, or one found or created, with a text offered) and
 *				the binding recorded in the slot
 *	victim.c	choosing the slot a new statement takes: a free one, or the
 *				least recently used one given up
 *	direct.c	counting straight into an entry, without a slot (a process
 *				without slots, a statement that recurs rarely)
 *	refusal.c	the admission filter at a parse, and the refusal it leaves
 *				for the execution that follows (the filter itself is inline,
 *				admit.h)
 *	entry.c		finding or creating a key's entry (making room on a full
 *				table, past the admission filter), giving it its text; an
 *				unbound slot's key given an entry before its fold
 *	fold.c		folding a slot into its entry and releasing it (also the
 *				idle bound slots, for eviction), or keeping it bound when its
 *				histogram cells are wanted; the counts of executions without
 *				an entry
 *	cells.c		a slot's histogram cells past the hot path's inline hit: a
 *				bucket's new cell from the pool, the spare groups a fold will
 *				need
 *	text.c		the text a new entry may get: what the last few parses
 *				showed, the text made from it or from the source
 *	local.c		the backend-local state below, defined once
 *	area.c		the slot areas in main shared memory (sizes, layout,
 *				initialization) and the lock-free read of a slot
 *
 * Layout.  Each process that can run queries owns an NgBackendSlots area in
 * main shared memory (indexed by its PGPROC number): a map saying which
 * partition each slot counts for, its cell pool, then its NgSlot structs:
 * ng_slots_per_backend of them for a client backend, fewer for any other
 * process (area.c).  The backend works with its own area's count,
 * ngs_nslots, never the setting.  Apart from the areas, each process has a
 * partition mask saying which partitions its slots count for, so that
 * readers skip the areas of processes with no slot in the partition they
 * read (slots.h); the owner keeps it when it binds, folds and inherits
 * slots, never when it counts.
 * A backend-local hash table maps a key to the slot counting it, so finding
 * the slot of a statement the backend already tracks touches no shared
 * memory at all.
 *
 * Write protocol (single writer: the owner).  Every change to a slot is
 * bracketed by two increments of slot->changecount, plain stores separated
 * from the change by pg_write_barrier(), as backend_status.c does for
 * st_changecount.  A reader copies the slot between two reads of the count
 * (with read barriers) and retries until both are equal and even.  A
 * slot's histogram cells (slots.h) are written the same way, inside the
 * slot's write section, and copied with it.  Counting
 * an execution of a tracked statement is therefore: one local hash lookup,
 * two reads of the partition's reset epoch (before, and again after the
 * sample is in; only when it moved, the bound entry's dead flag and min/max
 * generation), and the bracketed update: no lock, no spinlock, no atomic
 * read-modify-write.
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
 * All the backend-local state below belongs to this backend alone: no
 * lock protects it, and nothing in it is seen by other processes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SLOTS_INT_H
#define SLOTS_INT_H

#include "counters.h"
#include "guc.h"
#include "shmem.h"
#include "slots.h"
#include "store.h"

/*
 * Who asks for a new entry, for the admission filter (admit.h): an
 * execution that needs an entry (binding a slot) notes its key when
 * refused; a parse or a planning only asks, so that they and the execution
 * of one statement do not look like two; an unbound slot's fold
 * (maintenance, a slot given up, exit) is admitted if the slot counted at
 * least two executions, else refused without asking (its own execution
 * noted the key).  A process without slots (ng_slot_count_direct) is always
 * admitted.
 */
typedef enum NgAdmitAsk
{
	NG_ADMIT_ASK,				/* admitted if seen; nothing noted (parse) */
	NG_ADMIT_NOTE,				/* admitted if seen, else noted (execution) */
	NG_ADMIT_GRANT				/* admitted (it recurred, or no slots) */
} NgAdmitAsk;

/*
 * A request for a key's shared entry (ng_slot_get_entry, entry.c): find it,
 * or create it if the table has room (or can be made to have it) and the
 * admission filter lets it; give it qtext if it has no text.  Fields left
 * out of an initializer are zero: no text, no pin, no wait, NG_ADMIT_ASK.
 */
typedef struct NgEntryRequest
{
	const NgKey *key;
	uint32		hash;			/* ng_key_hash(key) */
	const char *qtext;			/* the text to store if the entry has none
								 * (palloc'd, the caller's to free), or NULL */
	int			text_len;		/* qtext's length in bytes */
	bool		pin;			/* return the entry pinned */
	bool		wait;			/* wait for the partition lock; else a busy
								 * partition means "not now" (NULL) */
	NgAdmitAsk	ask;			/* who asks, for the admission filter */
} NgEntryRequest;

/* What ng_slot_get_entry found, beside the entry it returns */
typedef struct NgEntryResult
{
	dsa_pointer dp;				/* the entry's DSA pointer (when returned) */
	bool		has_text;		/* the entry ends up with a text */
	bool		refused;		/* the admission filter refused a new entry */
} NgEntryResult;

/* What the backend knows of a key's constants, from its last parse */
typedef enum NgConstants
{
	NG_CONSTANTS_UNKNOWN = 0,
	NG_CONSTANTS_NONE,			/* text made from the source at execution */
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
	uint64		last_counted;	/* ngs_use_clock at the count of its last
								 * execution, or 0 */
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
#define SH_EQUAL(tb, a, b)	ng_key_equal(&(a), &(b))
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a)	((a)->hash)
#define SH_SCOPE			static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

#pragma GCC visibility push(hidden)

/* Backend-local bookkeeping of one of my slots */
typedef struct NgLocalSlot
{
	bool		in_use;
	NgKey		key;			/* the key it counts for, when in use */
	NgSharedEntry *entry;		/* bound entry (address), or NULL */
	uint64		last_used;		/* ngs_use_clock at last count */
	bool		used;			/* counted since the last maintenance */
	uint32		reset_epoch;	/* the partition's reset_epoch when the entry
								 * was last seen alive, with the slot's
								 * min/max generation its own */
	int			spares_owed;	/* histogram groups its cells opened that its
								 * entry lacked (count.c) */
} NgLocalSlot;

/* ---- backend-local state (defined in local.c) ---- */

extern NgBackendSlots *ngs_my_area; /* my slot area, or NULL */
extern int	ngs_nslots;			/* my area's slots (its nslots), or 0 */
extern NgLocalSlot *ngs_local_slots;	/* [ngs_nslots] */

/*
 * A direct-mapped cache in front of the local map, by the low bits of the
 * queryid (already a hash): where a key's entry was last found in the map's
 * array, valid while that array is the map's (ngs_map_version, bumped when
 * an insert grows the map and when the map is rebuilt) and the place still
 * holds the key, in use (an insert or a delete may have moved entries: a
 * moved entry leaves its old place to another entry, or empty).  1024
 * places: two of a few dozen statements rarely share one.  See
 * local_entry_of.
 */
#define NG_RECENT_KEYS		1024
typedef struct NgRecentKey
{
	NgLocalEntry *le;
	uint64		version;		/* ngs_map_version when le was found */
} NgRecentKey;
extern NgRecentKey ngs_recent_keys[NG_RECENT_KEYS];
extern uint64 ngs_map_version;	/* starts at 1: a zeroed NgRecentKey is stale */
extern nglocal_hash *ngs_local_map;
extern uint64 ngs_use_clock;
extern bool ngs_attached;
extern int	ngs_nfree;			/* my slots not in use */
extern uint16 ngs_free_cell;	/* first free cell of my pool, chained */
extern int	ngs_cells_free;		/* how many */
extern bool ngs_exiting;		/* in the exit callback */
extern int	ngs_spares_owed;	/* histogram groups my slots' folds may have
								 * to make (sum of NgLocalSlot.spares_owed) */
extern NgHistCell *ngs_pool;	/* my area's cell pool (area_cells) */
extern uint16 *ngs_cell_index;	/* [slot][kind][bucket]: its cell, or
								 * NG_NO_CELL; NULL if not allocated */
extern volatile uint32 *ngs_my_partitions;	/* my partition mask (slots.h), or
											 * NULL */
extern uint16 ngs_partition_slots[NG_NUM_PARTITIONS];	/* my slots in use, by
														 * partition */

/* ---- the slot area's layout ---- */

/* bytes before the cell pool of an area of nslots: the header and its map */
static inline Size
slots_map_size(int nslots)
{
	return MAXALIGN(offsetof(NgBackendSlots, partition_of) +
					sizeof(uint8) * nslots);
}

/* cells in the pool of an area of nslots */
static inline int
slots_pool_cells(int nslots)
{
	return NG_CELLS_PER_SLOT * nslots;
}

/* the area's cell pool, after the map */
static inline NgHistCell *
area_cells(NgBackendSlots *area)
{
	return (NgHistCell *) ((char *) area + slots_map_size(area->nslots));
}

/* slot index of area (ng_slot_at, inlined for the hot path), after the pool */
static inline NgSlot *
slot_at(NgBackendSlots *area, int index)
{
	return (NgSlot *) ((char *) area + area->slots_offset) + index;
}

/* ---- the write protocol ---- */

/*
 * A write section of what its owner alone writes (a slot, an area's
 * refused counts): the change count is odd while it lasts.
 */
static inline void
write_section_begin(uint32 *changecount)
{
	(*changecount)++;
	pg_write_barrier();
}

static inline void
write_section_end(uint32 *changecount)
{
	pg_write_barrier();
	(*changecount)++;
	Assert((*changecount & 1) == 0);
}

static inline void
slot_begin_write(NgSlot *slot)
{
	write_section_begin(&slot->changecount);
}

static inline void
slot_end_write(NgSlot *slot)
{
	write_section_end(&slot->changecount);
}

/* ---- my partition mask (slots.h) ---- */

/*
 * slot_partition_take
 *		Before my slot's map entry says partition p (and so before any count
 *		in it): the bit of p in my mask.  The caller's write section begins
 *		with a write barrier, which orders this store before the map's.
 */
static inline void
slot_partition_take(int p)
{
	if (ngs_partition_slots[p]++ == 0)
		*ngs_my_partitions |= NG_PARTITION_BIT(p);
}

/*
 * slot_partition_give
 *		After my slot of partition p was folded and its map entry freed,
 *		under p's lock held exclusively: clear p's bit if it was my last
 *		slot there.  A reader that then finds the bit clear holds the lock
 *		after the fold, and finds the counts in the entry.
 */
static inline void
slot_partition_give(int p)
{
	Assert(ngs_partition_slots[p] > 0);
	if (--ngs_partition_slots[p] == 0)
		*ngs_my_partitions &= ~NG_PARTITION_BIT(p);
}

/* ---- a slot's histogram cells (slots.h) ---- */

/*
 * slot_cell_index
 *		Where this backend keeps, for its slot i, the cell of each
 *		(kind, bucket): ngs_cell_index, or NULL when it could not be
 *		allocated (then cells are found by walking the slot's chain).
 */
static inline uint16 *
slot_cell_index(int i)
{
	if (ngs_cell_index == NULL)
		return NULL;
	return ngs_cell_index + i * (NG_NUM_KINDS * NG_HIST_BUCKETS);
}

/*
 * Counting a sample in a slot's cells: inline in count.c when the
 * bucket's cell is in the index; else these (cells.c).
 */
extern bool ng_slot_hist_count_new(NgSlot *slot, int i, int kind, int bucket);
extern void ng_slot_owe_group(const NgSlot *slot, NgLocalSlot *ls, int kind,
							  int bucket);

/*
 * slot_hist_clear
 *		Give slot's (my slot i's) cells back to my pool (and forget them in the index, and
 *		the spare groups they were owed).  Inside the slot's write section.
 */
static inline void
slot_hist_clear(NgSlot *slot, int i)
{
	NgHistCell *pool = ngs_pool;
	uint16	   *index = slot_cell_index(i);
	uint16		at = slot->hist_head;
	NgLocalSlot *ls = &ngs_local_slots[i];

	ngs_spares_owed -= ls->spares_owed;
	ls->spares_owed = 0;

	while (at != NG_NO_CELL)
	{
		uint16		next = pool[at].next;

		if (index != NULL)
			index[pool[at].kind * NG_HIST_BUCKETS + pool[at].bucket] =
				NG_NO_CELL;
		pool[at].next = ngs_free_cell;
		ngs_free_cell = at;
		ngs_cells_free++;
		at = next;
	}
	slot->hist_head = NG_NO_CELL;
	slot->hist_cells = 0;
}

/* ---- backend-local bookkeeping ---- */

/*
 * local_entry
 *		This backend's entry for key (hash = ng_key_hash(key)), created if
 *		new.  The pointer is valid until the next insert into or delete from
 *		the local map.
 */
static inline NgLocalEntry *
local_entry(const NgKey *key, uint32 hash)
{
	bool		found;
	uint64		size = ngs_local_map->size;
	NgLocalEntry *le = nglocal_insert_hash(ngs_local_map, *key, hash, &found);

	if (!found)
	{
		ng_key_poison_padding(&le->key);
		le->slot = -1;
		le->constants = NG_CONSTANTS_UNKNOWN;
		le->text_done = false;
		le->text_epoch = 0;
		le->text_missing = false;
		le->last_counted = 0;
	}

	/*
	 * It grew: a new array, and the cache pointed into the old one.  An
	 * insert may grow the map even when the key was there (simplehash checks
	 * its fill before it looks), so this is not only for new keys.
	 */
	if (ngs_local_map->size != size)
		ngs_map_version++;
	return le;
}

/*
 * local_entry_recent, local_entry_of
 *		local_entry(key), without hashing or probing when the key was looked
 *		up since the local map last changed and its place in the cache of
 *		recent keys was not taken since: a statement's parse and its
 *		execution look up the same key, and a backend runs the same few
 *		statements over and over.  local_entry_recent only looks in that
 *		cache (NULL if the key is not there); local_entry_of then looks
 *		the key up, adding it if it is new.
 */
static inline NgLocalEntry *
local_entry_recent(const NgKey *key)
{
	NgRecentKey *recent = &ngs_recent_keys[key->queryid % NG_RECENT_KEYS];
	NgLocalEntry *le = recent->le;

	/* a valid place points into the map's current array */
	Assert(recent->version != ngs_map_version ||
		   (le >= ngs_local_map->data &&
			le < ngs_local_map->data + ngs_local_map->size));
	if (likely(recent->version == ngs_map_version) &&
		le->status == nglocal_SH_IN_USE && ng_key_equal(&le->key, key))
		return le;
	return NULL;
}

static inline NgLocalEntry *
local_entry_of(const NgKey *key)
{
	NgRecentKey *recent;
	NgLocalEntry *le = local_entry_recent(key);

	if (likely(le != NULL))
		return le;
	le = local_entry(key, ng_key_hash(key));
	recent = &ngs_recent_keys[key->queryid % NG_RECENT_KEYS];
	recent->le = le;
	recent->version = ngs_map_version;
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
 *		Remember what ng_slot_get_entry found out about le's text, having
 *		offered one (qtext_offered) or not: entry is the entry it returned
 *		(or NULL), has_text its NgEntryResult.has_text.
 */
static inline void
text_note(NgLocalEntry *le, bool qtext_offered, const NgSharedEntry *entry,
		  bool has_text)
{
	if (entry == NULL)
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

/* Functions in parse.c: ng_slots_note_parse (slots.h) */

/* Functions in life.c */
extern bool ng_slots_attach_first(void);

/* Functions in bind.c */
extern int	ng_slot_bind(NgLocalEntry *le, const NgTextSource *src,
						 bool execution);
extern NgSharedEntry *ng_slot_bind_entry(NgLocalEntry *le,
										 const NgTextSource *src,
										 bool execution, dsa_pointer *dp,
										 bool *refused);
extern void ng_slot_carry(const NgKey *key, NgSharedEntry *entry,
						  dsa_pointer dp);
extern bool ng_slot_carries_pin(void);
extern bool ng_slot_drop_carried(bool wait);

/* Functions in victim.c */
extern int	ng_slot_find_free(void);

/* Functions in direct.c */
extern void ng_slot_count_direct(NgLocalEntry *le, const NgSample *sample,
								 const NgTextSource *src);
extern bool ng_slot_count_into_entry(NgLocalEntry *le, const NgSample *sample);

/* Functions in refusal.c */
extern bool ng_slot_parse_refused(NgLocalEntry *le, const NgTextSource *src);
extern bool ng_slot_refused_since_parse(const NgLocalEntry *le,
										bool execution);

/* Functions in entry.c */
extern bool ng_slot_room_lacking(void);
extern NgSharedEntry *ng_slot_get_entry(const NgEntryRequest *req,
										NgEntryResult *res);
extern bool ng_slot_adopt_entry(int i, bool wait);

/* Functions in fold.c */
extern void ng_slots_reclaim_cells(void);
extern void ng_slots_flush_cells(void);
extern bool ng_slot_release(int i, bool wait);
extern bool ng_slot_flush(int i, bool wait);
extern int	ng_slots_release_idle(int n);
extern void ng_slot_count_refused(int64 calls, double exec_time, int64 failed,
								  int64 refusals);

/* Functions in text.c */
extern void ng_recent_note(uint64 queryid, bool has_constants,
						   const char *normalized, int len);
extern char *ng_slot_text(const NgLocalEntry *le, const NgTextSource *src,
						  int *len);

#pragma GCC visibility pop

#endif							/* SLOTS_INT_H */
