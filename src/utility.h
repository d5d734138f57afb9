/*-------------------------------------------------------------------------
 *
 * utility.h
 *		The ProcessUtility hook (utility.c): measures utility statements and
 *		notes their failures.
 *
 * ng_install_utility_hook: _PG_init, once (hooks.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_UTILITY_H
#define NG_UTILITY_H

#pragma GCC visibility push(hidden)

extern void ng_install_utility_hook(void);

#pragma GCC visibility pop

#endif							/* NG_UTILITY_H */
