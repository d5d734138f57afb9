/*-------------------------------------------------------------------------
 *
 * guc.c
 *		The settings of pg_stat_statements_ng.
 *
 * Why a file of its own: names, ranges, defaults and reload behaviour are a
 * user-facing contract; keeping them together keeps the README honest.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/guc.h"

#include "pg_stat_statements_ng.h"

int			ng_max = 5000;
int			ng_track = NG_TRACK_TOP;
bool		ng_track_utility = true;
bool		ng_track_planning = false;
bool		ng_save = true;
int			ng_query_text_memory_kb = 64 * 1024;
int			ng_slots_per_backend = 128;

static const struct config_enum_entry track_options[] = {
	{"none", NG_TRACK_NONE, false},
	{"top", NG_TRACK_TOP, false},
	{"all", NG_TRACK_ALL, false},
	{NULL, 0, false}
};

/*
 * ng_define_gucs
 *		Define every setting.  Called from _PG_init.
 */
void
ng_define_gucs(void)
{
	DefineCustomIntVariable("pg_stat_statements_ng.max",
							"Sets the maximum number of statements tracked.",
							"Takes effect on reload: lowering it evicts entries down to the new value.",
							&ng_max,
							5000,
							100,
							INT_MAX / 2,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("pg_stat_statements_ng.track",
							 "Selects which statements are tracked.",
							 NULL,
							 &ng_track,
							 NG_TRACK_TOP,
							 track_options,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_stat_statements_ng.track_utility",
							 "Selects whether utility commands are tracked.",
							 NULL,
							 &ng_track_utility,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_stat_statements_ng.track_planning",
							 "Selects whether planning duration is tracked.",
							 NULL,
							 &ng_track_planning,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_stat_statements_ng.save",
							 "Save statistics across server shutdowns.",
							 NULL,
							 &ng_save,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("pg_stat_statements_ng.query_text_memory",
							"Sets the shared memory available for query texts.",
							"A statement whose text does not fit is counted without text.",
							&ng_query_text_memory_kb,
							64 * 1024,
							0,
							INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("pg_stat_statements_ng.slots_per_backend",
							"Sets how many statements each backend counts in its own slots.",
							"Takes effect at server start.",
							&ng_slots_per_backend,
							128,
							8,
							4096,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved(NG_NAME);
}
