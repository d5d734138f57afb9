/* pg_stat_statements--1.6--1.7.sql (pg_stat_statements_ng drop-in) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION pg_stat_statements UPDATE TO '1.7'
\echo Use "ALTER EXTENSION pg_stat_statements UPDATE TO '1.7'" to load this file. \quit

-- reset takes a filter
DROP FUNCTION pg_stat_statements_reset();

CREATE FUNCTION pg_stat_statements_reset(IN userid Oid DEFAULT 0,
    IN dbid Oid DEFAULT 0,
    IN queryid bigint DEFAULT 0
)
RETURNS void
AS 'MODULE_PATHNAME', 'pg_stat_statements_reset_1_7'
LANGUAGE C STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION pg_stat_statements_reset(Oid, Oid, bigint) FROM PUBLIC;
