/*-------------------------------------------------------------------------
 *
 * refusal.c
 *		The admission filter (admit.h) at a parse: whether a new statement's
 *		parse has anything to do when the filter would refuse it an entry,
 *		and the refusal it leaves for the execution that follows.
 *
 * Why a file of its own: the filter itself is inline (admit.h), asked
 * where an entry is created (entry.c); what is here is the memory of one
 * parse's refusal, which the parse (parse.c) writes and the binding of the
 * statement's execution (bind.c) reads, so that the execution does not
 * look the entry up a second time.  slots_int.h describes the whole slot
 * protocol.
 *
 * Locking.  The filter takes no lock (admit.h).  ng_slot_parse_refused
 * looks the entry up under its partition lock, shared, waiting for it as a
 * parse does; the memory of the refusal is backend-local.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "admit.h"
#include "slots_int.h"

/*
 * The key whose parse last found no entry and was refused one by the filter
 * (ng_slot_parse_refused), with ngs_use_clock then: its execution, if it
 * comes before any other statement is counted (a planning may be), asks the
 * filter without looking the entry up a second time.  An entry another
 * backend made in between was admitted, so the filter has seen the key
 * (then the execution looks as usual), or was made while the filter was off
 * (then it still is, most likely); a race past both only sends one
 * execution to unadmitted_calls instead of the entry.
 */
static NgKey refused_at_parse_key;
static bool refused_at_parse_set = false;
static uint64 refused_at_parse_clock;

/* did key's parse find no entry and was it refused, just now? */
static inline bool
refused_at_parse(const NgKey *key)
{
	return refused_at_parse_set &&
		ngs_use_clock - refused_at_parse_clock <= 1 &&
		ng_key_equal(&refused_at_parse_key, key);
}

/*
 * ng_slot_parse_refused
 *		For ng_slots_note_parse, of a statement whose text is not settled:
 *		true if the admission filter would refuse it a new entry and the
 *		parse has nothing to do (it makes no text): the statement has no
 *		constants (its text is stored at execution anyway), or its entry
 *		does not exist (asked under the shared partition lock, waiting for
 *		it as the parse does), or exists with a text.  False if the parse
 *		goes on as usual.  Notes what it learnt in le.
 */
bool
ng_slot_parse_refused(NgLocalEntry *le, const NgTextSource *src)
{
	NgEntryRequest req = {
		.key = &le->key,
		.hash = le->hash,
		.wait = true,
		.ask = NG_ADMIT_ASK,
	};
	NgEntryResult res;
	uint32		text_epoch;
	NgSharedEntry *entry;

	if (!admit_refuses(&le->key))
		return false;
	if (src->jstate == NULL || src->jstate->clocations_count == 0)
	{
		le->constants = NG_CONSTANTS_NONE;
		return true;
	}
	text_epoch = ng_partition(le->hash)->text_epoch;
	entry = ng_slot_get_entry(&req, &res);
	if (entry != NULL && !res.has_text)
		return false;
	if (entry == NULL)
	{
		refused_at_parse_key = le->key;
		refused_at_parse_clock = ngs_use_clock;
		refused_at_parse_set = true;
	}
	le->constants = NG_CONSTANTS_SOME;
	if (entry != NULL)
		le->text_epoch = text_epoch;
	text_note(le, false, entry, res.has_text);
	return true;
}

/*
 * ng_slot_refused_since_parse
 *		For ng_slot_bind_entry: true if le's parse, just now, found no entry
 *		and was refused one (ng_slot_parse_refused), and the filter still
 *		refuses the key: the statement takes no slot.  An execution uses the
 *		parse's refusal up, and a refused one is noted in the filter; a
 *		planning only asks.  No lock.
 */
bool
ng_slot_refused_since_parse(const NgLocalEntry *le, bool execution)
{
	if (!refused_at_parse(&le->key))
		return false;
	if (execution)
		refused_at_parse_set = false;	/* used up */
	return admit_filtering() &&
		!admit_key(&le->key, execution ? NG_ADMIT_NOTE : NG_ADMIT_ASK);
}
