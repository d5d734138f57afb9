/*-------------------------------------------------------------------------
 *
 * textconv.h
 *		Query texts converted to the reader's database encoding (textconv.c),
 *		without raising errors: what cannot be converted is shown as \xNN.
 *
 * Locks: none taken; the caller holds none of ours (the result is palloc'd
 * in the current memory context).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_TEXTCONV_H
#define NG_TEXTCONV_H

#pragma GCC visibility push(hidden)

extern char *ng_text_for_reader(const char *qtext, int len, int enc);

#pragma GCC visibility pop

#endif							/* NG_TEXTCONV_H */
