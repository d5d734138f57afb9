# pg_stat_statements_ng: build with PGXS.
#   make PG_CONFIG=/path/to/pg_config && make install PG_CONFIG=...
# CI adds -Werror and assertions through COPT (see .ci/run); the Makefile
# itself stays warning-clean without them.

MODULE_big = pg_stat_statements_ng
OBJS = \
	src/counters.o \
	src/dropin.o \
	src/evict.o \
	src/funcs.o \
	src/guc.o \
	src/hooks.o \
	src/persist.o \
	src/qtext.o \
	src/reader.o \
	src/slots.o \
	src/store.o

EXTENSION = pg_stat_statements_ng
DATA = pg_stat_statements_ng--1.0.sql
PGFILEDESC = "pg_stat_statements_ng - exact, lock-free statement statistics"

REGRESS = counting normalize nesting planning reset privileges info
# the tests need the library preloaded: installcheck starts its own
# temporary instance with it, rather than using a running server
REGRESS_OPTS = --temp-instance=./tmp_check --temp-config=$(srcdir)/pg_stat_statements_ng.conf --load-extension=pg_stat_statements_ng
TAP_TESTS = 1

PG_CPPFLAGS = -I$(srcdir)/src
PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
