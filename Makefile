# pg_stat_statements_ng: build with PGXS.
#   make PG_CONFIG=/path/to/pg_config && make install PG_CONFIG=...
# CI adds -Werror and assertions through COPT (see .ci/run); the Makefile
# itself stays warning-clean without them.

MODULE_big = pg_stat_statements_ng
OBJS = \
	src/alloc.o \
	src/counters.o \
	src/dropin.o \
	src/entry_errors.o \
	src/entry_hist.o \
	src/errors_sql.o \
	src/evict.o \
	src/fingerprint.o \
	src/fingerprint_cache.o \
	src/failures.o \
	src/failures_sqlstate.o \
	src/funcs.o \
	src/funcs_statements.o \
	src/funcs_texts.o \
	src/guc.o \
	src/hist.o \
	src/history.o \
	src/history_capture.o \
	src/history_funcs.o \
	src/history_keeper.o \
	src/history_persist.o \
	src/history_plans.o \
	src/history_waits.o \
	src/hooks.o \
	src/keeper_start.o \
	src/measure.o \
	src/persist.o \
	src/persist_contrib.o \
	src/persist_contrib_format.o \
	src/persist_contrib_write.o \
	src/persist_fuzz.o \
	src/persist_fuzz_mutate.o \
	src/persist_read.o \
	src/persist_reader.o \
	src/persist_restore.o \
	src/persist_write.o \
	src/qtext.o \
	src/qtext_scan.o \
	src/reader.o \
	src/reader_rows.o \
	src/reset.o \
	src/rowform.o \
	src/setup.o \
	src/shmem.o \
	src/slots/refusal.o \
	src/slots/area.o \
	src/slots/bind.o \
	src/slots/cells.o \
	src/slots/count.o \
	src/slots/direct.o \
	src/slots/entry.o \
	src/slots/fold.o \
	src/slots/life.o \
	src/slots/local.o \
	src/slots/parse.o \
	src/slots/text.o \
	src/slots/victim.o \
	src/store.o \
	src/textconv.o \
	src/timers.o \
	src/utility.o \
	src/waits.o \
	src/waits_file.o \
	src/waits_sampler.o \
	src/planid.o \
	src/plan_text.o \
	src/plan_text_fuzz.o \
	src/plan_text_scrub.o \
	src/plans.o \
	src/plans_funcs.o \
	src/waits_sql.o \
	src/waits_window.o

EXTENSION = pg_stat_statements_ng
DATA = pg_stat_statements_ng--1.0.sql pg_stat_statements_ng--1.1.sql pg_stat_statements_ng--1.2.sql \
	pg_stat_statements_ng--1.0--1.1.sql pg_stat_statements_ng--1.1--1.2.sql
PGFILEDESC = "pg_stat_statements_ng - exact, lock-free statement statistics"

REGRESS = counting normalize literals nesting planning reset privileges info failures collect percentiles long_texts squash settings fingerprint
# the tests need the library preloaded: installcheck starts its own
# temporary instance with it, rather than using a running server
REGRESS_OPTS = --temp-instance=./tmp_check --temp-config=$(srcdir)/pg_stat_statements_ng.conf --load-extension=pg_stat_statements_ng
TAP_TESTS = 1

PG_CPPFLAGS = -I$(srcdir)/src
# calls between our files direct, as 16's PGXS does too (see compat.h); our
# calls into the server (the standard executor and utility functions,
# GetUserId, clock_gettime) through the GOT, without a PLT stub: one
# instruction less each, about a hundred a transaction of ten statements
# (docs/benchmarks.md)
PG_CFLAGS = -fvisibility=hidden -fno-plt
PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# the TAP tests' shared modules (t/lib/NgNode.pm ...): on prove's include
# path whatever PROVE_FLAGS the command line gives (prove runs in srcdir)
override PROVE_FLAGS += -I t/lib

# ---- the drop-in: our library behind the extension named pg_stat_statements ----
#
#   make install-dropin     install it (see docs/compatibility.md)
#   make uninstall-dropin   remove it, restoring contrib's files
#
# 15 to 17 keep extension files in one directory, so contrib's
# pg_stat_statements files are moved aside into a backup directory and put
# back by uninstall-dropin.  18 and later search extension_control_path, so
# the drop-in goes to a directory of its own and contrib's files stay.

PGSS_DROPIN_VERSION = $(if $(filter 15 16,$(MAJORVERSION)),1.10,$(if $(filter 17,$(MAJORVERSION)),1.11,1.12))
PGSS_DROPIN_STEPS_1.10 = 1.0--1.1 1.1--1.2 1.2--1.3 1.3--1.4 1.4--1.5 1.5--1.6 1.6--1.7 1.7--1.8 1.8--1.9 1.9--1.10
PGSS_DROPIN_STEPS_1.11 = $(PGSS_DROPIN_STEPS_1.10) 1.10--1.11
PGSS_DROPIN_STEPS_1.12 = $(PGSS_DROPIN_STEPS_1.11) 1.11--1.12
PGSS_DROPIN_FILES = dropin/pg_stat_statements--1.4.sql \
	$(patsubst %,dropin/pg_stat_statements--%.sql,$(PGSS_DROPIN_STEPS_$(PGSS_DROPIN_VERSION)))
PGSS_SEPARATE_DIR = $(if $(filter 15 16 17,$(MAJORVERSION)),,yes)
PGSS_EXTDIR = $(DESTDIR)$(datadir)/extension
PGSS_DROPIN_DIR = $(if $(PGSS_SEPARATE_DIR),$(DESTDIR)$(datadir)/pg_stat_statements_ng_dropin/extension,$(PGSS_EXTDIR))
PGSS_BACKUP_DIR = $(PGSS_EXTDIR)/pg_stat_statements_contrib_backup
PGSS_LIBDIR = $(DESTDIR)$(pkglibdir)
PGSS_DROPIN_LIBDIR = $(if $(PGSS_SEPARATE_DIR),$(DESTDIR)$(datadir)/pg_stat_statements_ng_dropin/lib,$(PGSS_LIBDIR))

install-dropin: install
ifeq ($(PGSS_SEPARATE_DIR),)
	$(MKDIR_P) '$(PGSS_BACKUP_DIR)'
	@for f in '$(PGSS_EXTDIR)'/pg_stat_statements.control '$(PGSS_EXTDIR)'/pg_stat_statements--*.sql \
			'$(PGSS_LIBDIR)/pg_stat_statements$(DLSUFFIX)'; do \
		if [ -f "$$f" ] && [ ! -L "$$f" ] && ! grep -qs 'pg_stat_statements_ng drop-in' "$$f"; then \
			mv "$$f" '$(PGSS_BACKUP_DIR)/' && echo "saved contrib's $$f in $(PGSS_BACKUP_DIR)"; \
		fi; \
	done
endif
	$(MKDIR_P) '$(PGSS_DROPIN_LIBDIR)'
	ln -sfn '$(pkglibdir)/pg_stat_statements_ng$(DLSUFFIX)' '$(PGSS_DROPIN_LIBDIR)/pg_stat_statements$(DLSUFFIX)'
	$(MKDIR_P) '$(PGSS_DROPIN_DIR)'
	printf "%s\n" \
		"# pg_stat_statements, provided by the pg_stat_statements_ng drop-in" \
		"comment = 'track planning and execution statistics of all SQL statements executed (pg_stat_statements_ng)'" \
		"default_version = '$(PGSS_DROPIN_VERSION)'" \
		"module_pathname = '\$$libdir/pg_stat_statements'" \
		"relocatable = true" > '$(PGSS_DROPIN_DIR)/pg_stat_statements.control'
	$(INSTALL_DATA) $(PGSS_DROPIN_FILES) '$(PGSS_DROPIN_DIR)/'
ifneq ($(PGSS_SEPARATE_DIR),)
	@echo "to use it, set extension_control_path = '$(datadir)/pg_stat_statements_ng_dropin:\$$system'"
	@echo "and dynamic_library_path = '$(datadir)/pg_stat_statements_ng_dropin/lib:\$$libdir'"
endif

# Removes only what is the drop-in's (files that say so, the library link),
# then moves back whatever contrib files were saved; works, and says what it
# did, whether or not contrib's files were there to save.
uninstall-dropin:
ifeq ($(PGSS_SEPARATE_DIR),)
	@removed=0; restored=0; \
	for f in '$(PGSS_EXTDIR)'/pg_stat_statements.control '$(PGSS_EXTDIR)'/pg_stat_statements--*.sql; do \
		if grep -qs 'pg_stat_statements_ng drop-in' "$$f"; then \
			rm -f "$$f" || exit 1; removed=$$((removed + 1)); \
		fi; \
	done; \
	if [ -L '$(PGSS_LIBDIR)/pg_stat_statements$(DLSUFFIX)' ]; then \
		rm -f '$(PGSS_LIBDIR)/pg_stat_statements$(DLSUFFIX)' || exit 1; removed=$$((removed + 1)); \
	fi; \
	for f in '$(PGSS_BACKUP_DIR)'/*; do \
		[ -e "$$f" ] || continue; \
		case "$$f" in \
			*$(DLSUFFIX)) mv "$$f" '$(PGSS_LIBDIR)/' || exit 1 ;; \
			*) mv "$$f" '$(PGSS_EXTDIR)/' || exit 1 ;; \
		esac; \
		restored=$$((restored + 1)); \
	done; \
	if [ -d '$(PGSS_BACKUP_DIR)' ]; then rmdir '$(PGSS_BACKUP_DIR)' || exit 1; fi; \
	echo "removed $$removed file(s) of the drop-in"; \
	if [ "$$restored" = 0 ]; then \
		echo "no contrib pg_stat_statements files to restore (none were saved in $(PGSS_BACKUP_DIR))"; \
	else \
		echo "restored $$restored file(s) of contrib's pg_stat_statements"; \
	fi
else
	rm -rf '$(DESTDIR)$(datadir)/pg_stat_statements_ng_dropin'
endif

.PHONY: install-dropin uninstall-dropin

# ---- PGXN: make dist writes $(EXTENSION)-<version>.zip (version from
# META.json) into DISTDIR, the committed tree at HEAD under a
# $(EXTENSION)-<version>/ prefix, as PGXN expects

DISTVERSION = $(shell sed -n 's/^   "version": "\(.*\)",$$/\1/p' $(srcdir)/META.json)
DISTDIR ?= .

dist:
	git -C '$(srcdir)' archive --format=zip --prefix=$(EXTENSION)-$(DISTVERSION)/ \
		-o '$(abspath $(DISTDIR))/$(EXTENSION)-$(DISTVERSION).zip' HEAD
	@echo "$(abspath $(DISTDIR))/$(EXTENSION)-$(DISTVERSION).zip"

.PHONY: dist
