# pg_stat_statements_ng: build with PGXS.
#   make PG_CONFIG=/path/to/pg_config && make install PG_CONFIG=...
# CI adds -Werror and assertions through COPT (see .ci/run); the Makefile
# itself stays warning-clean without them.

MODULE_big = pg_stat_statements_ng
OBJS = \
	src/counters.o \
	src/dropin.o \
	src/evict.o \
	src/failures.o \
	src/funcs.o \
	src/guc.o \
	src/hooks.o \
	src/persist.o \
	src/qtext.o \
	src/reader.o \
	src/slots.o \
	src/store.o

EXTENSION = pg_stat_statements_ng
DATA = pg_stat_statements_ng--1.0.sql pg_stat_statements_ng--1.1.sql pg_stat_statements_ng--1.0--1.1.sql
PGFILEDESC = "pg_stat_statements_ng - exact, lock-free statement statistics"

REGRESS = counting normalize nesting planning reset privileges info failures collect
# the tests need the library preloaded: installcheck starts its own
# temporary instance with it, rather than using a running server
REGRESS_OPTS = --temp-instance=./tmp_check --temp-config=$(srcdir)/pg_stat_statements_ng.conf --load-extension=pg_stat_statements_ng
TAP_TESTS = 1

PG_CPPFLAGS = -I$(srcdir)/src
PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

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

uninstall-dropin:
ifeq ($(PGSS_SEPARATE_DIR),)
	@if [ ! -d '$(PGSS_BACKUP_DIR)' ]; then echo "no backup of contrib's files in $(PGSS_BACKUP_DIR)"; exit 1; fi
	rm -f '$(PGSS_EXTDIR)'/pg_stat_statements.control '$(PGSS_EXTDIR)'/pg_stat_statements--*.sql
	rm -f '$(PGSS_LIBDIR)/pg_stat_statements$(DLSUFFIX)'
	@for f in '$(PGSS_BACKUP_DIR)'/*; do \
		case "$$f" in \
			*$(DLSUFFIX)) mv "$$f" '$(PGSS_LIBDIR)/' ;; \
			*) [ -e "$$f" ] && mv "$$f" '$(PGSS_EXTDIR)/' ;; \
		esac; \
	done
	rmdir '$(PGSS_BACKUP_DIR)'
	@echo "contrib's pg_stat_statements files restored"
else
	rm -rf '$(DESTDIR)$(datadir)/pg_stat_statements_ng_dropin'
endif

.PHONY: install-dropin uninstall-dropin
