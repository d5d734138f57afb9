/*-------------------------------------------------------------------------
 *
 * text.c
 *		The text a new entry of a key may be given by this backend: what
 *		its last few parses showed (whether the statement had constants,
 *		its normalized text), and the text made from them or from the
 *		source text at hand, never one with literals.
 *
 * Why a file of its own: a normalized text can be made only at parse
 * (parse.c notes it here), but an entry may have to be created later, at
 * an execution (bind.c) or without a slot (direct.c); this is what they
 * consult.  It touches no shared memory.
 *
 * Locking.  None: everything here is private to the backend.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "slots_int.h"

/*
 * What the last few parses in this backend showed, by queryid: whether the
 * statement had constants, and its normalized text if one was made.  It
 * serves an execution that must create an entry when the parse could not
 * (the entry was removed in between, or the statement runs under another
 * user than it was parsed as, after SET ROLE), so that such an entry still
 * gets a text that is safe to store.  The key is the queryid alone: any
 * statement of that queryid may give the entry its text.  Whether the last
 * parse had constants only chooses between that parse's text and one made
 * from the source text at hand; having constants is a property of a text,
 * not of a queryid (a CASE without ELSE shares its queryid with one whose
 * ELSE is a literal), so a text made from the source is normalized like
 * any other (ng_qtext_prepare replaces every literal the scanner finds).
 */
#define NG_RECENT_PARSES	16

typedef struct NgRecentParse
{
	uint64		queryid;		/* 0: unused */
	bool		has_constants;
	char	   *normalized;		/* in recent_cxt, or NULL; made without the
								 * jumble when it had no constants */
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

void
ng_recent_note(uint64 queryid, bool has_constants, const char *normalized, int len)
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
	r->normalized = NULL;		/* never left pointing at freed memory */
	r->queryid = queryid;
	r->has_constants = has_constants;
	r->len = 0;
	if (normalized != NULL)
	{
		/* out of memory: no text at hand, which is allowed (see below) */
		r->normalized = MemoryContextAllocExtended(recent_cxt, len + 1,
												   MCXT_ALLOC_NO_OOM);
		if (r->normalized != NULL)
		{
			memcpy(r->normalized, normalized, len);
			r->normalized[len] = '\0';
			r->len = len;
		}
	}
}

/*
 * ng_slot_text
 *		The text this backend may store for a new entry of le's key: when
 *		its last parse showed no constants, the statement made from the
 *		source text (without the jumble: every literal the scanner finds
 *		replaced); else the normalized text made at its parse, if still at
 *		hand; else none (the next parse supplies it).  Never a text with
 *		literals.
 */
char *
ng_slot_text(const NgLocalEntry *le, const NgTextSource *src, int *len)
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
