/*-------------------------------------------------------------------------
 *
 * parse.c
 *		What a parse does for its statement: note whether it had constants,
 *		and make sure its entry exists with its normalized text if it had
 *		(the only moment a normalized text can be made), carrying a pin on
 *		the entry to the execution that follows.
 *
 * Why a file of its own: a parse is the other way into the slots beside
 * counting (count.c), and it is about texts, not counts: it runs for
 * every parse, but does nothing once the statement's text is settled.
 * slots_int.h describes the whole slot protocol.
 *
 * Locking.  A statement whose text is settled takes nothing.  Otherwise a
 * parse takes the partition lock (and may wait for it) only to look up or
 * create an entry whose normalized text it must store (entry.c), and to
 * drop a pin an earlier parse carried (bind.c); never waits for eviction.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "alloc.h"
#include "slots_int.h"

/*
 * slots_note_parse_text
 *		ng_slots_note_parse for a statement whose text is not settled: note
 *		whether it had constants, and make sure its entry exists with its
 *		normalized text if it had.  Out of line: the common case, a settled
 *		text, needs none of this.
 */
static pg_noinline void
slots_note_parse_text(NgLocalEntry *le, NgSharedPartition *part,
					  const NgKey *key, const NgTextSource *src)
{
	char	   *qtext;
	int			text_len = 0;
	NgEntryRequest req = {
		.key = key,
		.hash = le->hash,
		.wait = true,
		.ask = NG_ADMIT_ASK,
	};
	NgEntryResult res;
	NgSharedEntry *entry;
	bool		carry;

	/* a new statement the admission filter would refuse: no text */
	if (ng_slot_parse_refused(le, src))
		return;

	/*
	 * Counted in an unbound slot, for lack of room lately: no entry can be
	 * made for it now, so no text need be (a later parse makes it).
	 */
	if (le->slot >= 0 && ngs_local_slots[le->slot].entry == NULL &&
		ng_slot_room_lacking())
		return;
	if (src->jstate == NULL || src->jstate->clocations_count == 0)
	{
		/*
		 * No constants: the text is made when it first runs.  Keep it at hand
		 * too, for a failure recorded after the source text is gone.
		 */
		le->constants = NG_CONSTANTS_NONE;
		qtext = ng_qtext_prepare(src, &text_len);
		ng_recent_note(key->queryid, false, qtext, text_len);
		if (qtext)
			pfree(qtext);
		return;
	}
	le->constants = NG_CONSTANTS_SOME;

	le->text_epoch = part->text_epoch;
	qtext = ng_qtext_prepare(src, &text_len);
	ng_recent_note(key->queryid, true, qtext, text_len);

	/*
	 * A statement without a slot is about to be bound to its entry, when it
	 * runs: pin the entry now and carry the pin to that execution, which then
	 * need not look the entry up again (ng_slot_bind).
	 */
	carry = (ngs_my_area != NULL && le->slot < 0);
	if (carry)
		(void) ng_slot_drop_carried(true);
	req.qtext = qtext;
	req.text_len = text_len;
	req.pin = carry;
	entry = ng_slot_get_entry(&req, &res);
	if (qtext)
		pfree(qtext);
	if (carry && entry != NULL)
		ng_slot_carry(key, entry, res.dp);
	/* a statement whose text cannot be made is settled too */
	text_note(le, true, entry, res.has_text);
}

/*
 * ng_slots_note_parse
 *		Called when a statement is parsed (the arguments of the parse
 *		analysis hook, and whether it runs at the top level): remember
 *		whether it had constants, and make sure its entry exists with its
 *		normalized text if it had (the only moment a normalized text can be
 *		made).  Waits for the partition lock if it must create the entry,
 *		never for eviction.  The hook's tail call: its key is made here.
 */
void
ng_slots_note_parse(const Query *query, const char *source_text,
					JumbleState *jstate, bool toplevel)
{
	NgKey		key;
	NgLocalEntry *le;
	NgSharedPartition *part;
	NgTextSource src;

	/* set up to count, attaching the first time (ng_slots_attach, count.c) */
	if (likely(ngs_attached))
	{
		if (ng_area == NULL)
			return;				/* detached, at backend exit */
	}
	else if (!ng_slots_attach_first())
		return;
	ng_key_set(&key, query->queryId, toplevel);
	le = local_entry_of(&key);
	part = ng_partition(le->hash);

	/*
	 * Known to have its text, or to get none for now (text memory full)?  A
	 * reset, or text memory being shrunk, since then (the partition's text
	 * epoch moved) may have taken it, and texts freed or a higher cap may
	 * make room: then look again.  Otherwise nothing to do, and no lock.
	 */
	if (likely(text_settled(le, part)))
		return;
	src.query = source_text;
	src.location = query->stmt_location;
	src.len = query->stmt_len;
	src.jstate = jstate;
	src.utility = (query->utilityStmt != NULL);
	slots_note_parse_text(le, part, &key, &src);
	ng_log_losses();
}
