/*-------------------------------------------------------------------------
 *
 * fingerprint.c
 *		A statement's fingerprint: a 64-bit hash of its normalized text's
 *		tokens, the same for the same statement on every server and every
 *		major, where queryid is not (it hashes object OIDs).
 *
 * Why a file of its own: the fingerprint is a contract with collectors
 * (README states its rules, which another program can implement), apart
 * from normalization (qtext.c), which follows each major's
 * pg_stat_statements.
 *
 * The rules.  The text is split into tokens by the core SQL scanner
 * (qtext_scan.c, standard_conforming_strings on); comments and whitespace
 * are not tokens.  Each token is written to the hash as a class letter,
 * its text and a zero byte:
 *   w  an identifier or keyword: its name, unquoted ones in lower case
 *      (ASCII), quoted ones as written between the quotes ("" read as ");
 *      so select, SELECT and "select" are one word
 *   p  a parameter ($n, whatever n): no text
 *   l  a constant the text kept (a type modifier, an ORDER BY position):
 *      as written
 *   o  anything else (operators, punctuation): as written, but != as <>
 * A list of parameters is one parameter: the items between the
 * parentheses after IN, or between the brackets of ARRAY[...] (and the
 * brackets nested in them), when every item is a parameter alone or with
 * a type (casts with ::, CAST(... AS type), a typed constant such as
 * date $1).  So 15 to 17's IN ($1, $2, $3) and 18's squashed list, IN
 * ($1 and a comment), have one fingerprint, as do lists of any length.  A
 * savepoint's name (SAVEPOINT, RELEASE, ROLLBACK TO) and a prepared
 * statement's (DEALLOCATE) are parameters: 17 and later normalize them;
 * and the values of SET name TO (or =), when each is one word (but
 * DEFAULT), constant or parameter, are one parameter: 18 normalizes them
 * (SET search_path TO public) and groups lists of any length.
 * The hash is FNV-1a over those bytes, then one 64-bit finalizer round; it
 * depends on no platform's byte order.
 *
 * Computed when read, never on the tracked path: a reader computes a
 * text's fingerprint once and caches it in the text's header
 * (fingerprint_cache.c).
 *
 * Locks: none; backend-local work.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/keywords.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "fingerprint.h"
#include "qtext_scan.h"

NG_FUNCTION_INFO(pg_stat_statements_ng_fingerprint_1_2);

#define FNV_OFFSET	UINT64CONST(0xcbf29ce484222325)
#define FNV_PRIME	UINT64CONST(0x100000001b3)

/* a token as the fingerprint sees it */
typedef struct FpToken
{
	char		cls;			/* 'w', 'p', 'l', 'o' (head of the file) */
	const char *text;			/* in the statement; name for words */
	int			len;
	bool		quoted;			/* a quoted identifier */
} FpToken;

/* is token t the text s (an operator or punctuation)? */
static bool
fp_is(const FpToken *t, const char *s)
{
	return t->cls == 'o' && t->len == (int) strlen(s) &&
		memcmp(t->text, s, t->len) == 0;
}

/* is token t the unquoted word kw (lower case)? */
static bool
fp_word(const FpToken *t, const char *kw)
{
	if (t->cls != 'w' || t->quoted || t->len != (int) strlen(kw))
		return false;
	return pg_strncasecmp(t->text, kw, t->len) == 0;
}

static uint64
fp_hash_bytes(uint64 h, const char *s, int len)
{
	for (int i = 0; i < len; i++)
	{
		h ^= (unsigned char) s[i];
		h *= FNV_PRIME;
	}
	return h;
}

/*
 * fp_hash_token
 *		Add token t to hash h: its class, its text (a word's name), a zero
 *		byte.
 */
static uint64
fp_hash_token(uint64 h, const FpToken *t)
{
	h = fp_hash_bytes(h, &t->cls, 1);
	if (t->cls == 'w')
	{
		for (int i = 0; i < t->len; i++)
		{
			char		c = t->text[i];

			if (t->quoted && c == '"')
				i++;			/* "" is one quote */
			else if (!t->quoted && c >= 'A' && c <= 'Z')
				c += 'a' - 'A';
			h = fp_hash_bytes(h, &c, 1);
		}
	}
	else if (t->cls == 'o' && t->len == 2 && memcmp(t->text, "!=", 2) == 0)
		h = fp_hash_bytes(h, "<>", 2);
	else if (t->cls != 'p')
		h = fp_hash_bytes(h, t->text, t->len);
	return fp_hash_bytes(h, "", 1);
}

/* the tokens of the NUL-terminated text s (len bytes), or NULL */
static FpToken *
fp_tokens(const char *s, int len, int *n)
{
	ScanToken  *st = ng_scan_tokens(s, len, true, n);
	FpToken    *t;

	if (st == NULL)
		return NULL;
	t = palloc(sizeof(FpToken) * (*n + 1));
	for (int i = 0; i < *n; i++)
	{
		t[i].text = s + st[i].location;
		t[i].len = st[i].length;
		t[i].quoted = false;
		switch (st[i].kind)
		{
			case SCAN_WORD:
				t[i].cls = 'w';
				if (t[i].text[0] == '"' && t[i].len >= 2)
				{
					t[i].quoted = true;
					t[i].text ++;
					t[i].len -= 2;
				}
				break;
			case SCAN_PARAM:
				t[i].cls = 'p';
				break;
			case SCAN_STRING:
			case SCAN_NUMBER:
			case SCAN_INTEGER:
				t[i].cls = 'l';
				break;
			default:
				t[i].cls = 'o';
				break;
		}
	}
	pfree(st);
	return t;
}

/* does token t open (+1) or close (-1) a bracket, or neither (0)? */
static int
fp_bracket(const FpToken *t)
{
	if (fp_is(t, "(") || fp_is(t, "["))
		return 1;
	if (fp_is(t, ")") || fp_is(t, "]"))
		return -1;
	return 0;
}

/*
 * fp_param_item
 *		Is t[from, to) a parameter alone or with a type: one parameter,
 *		outside brackets, with only words, dots, :: and bracketed type
 *		modifiers (integers) around it; or CAST( such an item AS type )?
 */
static bool
fp_param_item(const FpToken *t, int from, int to)
{
	int			depth = 0;
	int			params = 0;

	if (to - from >= 5 && fp_word(&t[from], "cast") &&
		fp_is(&t[from + 1], "(") && fp_is(&t[to - 1], ")"))
	{
		for (int i = from + 2; i < to - 1; i++)
			if (fp_word(&t[i], "as"))
				return fp_param_item(t, from + 2, i);
		return false;
	}
	for (int i = from; i < to; i++)
	{
		int			b = fp_bracket(&t[i]);

		depth += b;
		if (b != 0 || t[i].cls == 'w' || fp_is(&t[i], ".") ||
			fp_is(&t[i], "::"))
			continue;
		if (t[i].cls == 'p' && depth == 0)
			params++;
		else if (depth == 0 || !(t[i].cls == 'l' || fp_is(&t[i], ",")))
			return false;
	}
	return params == 1 && depth == 0;
}

/*
 * fp_list_end
 *		If the bracket at t[open] holds a list of parameter items
 *		(fp_param_item), the index of its closing bracket; else -1.
 */
static int
fp_list_end(const FpToken *t, int n, int open)
{
	int			depth = 0;
	int			item = open + 1;

	for (int i = open + 1; i < n; i++)
	{
		int			b = fp_bracket(&t[i]);

		if (b < 0 && depth == 0)
			return fp_param_item(t, item, i) ? i : -1;
		depth += b;
		if (depth == 0 && fp_is(&t[i], ","))
		{
			if (!fp_param_item(t, item, i))
				return -1;
			item = i + 1;
		}
	}
	return -1;
}

/*
 * fp_opens_list
 *		Does the bracket at t[i] open a list that 18 may squash: "(" after
 *		IN, "[" after ARRAY or inside such brackets (in_array: the innermost
 *		bracket open at i is an ARRAY's)?
 */
static bool
fp_opens_list(const FpToken *t, int i, bool in_array)
{
	if (i == 0)
		return false;
	if (fp_is(&t[i], "("))
		return fp_word(&t[i - 1], "in");
	if (fp_is(&t[i], "["))
		return fp_word(&t[i - 1], "array") ||
			(in_array && (fp_is(&t[i - 1], "[") || fp_is(&t[i - 1], ",")));
	return false;
}

/*
 * fp_is_name_param
 *		Is word t[i] (of n) a name 17 and later normalize: a savepoint's
 *		(SAVEPOINT name, RELEASE [SAVEPOINT] name, ROLLBACK [WORK |
 *		TRANSACTION] TO [SAVEPOINT] name) or a prepared statement's
 *		(DEALLOCATE [PREPARE] name; ALL is no name)?
 */
static bool
fp_is_name_param(const FpToken *t, int n, int i)
{
	if (t[i].cls != 'w' || i == 0)
		return false;
	if (fp_word(&t[i - 1], "savepoint") || fp_word(&t[i - 1], "release"))
		return true;
	if (fp_word(&t[i - 1], "deallocate"))
		return !fp_word(&t[i], "all") &&
			!(fp_word(&t[i], "prepare") && i + 1 < n && t[i + 1].cls == 'w');
	if (fp_word(&t[i - 1], "prepare"))
		return i >= 2 && fp_word(&t[i - 2], "deallocate") &&
			!fp_word(&t[i], "all");
	return i >= 2 && fp_word(&t[i - 1], "to") &&
		(fp_word(&t[i - 2], "rollback") || fp_word(&t[i - 2], "work") ||
		 fp_word(&t[i - 2], "transaction"));
}

/*
 * fp_set_values
 *		Where the values of SET [SESSION | LOCAL] name TO | = values start
 *		in t (of n), or -1 if t is no such statement.  18 normalizes each
 *		value, a word (search_path's public) as a constant.
 */
static int
fp_set_values(const FpToken *t, int n)
{
	int			i = 1;

	if (n < 4 || !fp_word(&t[0], "set"))
		return -1;
	if (fp_word(&t[1], "session") || fp_word(&t[1], "local"))
		i++;
	if (t[i].cls != 'w')
		return -1;
	for (i++; i + 1 < n && fp_is(&t[i], ".") && t[i + 1].cls == 'w';)
		i += 2;
	if (i < n && (fp_word(&t[i], "to") || fp_is(&t[i], "=")))
		return i + 1;
	return -1;
}

/*
 * fp_set_list
 *		Is t[values, n) (a semicolon at the end apart) a list of values:
 *		parameters, constants and words but DEFAULT, one token each,
 *		between commas?
 */
static bool
fp_set_list(const FpToken *t, int n, int values)
{
	if (n > values && fp_is(&t[n - 1], ";"))
		n--;
	if (values < 0 || values >= n)
		return false;
	for (int i = values; i < n; i++)
	{
		bool		item = ((i - values) % 2 == 0);

		if (item ? (t[i].cls == 'o' || fp_word(&t[i], "default")) :
			!fp_is(&t[i], ","))
			return false;
	}
	return (n - values) % 2 == 1;
}

/*
 * ng_fingerprint
 *		The fingerprint of the NUL-terminated normalized text s (len
 *		bytes), into *fp.  False if the scanner cannot split it into tokens
 *		(a scanner error propagates).
 */
bool
ng_fingerprint(const char *s, int len, uint64 *fp)
{
	int			n;
	FpToken    *t = fp_tokens(s, len, &n);
	bool	   *arrays;
	int			depth = 0;
	uint64		h = FNV_OFFSET;
	static const FpToken param = {'p', "", 0, false};
	bool		set_list;

	if (t == NULL)
		return false;
	/* SET's list of values is one parameter */
	set_list = fp_set_list(t, n, fp_set_values(t, n));
	if (set_list)
		n = fp_set_values(t, n) + 1;
	arrays = palloc0(sizeof(bool) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		int			b = fp_bracket(&t[i]);
		int			end;

		CHECK_FOR_INTERRUPTS();
		if (b > 0 && fp_opens_list(t, i, depth > 0 && arrays[depth - 1]) &&
			(end = fp_list_end(t, n, i)) > i)
		{
			/* the brackets, and one parameter for what they hold */
			h = fp_hash_token(h, &t[i]);
			h = fp_hash_token(h, &param);
			h = fp_hash_token(h, &t[end]);
			i = end;
			continue;
		}
		if (b > 0)
		{
			arrays[depth] = fp_is(&t[i], "[") &&
				(fp_word(&t[i - 1], "array") ||
				 (depth > 0 && arrays[depth - 1]));
			depth++;
		}
		else if (b < 0 && depth > 0)
			depth--;
		if (fp_is_name_param(t, n, i) || (set_list && i == n - 1))
			h = fp_hash_token(h, &param);
		else
			h = fp_hash_token(h, &t[i]);
	}
	pfree(arrays);
	pfree(t);

	/* one round of a 64-bit finalizer spreads the last bytes */
	h ^= h >> 33;
	h *= UINT64CONST(0xff51afd7ed558ccd);
	h ^= h >> 33;
	*fp = h;
	return true;
}

/*
 * ng_fingerprint_or_null
 *		As ng_fingerprint, but a scanner error is caught: false then (no
 *		fingerprint); any other error propagates.  No lock of ours may be
 *		held (the scanner allocates).
 */
bool
ng_fingerprint_or_null(const char *s, int len, uint64 *fp)
{
	MemoryContext cxt = CurrentMemoryContext;
	uint32		holdoff = InterruptHoldoffCount;
	uint32		cancel_holdoff = QueryCancelHoldoffCount;
	bool		ok = false;

	*fp = 0;
	PG_TRY();
	{
		ok = ng_fingerprint(s, len, fp);
	}
	PG_CATCH();
	{
		int			category = ERRCODE_TO_CATEGORY(geterrcode());

		/* a scanner error: no fingerprint; anything else goes on */
		if (category != ERRCODE_SYNTAX_ERROR_OR_ACCESS_RULE_VIOLATION &&
			category != ERRCODE_DATA_EXCEPTION)
			PG_RE_THROW();
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		InterruptHoldoffCount = holdoff;
		QueryCancelHoldoffCount = cancel_holdoff;
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

/*
 * pg_stat_statements_ng_fingerprint(query text)
 *		The fingerprint of a normalized text (ours or pg_stat_statements'
 *		of any server), or NULL if the scanner rejects it.  Needs no shared
 *		memory: the library need not be preloaded.
 */
Datum
pg_stat_statements_ng_fingerprint_1_2(PG_FUNCTION_ARGS)
{
	char	   *s = text_to_cstring(PG_GETARG_TEXT_PP(0));
	uint64		fp;
	bool		ok = ng_fingerprint_or_null(s, strlen(s), &fp);

	pfree(s);
	if (!ok)
		PG_RETURN_NULL();
	PG_RETURN_INT64((int64) fp);
}
