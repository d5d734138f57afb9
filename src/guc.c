/*-------------------------------------------------------------------------
 *
 * guc.c
 *		The settings of pg_stat_statements_ng, and contrib's names for them.
 *
 * Why a file of its own: names, ranges, defaults and reload behaviour are a
 * user-facing contract; keeping them together keeps the README honest.
 *
 * Aliases.  When our library stands in for contrib's (the drop-in), the
 * names pg_stat_statements.max, .track, .track_utility, .track_planning and
 * .save are accepted too, so that configuration files and tools written for
 * contrib keep working.  An alias is a setting of its own (GUC requires each
 * to have its own variable) whose assign hook copies the value into ours,
 * and ours copy theirs back, so that both names always show the value in
 * effect.  When a configuration file sets both names (to different values),
 * the alias wins at server start; afterwards, the last one applied wins.  No aliases are defined when contrib's library is
 * preloaded as well: the names are then contrib's.
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
int			ng_slots_per_backend = 64;
#ifdef USE_ASSERT_CHECKING
bool		ng_debug_fail_at_exit = false;
#endif
double		ng_sample_rate = 1.0;

/* the aliases' own variables, kept equal to ours once defined */
static bool aliases_defined = false;
static int	alias_max = 5000;
static int	alias_track = NG_TRACK_TOP;
static bool alias_track_utility = true;
static bool alias_track_planning = false;
static bool alias_save = true;

static const struct config_enum_entry track_options[] = {
	{"none", NG_TRACK_NONE, false},
	{"top", NG_TRACK_TOP, false},
	{"all", NG_TRACK_ALL, false},
	{NULL, 0, false}
};

/*
 * Assign hooks: a change under either name sets both variables.  Ours only
 * touch the alias once it exists (GUC checks that a variable still holds
 * its boot value when it is defined).
 */
#define NG_TWIN_INT_HOOKS(name, ours, alias) \
static void \
assign_##name(int newval, void *extra) \
{ \
	if (aliases_defined) \
		alias = newval; \
} \
static void \
assign_alias_##name(int newval, void *extra) \
{ \
	if (aliases_defined) \
		ours = newval; \
}
#define NG_TWIN_BOOL_HOOKS(name, ours, alias) \
static void \
assign_##name(bool newval, void *extra) \
{ \
	if (aliases_defined) \
		alias = newval; \
} \
static void \
assign_alias_##name(bool newval, void *extra) \
{ \
	if (aliases_defined) \
		ours = newval; \
}

NG_TWIN_INT_HOOKS(max, ng_max, alias_max)
NG_TWIN_INT_HOOKS(track, ng_track, alias_track)
NG_TWIN_BOOL_HOOKS(track_utility, ng_track_utility, alias_track_utility)
NG_TWIN_BOOL_HOOKS(track_planning, ng_track_planning, alias_track_planning)
NG_TWIN_BOOL_HOOKS(save, ng_save, alias_save)

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
 * define_settings
 *		Define the five settings that contrib also has, under the prefix
 *		given; ours when alias is false.
 */
static void
define_settings(const char *prefix, bool alias)
{
	const char *note = alias ? " (an alias of pg_stat_statements_ng's setting)" : "";

	DefineCustomIntVariable(psprintf("%s.max", prefix),
							psprintf("Sets the maximum number of statements tracked%s.", note),
							"Takes effect on reload: lowering it evicts entries down to the new value.",
							alias ? &alias_max : &ng_max,
							5000,
							100,
							INT_MAX / 2,
							PGC_SIGHUP,
							0,
							NULL, alias ? assign_alias_max : assign_max, NULL);

	DefineCustomEnumVariable(psprintf("%s.track", prefix),
							 psprintf("Selects which statements are tracked%s.", note),
							 NULL,
							 alias ? &alias_track : &ng_track,
							 NG_TRACK_TOP,
							 track_options,
							 PGC_SUSET,
							 0,
							 NULL, alias ? assign_alias_track : assign_track, NULL);

	DefineCustomBoolVariable(psprintf("%s.track_utility", prefix),
							 psprintf("Selects whether utility commands are tracked%s.", note),
							 NULL,
							 alias ? &alias_track_utility : &ng_track_utility,
							 true,
							 PGC_SUSET,
							 0,
							 NULL,
							 alias ? assign_alias_track_utility : assign_track_utility,
							 NULL);

	DefineCustomBoolVariable(psprintf("%s.track_planning", prefix),
							 psprintf("Selects whether planning duration is tracked%s.", note),
							 NULL,
							 alias ? &alias_track_planning : &ng_track_planning,
							 false,
							 PGC_SUSET,
							 0,
							 NULL,
							 alias ? assign_alias_track_planning : assign_track_planning,
							 NULL);

	DefineCustomBoolVariable(psprintf("%s.save", prefix),
							 psprintf("Save statistics across server shutdowns%s.", note),
							 NULL,
							 alias ? &alias_save : &ng_save,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, alias ? assign_alias_save : assign_save, NULL);
}

/*
 * ng_define_gucs
 *		Define every setting.  Called from _PG_init.
 */
void
ng_define_gucs(void)
{
	define_settings(NG_NAME, false);

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
							64,
							8,
							4096,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomRealVariable("pg_stat_statements_ng.sample_rate",
							 "Fraction of top-level statements counted, with the statements they run.",
							 "Texts are always normalized, sampled or not.",
							 &ng_sample_rate,
							 1.0,
							 0.0,
							 1.0,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

#ifdef USE_ASSERT_CHECKING

	/*
	 * A fault injection for tests, on assertion builds only: the exit
	 * callback fails after folding its first slot (slots.c).
	 */
	DefineCustomBoolVariable("pg_stat_statements_ng.debug_fail_at_exit",
							 "Makes the exit callback fail (assertion builds, for tests).",
							 NULL,
							 &ng_debug_fail_at_exit,
							 false,
							 PGC_SUSET,
							 GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
#endif

	MarkGUCPrefixReserved(NG_NAME);

	if (!contrib_preloaded())
	{
		define_settings("pg_stat_statements", true);

		/*
		 * While an alias is defined, GUC assigns it its boot value and then
		 * any value the configuration gave it; neither has reached ours yet.
		 * An alias that holds other than its boot value was set: it wins.
		 * Otherwise it takes the value of ours.
		 */
#define NG_RECONCILE(alias, ours, boot) \
		do { if ((alias) != (boot)) (ours) = (alias); else (alias) = (ours); } while (0)
		NG_RECONCILE(alias_max, ng_max, 5000);
		NG_RECONCILE(alias_track, ng_track, NG_TRACK_TOP);
		NG_RECONCILE(alias_track_utility, ng_track_utility, true);
		NG_RECONCILE(alias_track_planning, ng_track_planning, false);
		NG_RECONCILE(alias_save, ng_save, true);
#undef NG_RECONCILE
		aliases_defined = true;
		MarkGUCPrefixReserved("pg_stat_statements");
	}
}
