/* pg_stat_statements--1.5--1.6.sql (pg_stat_statements_ng drop-in) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION pg_stat_statements UPDATE TO '1.6'
\echo Use "ALTER EXTENSION pg_stat_statements UPDATE TO '1.6'" to load this file. \quit

REVOKE EXECUTE ON FUNCTION pg_stat_statements_reset() FROM pg_read_all_stats;
