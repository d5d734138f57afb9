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

#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/varlena.h"

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
 * contrib_preloaded
 *		Is contrib's pg_stat_statements in shared_preload_libraries too?
 */
static bool
contrib_preloaded(void)
{
	char	   *copy = pstrdup(shared_preload_libraries_string);
	List	   *names;
	ListCell   *lc;
	bool		found = false;

	if (!SplitIdentifierString(copy, ',', &names))
		return false;
	foreach(lc, names)
	{
		const char *name = (const char *) lfirst(lc);

		if (strcmp(name, "pg_stat_statements") == 0 ||
			strcmp(name, "$libdir/pg_stat_statements") == 0)
			found = true;
	}
	list_free(names);
	pfree(copy);
	return found;
}

/*
 * define_contrib_aliases
 *		When our library stands in for contrib's, accept contrib's setting
 *		names too (pg_stat_statements.max, ...), so that postgresql.conf files
 *		and tools written for contrib keep working.  Each alias is a second
 *		name for the same variable: setting either changes both, and
 *		current_setting shows the same value under both names.  Defined
 *		before our own names, so that when a file sets both, ours wins.
 *		Not defined when contrib's library is loaded as well: then the names
 *		are contrib's.
 */
static void
define_contrib_aliases(void)
{
	if (contrib_preloaded())
		return;

	DefineCustomIntVariable("pg_stat_statements.max",
							"Sets the maximum number of statements tracked (alias of pg_stat_statements_ng.max).",
							NULL,
							&ng_max,
							5000,
							100,
							INT_MAX / 2,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);
	DefineCustomEnumVariable("pg_stat_statements.track",
							 "Selects which statements are tracked (alias of pg_stat_statements_ng.track).",
							 NULL,
							 &ng_track,
							 NG_TRACK_TOP,
							 track_options,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_stat_statements.track_utility",
							 "Selects whether utility commands are tracked (alias of pg_stat_statements_ng.track_utility).",
							 NULL,
							 &ng_track_utility,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_stat_statements.track_planning",
							 "Selects whether planning duration is tracked (alias of pg_stat_statements_ng.track_planning).",
							 NULL,
							 &ng_track_planning,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_stat_statements.save",
							 "Save statistics across server shutdowns (alias of pg_stat_statements_ng.save).",
							 NULL,
							 &ng_save,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);
	MarkGUCPrefixReserved("pg_stat_statements");
}

/*
 * ng_define_gucs
 *		Define every setting.  Called from _PG_init.
 */
void
ng_define_gucs(void)
{
	define_contrib_aliases();

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
