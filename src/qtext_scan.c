/*-------------------------------------------------------------------------
 *
 * qtext_scan.c
 *		The core SQL scanner's view of a statement, for normalization: a
 *		scanner set up as the raw parse may have had it, and every string
 *		and numeric constant token of a statement.
 *
 * Why a file of its own: qtext.c replaces the constants the jumble
 * records and keeps texts; this file finds the literal tokens the jumble
 * does not record (a CYCLE clause's marks, JSON_TABLE and XMLTABLE
 * defaults, PASSING values, XMLNAMESPACES, whatever a utility statement
 * carries), which needs a token's neighbours and the scanner's settings.
 *
 * Which integers are kept.  In a statement that is not a utility
 * statement, an integer written where SQL reads it as a type modifier
 * (varchar(10), numeric(10, 2), a list of integers in parentheses after a
 * type's name) or as a position in an ORDER BY, GROUP BY or DISTINCT ON
 * list (ORDER BY 1 DESC, 2) is not a constant: it is kept, as
 * pg_stat_statements keeps it.  Every other literal token is returned.
 *
 * Settings.  Whether a backslash escapes in '...' depends on
 * standard_conforming_strings as it was when the raw parser scanned the
 * whole query string; a SET earlier in that string has changed it by the
 * time a later statement is analysed.  So the scanner is given the
 * setting explicitly (qtext.c tries both when the text has a backslash),
 * and backslash_quote on: the raw parse accepted the text, so being
 * permissive there moves no token boundary.
 *
 * Locking: none; backend-local work.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "common/keywords.h"
#include "parser/parser.h"

#include "qtext_scan.h"

/*
 * ng_scan_begin
 *		scanner_init for the NUL-terminated statement stmt, with
 *		standard_conforming_strings as given (see the head of the file).
 */
core_yyscan_t
ng_scan_begin(const char *stmt, core_yy_extra_type *extra, bool scs)
{
	core_yyscan_t scanner;

	scanner = scanner_init(stmt, extra, &ScanKeywords, ScanKeywordTokens);
	extra->escape_string_warning = false;
	extra->standard_conforming_strings = scs;
	extra->backslash_quote = BACKSLASH_QUOTE_ON;
	return scanner;
}

/*
 * scan_kind
 *		What a token is, from its text as the scanner leaves it in its
 *		buffer (ended by a zero byte).  Identifiers and keywords never start
 *		with a quote, a digit or a dollar sign; a letter followed by a quote
 *		(E'', B'', X'') or U&' can only begin a string constant.
 */
static ScanKind
scan_kind(const char *tok)
{
	char		c = tok[0];

	if (c == '\'')
		return SCAN_STRING;
	if (c != '\0' && strchr("EeBbXx", c) != NULL && tok[1] == '\'')
		return SCAN_STRING;
	if ((c == 'U' || c == 'u') && tok[1] == '&' && tok[2] == '\'')
		return SCAN_STRING;
	if (c == '$' && isdigit((unsigned char) tok[1]))
		return SCAN_PARAM;
	if (c == '$' && tok[1] != '\0')
		return SCAN_STRING;		/* $$...$$ or $tag$...$tag$ */
	if (isdigit((unsigned char) c) ||
		(c == '.' && isdigit((unsigned char) tok[1])))
		return tok[strspn(tok, "0123456789")] == '\0' ?
			SCAN_INTEGER : SCAN_NUMBER;
	if (c != '\0' && tok[1] == '\0' && strchr("(),;", c) != NULL)
		return c == '(' ? SCAN_OPEN : c == ')' ? SCAN_CLOSE :
			c == ',' ? SCAN_COMMA : SCAN_SEMI;
	if (strcmp(tok, "::") == 0)
		return SCAN_CAST;
	if (strcmp(tok, ".") == 0)
		return SCAN_DOT;
	if (isalpha((unsigned char) c) || c == '_' || c == '"' || IS_HIGHBIT_SET(c))
		return SCAN_WORD;
	return SCAN_OTHER;
}

/* is t the keyword kw (lower case)? */
static bool
scan_is(const ScanToken *t, const char *kw)
{
	return t->kind == SCAN_WORD && t->keyword >= 0 &&
		strcmp(GetScanKeyword(t->keyword, &ScanKeywords), kw) == 0;
}

/* the keywords that name a type taking modifiers, or end such a name */
static const char *const scan_type_keywords[] = {
	"bit", "char", "character", "dec", "decimal", "float", "interval",
	"nchar", "numeric", "second", "time", "timestamp", "varchar", "varying"
};

/*
 * scan_names_type
 *		Does the token at name end a type's name: one of the type keywords
 *		above, or an identifier (possibly schema-qualified) written after
 *		"::" or AS (a cast), where a function's name cannot be?
 */
static bool
scan_names_type(const ScanToken *t, int name)
{
	const ScanToken *p = &t[name];

	if (p->kind != SCAN_WORD)
		return false;
	if (p->keyword >= 0)
	{
		for (int k = 0; k < lengthof(scan_type_keywords); k++)
			if (scan_is(p, scan_type_keywords[k]))
				return true;
		if (ScanKeywordCategories[p->keyword] != UNRESERVED_KEYWORD)
			return false;
	}
	/* schema.type: pass the qualifiers */
	while (name >= 2 && t[name - 1].kind == SCAN_DOT &&
		   t[name - 2].kind == SCAN_WORD)
		name -= 2;
	return name >= 1 &&
		(t[name - 1].kind == SCAN_CAST || scan_is(&t[name - 1], "as"));
}

/*
 * What ng_scan_literals knows of a statement's tokens while it looks at
 * them left to right, so that a long list of integers (an IN list) is
 * looked at in linear time.
 */
typedef struct ScanView
{
	const ScanToken *t;
	int			n;
	int8	   *starts;			/* per token: 0 not known; 2 if a list of
								 * positions starts left of it at its depth,
								 * else 1 */
	int			run_end;		/* the last run of integers and commas looked
								 * at ends here */
	bool		run_typmod;		/* and is a type's modifiers */
} ScanView;

/*
 * scan_is_typmod
 *		Is integer token i in a parenthesized list of integers that follows
 *		a type's name (scan_names_type)?  Each run of integers and commas
 *		is looked at once.
 */
static bool
scan_is_typmod(ScanView *v, int i)
{
	const ScanToken *t = v->t;
	int			open = i - 1;
	int			close = i + 1;

	if (i <= v->run_end)
		return v->run_typmod;
	while (open >= 0 &&
		   (t[open].kind == SCAN_INTEGER || t[open].kind == SCAN_COMMA))
		open--;
	while (close < v->n &&
		   (t[close].kind == SCAN_INTEGER || t[close].kind == SCAN_COMMA))
		close++;
	v->run_end = close - 1;
	v->run_typmod = open >= 1 && close < v->n &&
		t[open].kind == SCAN_OPEN && t[close].kind == SCAN_CLOSE &&
		scan_names_type(t, open - 1);
	return v->run_typmod;
}

/* does token j open a list of positions: BY, or DISTINCT ON's "("? */
static bool
scan_opens_positions(const ScanToken *t, int j)
{
	return scan_is(&t[j], "by") ||
		(j >= 2 && t[j].kind == SCAN_OPEN && scan_is(&t[j - 1], "on") &&
		 scan_is(&t[j - 2], "distinct"));
}

/*
 * scan_starts_positions
 *		Walking left from token from, at its depth: is the first keyword or
 *		unmatched parenthesis met the start of a list of positions, but for
 *		the keywords an item may carry (ASC, DESC, USING, COLLATE) and
 *		unreserved ones (names)?  Remembered per starting token; a walk
 *		stops where an earlier one started.
 */
static bool
scan_starts_positions(ScanView *v, int from)
{
	int			depth = 0;
	int8		result = 1;

	for (int j = from; j >= 0; j--)
	{
		const ScanToken *p = &v->t[j];

		if (depth == 0 && v->starts[j] != 0)
		{
			result = v->starts[j];
			break;
		}
		if (depth == 0 && scan_opens_positions(v->t, j))
		{
			result = 2;
			break;
		}
		if (p->kind == SCAN_CLOSE)
			depth++;
		else if (p->kind == SCAN_OPEN && depth-- == 0)
			break;
		else if (depth == 0 && p->kind == SCAN_WORD && p->keyword >= 0 &&
				 ScanKeywordCategories[p->keyword] != UNRESERVED_KEYWORD &&
				 !scan_is(p, "asc") && !scan_is(p, "desc") &&
				 !scan_is(p, "using") && !scan_is(p, "collate"))
			break;
	}
	v->starts[from] = result;
	return result == 2;
}

/*
 * scan_is_position
 *		Is integer token i an item of its own in an ORDER BY, GROUP BY or
 *		DISTINCT ON list: after the list's start or a comma, before a comma,
 *		a closing parenthesis, the end or a keyword other than AS, in a list
 *		of positions (scan_starts_positions)?
 */
static bool
scan_is_position(ScanView *v, int i)
{
	const ScanToken *t = v->t;

	if (i == 0 ||
		!(t[i - 1].kind == SCAN_COMMA || scan_opens_positions(t, i - 1)))
		return false;
	if (i + 1 < v->n &&
		!(t[i + 1].kind == SCAN_COMMA || t[i + 1].kind == SCAN_CLOSE ||
		  t[i + 1].kind == SCAN_SEMI ||
		  (t[i + 1].kind == SCAN_WORD && t[i + 1].keyword >= 0 &&
		   !scan_is(&t[i + 1], "as"))))
		return false;
	return scan_starts_positions(v, i - 1);
}

/*
 * ng_scan_tokens
 *		Every token of the NUL-terminated statement stmt (len bytes), in
 *		text order.  Returns a palloc'd array of *n, or NULL if a token
 *		lies outside the text.  A scanner error propagates.
 */
ScanToken *
ng_scan_tokens(const char *stmt, int len, bool scs, int *n)
{
	core_yyscan_t scanner;
	core_yy_extra_type extra;
	core_YYSTYPE lval;
	YYLTYPE		lloc = -1;
	int			cap = 16;
	ScanToken  *t = palloc(sizeof(ScanToken) * cap);

	*n = 0;
	scanner = ng_scan_begin(stmt, &extra, scs);
	while (core_yylex(&lval, &lloc, scanner) != 0)
	{
		/* the scanner ends the token's text with a zero byte in scanbuf */
		const char *tok = extra.scanbuf + lloc;
		ScanToken  *s;

		if (lloc < 0 || lloc >= len || (int) strlen(tok) > len - lloc)
		{
			scanner_finish(scanner);
			pfree(t);
			return NULL;
		}
		if (*n == cap)
		{
			cap *= 2;
			t = repalloc(t, sizeof(ScanToken) * cap);
		}
		s = &t[(*n)++];
		s->location = lloc;
		s->length = strlen(tok);
		s->kind = scan_kind(tok);
		s->keyword = -1;
		if (s->kind == SCAN_WORD && tok[0] != '"')
			s->keyword = ScanKeywordLookup(tok, &ScanKeywords);
	}
	scanner_finish(scanner);
	return t;
}

/*
 * ng_scan_literals
 *		Every string and numeric constant token of the NUL-terminated
 *		statement stmt (len bytes), scanned with standard_conforming_strings
 *		= scs, in text order; with keep_integers, but the integers that are
 *		type modifiers or positions (see the head of the file).
 *		*max_param gets the highest $n written in the text.  Returns a
 *		palloc'd array of *n (a zero length one for none), or NULL if a
 *		token cannot be measured within the text.  A scanner error
 *		propagates (the caller catches it).
 */
NgLiteral *
ng_scan_literals(const char *stmt, int len, bool scs, bool keep_integers,
				 int *n, int *max_param)
{
	int			ntok;
	ScanToken  *t = ng_scan_tokens(stmt, len, scs, &ntok);
	NgLiteral  *lits;
	ScanView	v;

	*n = 0;
	*max_param = 0;
	if (t == NULL)
		return NULL;
	lits = palloc(sizeof(NgLiteral) * (ntok + 1));
	v.t = t;
	v.n = ntok;
	v.starts = palloc0(ntok + 1);
	v.run_end = -1;
	v.run_typmod = false;
	for (int i = 0; i < ntok; i++)
	{
		if (t[i].kind == SCAN_PARAM)
		{
			long		p = strtol(stmt + t[i].location + 1, NULL, 10);

			if (p > *max_param && p <= PG_INT32_MAX / 2)
				*max_param = (int) p;
			continue;
		}
		if (t[i].kind != SCAN_STRING && t[i].kind != SCAN_NUMBER &&
			t[i].kind != SCAN_INTEGER)
			continue;
		if (t[i].kind == SCAN_INTEGER && keep_integers &&
			(scan_is_typmod(&v, i) || scan_is_position(&v, i)))
			continue;
		lits[*n].location = t[i].location;
		lits[*n].length = t[i].length;
		(*n)++;
	}
	pfree(v.starts);
	pfree(t);
	return lits;
}
