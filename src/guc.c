/*-------------------------------------------------------------------------
 *
 * guc.c
 *		The settings of pg_stat_statements_ng, and contrib's names for them.
 *
 * Why a file of its own: names, ranges, defaults and reload behaviour are a
 * user-facing contract; keeping them together keeps the README honest.
 *
 * contrib's names.  Unless contrib's own library is preloaded too, the
 * names pg_stat_statements.max, .track, .track_utility, .track_planning and
 * .save are ours as well, so that a configuration written for contrib keeps
 * working unchanged: after make install-dropin, the name pg_stat_statements
 * in shared_preload_libraries loads our library (a symbolic link to it).
 * Which library that name loads is decided by file identity, as the server
 * resolves it (dynamic_library_path, $libdir), not by the name.  When it is
 * contrib's own file, the names are contrib's and we log that once.
 *
 * Each name is a GUC of its own (GUC requires its own variable).  The value
 * in effect is the one from the stronger source (a SET beats the
 * configuration file, which beats the default); between two values from the
 * same source, contrib's name wins, at start and at every reload alike.
 * SHOW and pg_settings show the value in effect under both names, each with
 * its own source.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/varlena.h"
#include "utils/wait_event.h"

#include "guc.h"
#include "history.h"

/* the values in effect, read by the extension (set by the assign hooks) */
int			ng_max = 5000;
int			ng_track = NG_TRACK_TOP;
NG_HOT int	ng_track_depth = 1;
bool		ng_track_utility = true;
NG_HOT bool ng_track_planning = false;
bool		ng_save = true;
int			ng_query_text_memory_kb = 64 * 1024;
int			ng_slots_per_backend = 64;
#ifdef USE_ASSERT_CHECKING
bool		ng_debug_fail_at_exit = false;
#endif
NG_HOT double ng_sample_rate = 1.0;
int			ng_admission = NG_ADMIT_RECURRING;

/*
 * A setting with two names.  Each name is a GUC of its own with its own
 * variable; the value in effect is the one set from the stronger source
 * (GUC's order: default < configuration file < ... < SET), and between two
 * values from the same source, the one under contrib's name.  The check
 * hooks hand each value's source to the assign hooks (through "extra", so
 * that GUC keeps it with the value: a RESET or a rolled back SET brings the
 * source back with the value), the assign hooks recompute the variable the
 * extension reads, and the show hooks show it under both names.
 */
typedef struct NgTwin
{
	const char *const *names;	/* enum labels, or NULL */
	int			value[2];		/* [0] our name, [1] contrib's */
	GucSource	source[2];
	int			effective;
	/* both names' GUC records, once contrib's is defined as ours */
	struct config_generic *record[2];
} NgTwin;

/* the GUCs' own variables, never read by the extension */
static int	guc_max[2] = {5000, 5000};
static int	guc_track[2] = {NG_TRACK_TOP, NG_TRACK_TOP};
static bool guc_track_utility[2] = {true, true};
static bool guc_track_planning[2];
static bool guc_save[2] = {true, true};

static const char *const track_names[] = {"none", "top", "all"};

static NgTwin twin_max = {NULL, {5000, 5000}, {PGC_S_DEFAULT, PGC_S_DEFAULT}, 5000};
static NgTwin twin_track = {track_names, {NG_TRACK_TOP, NG_TRACK_TOP}, {PGC_S_DEFAULT, PGC_S_DEFAULT}, NG_TRACK_TOP};
static NgTwin twin_track_utility = {NULL, {1, 1}, {PGC_S_DEFAULT, PGC_S_DEFAULT}, 1};
static NgTwin twin_track_planning = {NULL, {0, 0}, {PGC_S_DEFAULT, PGC_S_DEFAULT}, 0};
static NgTwin twin_save = {NULL, {1, 1}, {PGC_S_DEFAULT, PGC_S_DEFAULT}, 1};

/* contrib's names are defined (as ours), and not contrib's own */
static bool aliases_defined = false;

/* shared_preload_libraries names this library pg_stat_statements */
static bool loaded_as_dropin = false;

/* set only in assertion builds (see guc.h) */
int			ng_debug_fault = NG_FAULT_NONE;
bool		ng_debug_fault_armed = false;

#ifdef USE_ASSERT_CHECKING

static const struct config_enum_entry debug_fault_options[] = {
	{"none", NG_FAULT_NONE, false},
	{"failures_record_error", NG_FAULT_FAILURES_RECORD_ERROR, false},
	{"stall_write", NG_FAULT_STALL_WRITE, false},
	{"stall_read", NG_FAULT_STALL_READ, false},
	{"stall_restore", NG_FAULT_STALL_RESTORE, false},
	{"dump_full", NG_FAULT_DUMP_FULL, false},
	{"stall_reset", NG_FAULT_STALL_RESET, false},
	{"plan_text_log", NG_FAULT_PLAN_TEXT_LOG, false},
	{"plan_text_error", NG_FAULT_PLAN_TEXT_ERROR, false},
	{"plan_array_refused", NG_FAULT_PLAN_ARRAY_REFUSED, false},
	{"plan_text_refused", NG_FAULT_PLAN_TEXT_REFUSED, false},
	{"planid_unknown_hashjoin", NG_FAULT_PLANID_UNKNOWN_HASHJOIN, false},
	{NULL, 0, false}
};

/* setting a fault arms it; a one-shot fault disarms itself when it fires */
static void
assign_debug_fault(int newval, void *extra)
{
	ng_debug_fault_armed = (newval != NG_FAULT_NONE);
}

/*
 * ng_debug_stall
 *		Wait while the file pgssng_stall exists in the data directory, at
 *		most 60 s, shown as wait event PgSleep.  Allocates nothing, takes no
 *		lock, raises no error, checks for no interrupt, so
 *		that it can stand for a process stopped anywhere (by a debugger, by
 *		the scheduler).
 */
void
ng_debug_stall(void)
{
	struct stat st;

	for (int i = 0; i < 6000 && stat("pgssng_stall", &st) == 0; i++)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_POSTMASTER_DEATH,
						 10L, WAIT_EVENT_PG_SLEEP);
		ResetLatch(MyLatch);
	}
}
#endif

static const struct config_enum_entry admission_options[] = {
	{"recurring", NG_ADMIT_RECURRING, false},
	{"all", NG_ADMIT_ALL, false},
	{NULL, 0, false}
};

static const struct config_enum_entry track_options[] = {
	{"none", NG_TRACK_NONE, false},
	{"top", NG_TRACK_TOP, false},
	{"all", NG_TRACK_ALL, false},
	{NULL, 0, false}
};

/* keep the source of a value with it, as its "extra" */
static bool
twin_keep_source(void **extra, GucSource source)
{
	GucSource  *kept = ng_guc_malloc_compat(sizeof(GucSource));

	if (kept == NULL)
		return false;
	*kept = source;
	*extra = kept;
	return true;
}

static bool
twin_check_int(int *newval, void **extra, GucSource source)
{
	return twin_keep_source(extra, source);
}

static bool
twin_check_bool(bool *newval, void **extra, GucSource source)
{
	return twin_keep_source(extra, source);
}

/*
 * twin_show_in_effect
 *		Of two names, pg_settings and SHOW ALL show the one whose value is
 *		in effect, with its own source: the other's row would show that
 *		value (its show hook gives the value in effect) beside a source it
 *		did not come from; both at their defaults, the name of the library
 *		preloaded (pg_stat_statements: the drop-in).  Both stay readable
 *		by name (SHOW, SET,
 *		current_setting).  GUC has no way to give a setting another's
 *		source, so the row is hidden instead (GUC_NO_SHOW_ALL); no
 *		allocation, safe in an assign hook.
 */
static void
twin_show_in_effect(NgTwin *twin)
{
	int			in_effect;

	if (twin->record[0] == NULL || twin->record[1] == NULL)
		return;
	/* both at their defaults: the name of the library preloaded */
	if (twin->source[0] == PGC_S_DEFAULT && twin->source[1] == PGC_S_DEFAULT)
		in_effect = loaded_as_dropin ? 1 : 0;
	else
		in_effect = twin->source[1] >= twin->source[0] ? 1 : 0;
	twin->record[in_effect]->flags &= ~GUC_NO_SHOW_ALL;
	twin->record[1 - in_effect]->flags |= GUC_NO_SHOW_ALL;
}

/* one name's value changes: recompute the value in effect */
static void
twin_assign(NgTwin *twin, int which, int newval, void *extra)
{
	twin->value[which] = newval;
	twin->source[which] = extra ? *(GucSource *) extra : PGC_S_DEFAULT;
	if (aliases_defined && twin->source[1] >= twin->source[0])
		twin->effective = twin->value[1];
	else
		twin->effective = twin->value[0];
	twin_show_in_effect(twin);
}

static const char *
twin_show(NgTwin *twin, bool is_bool)
{
	static char buf[32];

	if (twin->names)
		return twin->names[twin->effective];
	if (is_bool)
		return twin->effective ? "on" : "off";
	snprintf(buf, sizeof(buf), "%d", twin->effective);
	return buf;
}

/* the depth of tracking that pg_stat_statements_ng.track names */
static void
track_depth_update(void)
{
	ng_track_depth = ng_track == NG_TRACK_ALL ? INT_MAX :
		ng_track == NG_TRACK_TOP ? 1 : 0;
}

/* derive: what else to update when the effective value changes */
#define NG_TWIN_HOOKS(name, type, effvar, is_bool, derive) \
static void \
assign_##name##_0(type newval, void *extra) \
{ \
	twin_assign(&twin_##name, 0, (int) newval, extra); \
	effvar = (type) twin_##name.effective; \
	derive; \
} \
static void \
assign_##name##_1(type newval, void *extra) \
{ \
	twin_assign(&twin_##name, 1, (int) newval, extra); \
	effvar = (type) twin_##name.effective; \
	derive; \
} \
static const char * \
show_##name(void) \
{ \
	return twin_show(&twin_##name, is_bool); \
}

NG_TWIN_HOOKS(max, int, ng_max, false, (void) 0)
NG_TWIN_HOOKS(track, int, ng_track, false, track_depth_update())
NG_TWIN_HOOKS(track_utility, bool, ng_track_utility, true, (void) 0)
NG_TWIN_HOOKS(track_planning, bool, ng_track_planning, true, (void) 0)
NG_TWIN_HOOKS(save, bool, ng_save, true, (void) 0)

/*
 * same_file
 *		Do the two paths name the same file (after symbolic links)?
 */
static bool
same_file(const char *a, const char *b)
{
	struct stat sa;
	struct stat sb;

	if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
		return false;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * resolve_library
 *		The file the server loads for a shared_preload_libraries entry, or
 *		NULL: as the server resolves it, a name without a directory through
 *		dynamic_library_path, first as written, then with the shared library
 *		suffix; a path with "$libdir" standing for the library directory.
 */
static char *
resolve_library(const char *name)
{
	bool		have_slash = first_dir_separator(name) != NULL;

	for (int suffix = 0; suffix < 2; suffix++)
	{
		char	   *file = suffix ? psprintf("%s%s", name, DLSUFFIX) : pstrdup(name);
		char	   *path;
		char	   *piece;

		if (have_slash)
		{
			if (strncmp(file, "$libdir", 7) == 0)
				path = psprintf("%s%s", pkglib_path, file + 7);
			else
				path = pstrdup(file);
			if (access(path, F_OK) == 0)
				return path;
			continue;
		}
		path = pstrdup(Dynamic_library_path);
		for (piece = strtok(path, ":"); piece != NULL; piece = strtok(NULL, ":"))
		{
			char	   *full;

			if (strncmp(piece, "$libdir", 7) == 0)
				full = psprintf("%s%s/%s", pkglib_path, piece + 7, file);
			else
				full = psprintf("%s/%s", piece, file);
			if (is_absolute_path(full) && access(full, F_OK) == 0)
				return full;
		}
	}
	return NULL;
}

/*
 * contrib_preloaded
 *		Is contrib's own pg_stat_statements library in shared_preload_libraries
 *		too?  Decided by what the entry named pg_stat_statements resolves to:
 *		after the drop-in is installed that name is our own library (a
 *		symbolic link to it), and then the names are ours to honor (and
 *		loaded_as_dropin is set).
 */
static bool
contrib_preloaded(void)
{
	char	   *copy = pstrdup(shared_preload_libraries_string);
	List	   *names;
	ListCell   *lc;
	Dl_info		self;
	bool		found = false;

	if (dladdr((void *) ng_define_gucs, &self) == 0 || self.dli_fname == NULL)
		self.dli_fname = NULL;
	/* split as the server does to load them: paths are not truncated */
	if (!SplitDirectoriesString(copy, ',', &names))
		return false;
	foreach(lc, names)
	{
		const char *name = (const char *) lfirst(lc);
		const char *base = last_dir_separator(name);
		char	   *file;

		base = base ? base + 1 : name;
		if (strcmp(base, "pg_stat_statements") != 0 &&
			strcmp(base, "pg_stat_statements" DLSUFFIX) != 0)
			continue;
		file = resolve_library(name);
		if (file != NULL &&
			(self.dli_fname == NULL || !same_file(file, self.dli_fname)))
			found = true;
		else if (file != NULL)
			loaded_as_dropin = true;
	}
	list_free_deep(names);
	pfree(copy);
	return found;
}

/*
 * define_settings
 *		Define the five settings that contrib also has, under the prefix
 *		given; ours when alias is false.  The descriptions are made in
 *		TopMemoryContext: the GUC machinery keeps the pointers, and the
 *		postmaster's current context (PostmasterContext, when it loads the
 *		library) is freed in every backend it starts.
 */
static void
define_settings(const char *prefix, bool alias)
{
	const char *note = alias ? " (pg_stat_statements_ng's setting under contrib's name)" : "";
	int			i = alias ? 1 : 0;
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	DefineCustomIntVariable(psprintf("%s.max", prefix),
							psprintf("Sets the maximum number of statements tracked%s.", note),
							"Takes effect on reload: lowering it evicts entries down to the new value.",
							&guc_max[i],
							5000,
							100,
							INT_MAX / 2,
							PGC_SIGHUP,
							0,
							twin_check_int, alias ? assign_max_1 : assign_max_0, show_max);

	DefineCustomEnumVariable(psprintf("%s.track", prefix),
							 psprintf("Selects which statements are tracked%s.", note),
							 NULL,
							 &guc_track[i],
							 NG_TRACK_TOP,
							 track_options,
							 PGC_SUSET,
							 0,
							 twin_check_int, alias ? assign_track_1 : assign_track_0, show_track);

	DefineCustomBoolVariable(psprintf("%s.track_utility", prefix),
							 psprintf("Selects whether utility commands are tracked%s.", note),
							 NULL,
							 &guc_track_utility[i],
							 true,
							 PGC_SUSET,
							 0,
							 twin_check_bool,
							 alias ? assign_track_utility_1 : assign_track_utility_0,
							 show_track_utility);

	DefineCustomBoolVariable(psprintf("%s.track_planning", prefix),
							 psprintf("Selects whether planning duration is tracked%s.", note),
							 NULL,
							 &guc_track_planning[i],
							 false,
							 PGC_SUSET,
							 0,
							 twin_check_bool,
							 alias ? assign_track_planning_1 : assign_track_planning_0,
							 show_track_planning);

	DefineCustomBoolVariable(psprintf("%s.save", prefix),
							 psprintf("Save statistics across server shutdowns%s.", note),
							 NULL,
							 &guc_save[i],
							 true,
							 PGC_SIGHUP,
							 0,
							 twin_check_bool, alias ? assign_save_1 : assign_save_0, show_save);
	MemoryContextSwitchTo(old);
}

/*
 * define_admission
 *		Define pg_stat_statements_ng.admission (the admission filter,
 *		slots/admit.h).
 */
static void
define_admission(void)
{
	DefineCustomEnumVariable("pg_stat_statements_ng.admission",
							 "Selects which new statements get an entry when the table is full.",
							 "recurring: only a statement seen before, without evicting for one seen once; all: every one, evicting.",
							 &ng_admission,
							 NG_ADMIT_RECURRING,
							 admission_options,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);
}

/*
 * twins_find_records
 *		Once both names of each setting are defined: keep their GUC
 *		records, and show in pg_settings the name in effect.
 */
static void
twins_find_records(void)
{
	static const struct
	{
		NgTwin	   *twin;
		const char *suffix;
	}			twins[] = {
		{&twin_max, "max"}, {&twin_track, "track"},
		{&twin_track_utility, "track_utility"},
		{&twin_track_planning, "track_planning"}, {&twin_save, "save"}
	};

	for (int i = 0; i < lengthof(twins); i++)
	{
		NgTwin	   *twin = twins[i].twin;

		twin->record[0] = ng_find_guc_compat(psprintf("%s.%s", NG_NAME,
													  twins[i].suffix));
		twin->record[1] = ng_find_guc_compat(psprintf("pg_stat_statements.%s",
													  twins[i].suffix));
		twin_show_in_effect(twin);
	}
}

/*
 * ng_dropin_preloaded
 *		Is this library preloaded as pg_stat_statements (the drop-in), and
 *		contrib's own library not preloaded?  Then contrib's saved file is
 *		ours to import and to write (persist_contrib.c).  Decided in
 *		_PG_init, in the postmaster.
 */
bool
ng_dropin_preloaded(void)
{
	return aliases_defined && loaded_as_dropin;
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

	define_admission();
	ng_history_define_gucs();

#ifdef USE_ASSERT_CHECKING
	DefineCustomEnumVariable("pg_stat_statements_ng.debug_fault",
							 "Injects a fault, for tests (assertion builds only).",
							 NULL,
							 &ng_debug_fault,
							 NG_FAULT_NONE,
							 debug_fault_options,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							 NULL, assign_debug_fault, NULL);

	/*
	 * A fault injection for tests, on assertion builds only: the exit
	 * callback fails after folding its first slot (slots/life.c).
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
		/* from here on, contrib's names count in the value in effect */
		aliases_defined = true;
		define_settings("pg_stat_statements", true);
		MarkGUCPrefixReserved("pg_stat_statements");
		twins_find_records();
	}
	else
		ereport(LOG,
				(errmsg("pg_stat_statements_ng: contrib's pg_stat_statements library is preloaded as well"),
				 errdetail("The pg_stat_statements.* settings are contrib's; pg_stat_statements_ng uses only its own.")));
}
