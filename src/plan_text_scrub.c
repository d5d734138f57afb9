/*-------------------------------------------------------------------------
 *
 * plan_text_scrub.c
 *		An EXPLAIN text (text format, without costs) with its constants
 *		replaced by $n, as in statement texts; a text cut to a size at a
 *		line end.
 *
 * Why a file of its own: this is a scanner of untrusted-shaped text (a
 * fuzzer feeds it arbitrary bytes, plan_text_fuzz.c), pure and separate
 * from the subtransaction that makes the text (plan_text.c).
 *
 * The scanner reads EXPLAIN's text line by line.  Each line is one of:
 *
 * - a node line: the first line of the text (the root node), a line whose
 *   first non-blank characters are "->" (every other node), and the headers
 *   of subplans ("SubPlan 1", "InitPlan 1 (returns $0)", "CTE name").  They
 *   hold node types and identifiers, never a constant: kept as they are.
 * - a property line, "Label: value" whose label (letters, blanks and
 *   hyphens before ": ") is in props[] below: a plan property, not an
 *   expression ("Workers Planned: 2", "Subplans Removed: 3"): kept.
 * - any other line, "Filter: (a > 5)", "Index Cond: ...", or a line of a
 *   form not known here: an expression line, scrubbed after its label.
 *   A label EXPLAIN may print that is in neither list is scrubbed: at worst
 *   a property's number shows as $n, never a constant as it was.
 *
 * In an expression, the scanner knows these tokens:
 * - '...' with '' inside (a string constant: EXPLAIN writes every constant
 *   but integers, numerics and booleans this way, a typed one followed by
 *   its cast, '2024-01-01'::date, '{1,2}'::integer[], '-5'::integer), and
 *   the prefixed forms E'...' (backslash escapes), B'...', X'...', N'...',
 *   U&'...': replaced by $n.  The cast after it stays: $1::date.
 * - a number, 5, 1.5, 1e10 (an integer or numeric constant; a negative
 *   one EXPLAIN writes as a string, above): replaced by $n.
 * - "..." with "" inside (a quoted identifier), and words (identifiers,
 *   keywords, t1, idx_2: letters, digits, _ and $ after a letter, _ or a
 *   non-ASCII byte): kept.  true, false and NULL are words: kept (a
 *   boolean EXPLAIN shows is mostly the planner's own, as in
 *   "One-Time Filter: false").
 * - $n (a parameter: a generic plan's, or 15 and 16's PARAM_EXEC): kept;
 *   the constants are numbered after the highest n in the text.
 * - "SubPlan n", "InitPlan n" (17 and later name subplans in expressions):
 *   kept.
 * - the type name after :: (words, "..." names, dots, [], the words of
 *   multi-word types such as "character varying" or "timestamp without
 *   time zone", and a type modifier (10,2) of digits): kept, as type
 *   modifiers are in statement texts.
 * A string or quoted identifier may hold newlines; the line ends after it.
 * An unterminated one ends at the end of the input (a string is then
 * replaced whole).  Node lines know "..." and $n too, so that an identifier
 * holding a newline does not start a line.
 *
 * Two passes over the input: the first finds the highest $n and counts the
 * constants (so bounds the output), the second writes.  Neither reads a
 * byte at or past len.
 *
 * Locking: none.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "plan_text_scrub.h"

/* the labels of property lines (see above) */
static const char *const props[] = {
	"Async Capable",
	"Cache Mode",
	"Conflict Arbiter Indexes",
	"Conflict Resolution",
	"Disabled",
	"Foreign File",
	"Foreign File Size",
	"Heap Fetches",
	"Index Searches",
	"Inner Unique",
	"Planned Partitions",
	"Single Copy",
	"Subplans Removed",
	"Workers Launched",
	"Workers Planned",
	NULL
};

/* the words after the first of a multi-word type name (format_type) */
static const char *const type_words[] = {
	"varying", "precision", "with", "without", "time", "zone",
	"to", "year", "month", "day", "hour", "minute", "second",
	NULL
};

/* the highest parameter number taken from a text: constants follow it */
#define SCRUB_MAX_PARAM		INT64CONST(1000000000)

typedef struct Scrub
{
	const char *in;
	int			len;
	int			pos;
	char	   *out;			/* NULL in the first pass */
	int64		olen;			/* bytes written (counted in the first pass) */
	int64		max_param;		/* the highest $n seen */
	int64		next;			/* the number of the next constant */
	int64		constants;		/* constants replaced */
} Scrub;

#define AT(s, i)		((s)->pos + (i) < (s)->len ? (s)->in[(s)->pos + (i)] : '\0')
#define AT_END(s)		((s)->pos >= (s)->len)

static inline bool
is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
		(unsigned char) c >= 0x80;
}

static inline bool
is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

static inline bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* copy n bytes of the input at pos (n within the input) */
static void
scrub_copy(Scrub *s, int n)
{
	Assert(n >= 0 && s->pos + n <= s->len);
	if (s->out)
		memcpy(s->out + s->olen, s->in + s->pos, n);
	s->olen += n;
	s->pos += n;
}

/*
 * scrub_constant
 *		A constant ends at pos: write $n for it, after a blank when a word
 *		is before it (so that the word and $n stay two tokens: "q$1" would
 *		be one word, and the text would not read as it was written).
 */
static void
scrub_constant(Scrub *s)
{
	char		buf[32];
	int			n;

	s->constants++;
	if (s->out == NULL)
		return;
	n = 0;
	if (s->olen > 0 && is_ident_char(s->out[s->olen - 1]))
		buf[n++] = ' ';
	n += snprintf(buf + n, sizeof(buf) - n, "$" INT64_FORMAT, s->next++);
	memcpy(s->out + s->olen, buf, n);
	s->olen += n;
}

/* the length of the word at pos (0 if none starts there) */
static int
word_len(Scrub *s)
{
	int			n = 0;

	if (!is_ident_start(AT(s, 0)))
		return 0;
	while (s->pos + n < s->len && is_ident_char(s->in[s->pos + n]))
		n++;
	return n;
}

/* does the word at pos + off equal w (and end there)? */
static bool
word_is(Scrub *s, int off, const char *w)
{
	int			n = strlen(w);

	if (s->pos + off + n > s->len || memcmp(s->in + s->pos + off, w, n) != 0)
		return false;
	return s->pos + off + n == s->len || !is_ident_char(s->in[s->pos + off + n]);
}

/*
 * scrub_quoted
 *		The quoted token at pos (quote q; doubled inside; backslash escapes
 *		if escapes) from pos + skip on: its length, to the end of the input
 *		when unterminated.
 */
static int
quoted_len(Scrub *s, int skip, char q, bool escapes)
{
	int			p = s->pos + skip + 1;

	while (p < s->len)
	{
		if (escapes && s->in[p] == '\\')
			p += 2;
		else if (s->in[p] == q)
		{
			if (p + 1 < s->len && s->in[p + 1] == q)
				p += 2;
			else
				return p + 1 - s->pos;
		}
		else
			p++;
	}
	return s->len - s->pos;
}

/* a parameter $n at pos: copy it, note n */
static void
scrub_param(Scrub *s)
{
	int64		n = 0;
	int			i = 1;

	while (is_digit(AT(s, i)))
	{
		n = Min(n * 10 + (AT(s, i) - '0'), SCRUB_MAX_PARAM);
		i++;
	}
	s->max_param = Max(s->max_param, n);
	scrub_copy(s, i);
}

/* the length of a type modifier "(10,2)" at pos, 0 if none is there */
static int
typmod_len(Scrub *s)
{
	int			i = 1;

	if (AT(s, 0) != '(')
		return 0;
	while (is_digit(AT(s, i)) || AT(s, i) == ',' || AT(s, i) == ' ')
		i++;
	return AT(s, i) == ')' ? i + 1 : 0;
}

/* after "::": the type name, kept */
static void
scrub_type_name(Scrub *s)
{
	for (;;)
	{
		int			n;

		if (AT(s, 0) == '"')
			scrub_copy(s, quoted_len(s, 0, '"', false));
		else if ((n = word_len(s)) > 0)
			scrub_copy(s, n);
		else
			return;
		for (;;)
		{
			if ((n = typmod_len(s)) > 0)
				scrub_copy(s, n);
			else if (AT(s, 0) == '[' && AT(s, 1) == ']')
				scrub_copy(s, 2);
			else
				break;
		}
		if (AT(s, 0) == '.')
		{
			scrub_copy(s, 1);
			continue;
		}
		if (AT(s, 0) == ' ')
		{
			bool		more = false;

			for (int i = 0; type_words[i] != NULL && !more; i++)
				more = word_is(s, 1, type_words[i]);
			if (more)
			{
				scrub_copy(s, 1);
				continue;
			}
		}
		return;
	}
}

/* a number at pos: its length */
static int
number_len(Scrub *s)
{
	int			i = 0;

	while (is_digit(AT(s, i)))
		i++;
	if (AT(s, i) == '.')
	{
		i++;
		while (is_digit(AT(s, i)))
			i++;
	}
	if ((AT(s, i) == 'e' || AT(s, i) == 'E') &&
		(is_digit(AT(s, i + 1)) ||
		 ((AT(s, i + 1) == '+' || AT(s, i + 1) == '-') && is_digit(AT(s, i + 2)))))
	{
		i += 2;
		while (is_digit(AT(s, i)))
			i++;
	}
	return i;
}

/*
 * scrub_word
 *		The word at pos (n bytes): a string's prefix (E'...'), "SubPlan n",
 *		or a word to keep.
 */
static void
scrub_word(Scrub *s, int n)
{
	char		c = AT(s, 0);

	if (n == 1 && AT(s, 1) == '\'' && strchr("EeBbXxNn", c) != NULL)
	{
		s->pos += quoted_len(s, 1, '\'', c == 'E' || c == 'e');
		scrub_constant(s);
	}
	else if (n == 1 && (c == 'U' || c == 'u') && AT(s, 1) == '&' && AT(s, 2) == '\'')
	{
		s->pos += quoted_len(s, 2, '\'', false);
		scrub_constant(s);
	}
	else if ((word_is(s, 0, "SubPlan") || word_is(s, 0, "InitPlan")) &&
			 AT(s, n) == ' ' && is_digit(AT(s, n + 1)))
	{
		n++;
		while (is_digit(AT(s, n)))
			n++;
		scrub_copy(s, n);
	}
	else
		scrub_copy(s, n);
}

/* an expression up to the end of its line (the newline copied) */
static void
scrub_expression(Scrub *s)
{
	while (!AT_END(s))
	{
		char		c = s->in[s->pos];
		int			n;

		if (c == '\n')
		{
			scrub_copy(s, 1);
			return;
		}
		if (c == '\'')
		{
			s->pos += quoted_len(s, 0, '\'', false);
			scrub_constant(s);
		}
		else if (c == '"')
			scrub_copy(s, quoted_len(s, 0, '"', false));
		else if ((n = word_len(s)) > 0)
			scrub_word(s, n);
		else if (c == '$' && is_digit(AT(s, 1)))
			scrub_param(s);
		else if (is_digit(c))
		{
			s->pos += number_len(s);
			scrub_constant(s);
		}
		else if (c == ':' && AT(s, 1) == ':')
		{
			scrub_copy(s, 2);
			scrub_type_name(s);
		}
		else
			scrub_copy(s, 1);
	}
}

/* a node line up to its end (the newline copied): kept */
static void
scrub_node_line(Scrub *s)
{
	while (!AT_END(s))
	{
		char		c = s->in[s->pos];
		int			n;

		if (c == '\n')
		{
			scrub_copy(s, 1);
			return;
		}
		if (c == '"')
			scrub_copy(s, quoted_len(s, 0, '"', false));
		else if ((n = word_len(s)) > 0)
			scrub_copy(s, n);
		else if (c == '$' && is_digit(AT(s, 1)))
			scrub_param(s);
		else
			scrub_copy(s, 1);
	}
}

/* a property line up to its end (the newline copied): kept */
static void
scrub_property_line(Scrub *s)
{
	int			n = 0;

	while (s->pos + n < s->len && s->in[s->pos + n] != '\n')
		n++;
	scrub_copy(s, s->pos + n < s->len ? n + 1 : n);
}

/*
 * label_len
 *		The length of the "Label:" at pos (letters, blanks and hyphens, then
 *		": " or ":" at a line's end), 0 if none; whether it is a property's.
 */
static int
label_len(Scrub *s, bool *property)
{
	int			n = 0;

	while (s->pos + n < s->len &&
		   ((s->in[s->pos + n] >= 'A' && s->in[s->pos + n] <= 'Z') ||
			(s->in[s->pos + n] >= 'a' && s->in[s->pos + n] <= 'z') ||
			s->in[s->pos + n] == ' ' || s->in[s->pos + n] == '-'))
		n++;
	if (n == 0 || AT(s, n) != ':' ||
		(AT(s, n + 1) != ' ' && AT(s, n + 1) != '\n' && s->pos + n + 1 < s->len))
		return 0;
	*property = false;
	for (int i = 0; props[i] != NULL; i++)
		if (strlen(props[i]) == n && memcmp(s->in + s->pos, props[i], n) == 0)
			*property = true;
	return n + 1;
}

/* one pass over the whole input */
static void
scrub_pass(Scrub *s)
{
	bool		first = true;

	s->pos = 0;
	s->olen = 0;
	while (!AT_END(s))
	{
		int			n = 0;
		bool		property = false;

		/* the indentation */
		while (AT(s, n) == ' ')
			n++;
		scrub_copy(s, n);
		if (first || (AT(s, 0) == '-' && AT(s, 1) == '>') ||
			word_is(s, 0, "SubPlan") || word_is(s, 0, "InitPlan") ||
			word_is(s, 0, "CTE"))
			scrub_node_line(s);
		else if ((n = label_len(s, &property)) > 0)
		{
			scrub_copy(s, n);
			if (property)
				scrub_property_line(s);
			else
				scrub_expression(s);
		}
		else
			scrub_expression(s);
		first = false;
	}
}

/*
 * ng_plan_text_scrub
 *		in[0 .. len - 1] (an EXPLAIN text; any bytes) with every constant
 *		replaced by $n, numbered after the highest $n in it: palloc'd in the
 *		current memory context, NUL-terminated, its length in *outlen.
 *		Reads no byte at or past in[len].
 */
char *
ng_plan_text_scrub(const char *in, int len, int *outlen)
{
	Scrub		s = {0};
	int64		bound;

	Assert(len >= 0);
	s.in = in;
	s.len = len;
	scrub_pass(&s);
	Assert(s.pos == len);

	/* each constant (a byte or more) becomes at most " $" and 19 digits */
	bound = s.olen + s.constants * 21 + 1;
	s.out = palloc(bound);
	s.next = s.max_param + 1;
	s.constants = 0;
	scrub_pass(&s);
	Assert(s.olen < bound);
	s.out[s.olen] = '\0';
	*outlen = (int) s.olen;
	return s.out;
}

/*
 * ng_plan_text_cut
 *		text (len bytes, NUL-terminated, writable) without its last newline,
 *		and at most max bytes long: when longer, cut after the last whole
 *		line that leaves room for the marker line, which follows it.
 *		Returns the new length; text is NUL-terminated at it.
 */
int
ng_plan_text_cut(char *text, int len, int max)
{
	int			room = max - (int) strlen(NG_PLAN_TEXT_CUT_MARKER);
	int			end;

	Assert(room > 0);
	if (len > 0 && text[len - 1] == '\n')
		len--;
	if (len <= max)
	{
		text[		len] = '\0';

		return len;
	}
	/* the last newline at or before room - 1: the lines before it stay */
	end = room - 1;
	while (end >= 0 && text[end] != '\n')
		end--;
	end++;
	memcpy(text +end, NG_PLAN_TEXT_CUT_MARKER, strlen(NG_PLAN_TEXT_CUT_MARKER));
	len = end + strlen(NG_PLAN_TEXT_CUT_MARKER);
	text[		len] = '\0';

	return len;
}
