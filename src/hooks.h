/*-------------------------------------------------------------------------
 *
 * hooks.h
 *		The parser, planner, executor and utility hooks (hooks.c).
 *
 * ng_install_hooks: _PG_init, once.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_HOOKS_H
#define NG_HOOKS_H

#include "pg_stat_statements_ng.h"

#pragma GCC visibility push(hidden)

extern void ng_install_hooks(void);

#pragma GCC visibility pop

#endif							/* NG_HOOKS_H */
