/* pg_stat_statements_ng--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_stat_statements_ng UPDATE TO '1.1'" to load this file. \quit

-- 1.1 changes the SQL objects of 1.0 as follows (each change is made here
-- and in pg_stat_statements_ng--1.1.sql alike):
