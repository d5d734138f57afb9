/*-------------------------------------------------------------------------
 *
 * columns.h
 *		Every column of a statement, defined once, in one list: the members
 *		of NgCounters (counters.h), how two sets merge (counters.c), and the
 *		columns of each API version of the statement rows, in their order
 *		(funcs_statements.c).  scripts/columns.py reads the same list: the
 *		drop-in's SQL is generated from it (scripts/gen-dropin.py), and our
 *		own SQL scripts and docs/compatibility.md's column list are checked
 *		against it (scripts/check-house.sh).
 *
 * Pure definitions: no code, no state, no lock.
 *
 * The list, NG_COLUMNS(K, F, V), is in the order of the columns of the
 * newest API; each API version shows, in list order, the rows whose range
 * of versions holds it.  A row is one of:
 *
 *   K(member, C type)
 *		a member of NgCounters per kind (planning, execution): an array
 *		[NG_NUM_KINDS], merged with the others of its kind as calls, mean
 *		and variance, min and max (ng_counters_merge_kind); shown through
 *		V rows.
 *   F(column, form, first, last, C type, member, merge, recorded, filled)
 *		a counter: a member of NgCounters, merged by SUM (added) or MAX
 *		(the later), shown as column in API versions first to last (NONE:
 *		in none), NULL where filled is false (a compat.h flag of the
 *		majors that have it).  recorded names (a string) the function
 *		that records it: the recording is written by hand
 *		(counters_record.h inline for the hot path, counters.c for what
 *		few samples have), not generated.
 *   V(column, form, first, last, value, isnull)
 *		a column computed for the row (funcs_statements.c's emit_columns,
 *		where row, c, sr and visible are in scope): value a Datum.
 *
 * form is the column's SQL type: OID oid, BOOL bool, BIGINT bigint, TEXT
 * text, INT8 int8, FLOAT8 float8, NUMERIC numeric, TSTZ timestamp with time
 * zone (NULL when 0), NONE not shown.  API versions are NgApi's without
 * their prefix (funcs.h): PGSS_1_0 ... PGSS_1_12 are pg_stat_statements'
 * (PGSS_1_3 serves its versions 1.3 to 1.7), NG_1_0 and NG_1_2 ours; LAST
 * is the newest.
 *
 * NgCounters is its K and F members in list order: where an F row goes is
 * also where its member goes in the shared entry.  A new counter goes at
 * the end of the list, the last column of the view that gains it (an
 * upgrade script keeps the view, which may only gain columns at its end)
 * and the last member of NgCounters (store.h: the entry's layout rule).
 * CONTRIBUTING.md has the recipe for a new counter.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_COLUMNS_H
#define NG_COLUMNS_H

#define NG_COLUMNS(K, F, V) \
	V(userid, OID, PGSS_1_0, LAST, ObjectIdGetDatum(row->key.userid), false) \
	V(dbid, OID, PGSS_1_0, LAST, ObjectIdGetDatum(row->key.dbid), false) \
	V(toplevel, BOOL, PGSS_1_9, LAST, BoolGetDatum(row->key.toplevel), false) \
	V(queryid, BIGINT, PGSS_1_2, LAST, NG_V_QUERYID, !visible) \
	V(query, TEXT, PGSS_1_0, LAST, NG_V_QUERY, !NG_V_QUERY_SHOWN) \
	K(calls, int64) \
	K(total_time, double) \
	K(min_time, double) \
	K(max_time, double) \
	K(mean_time, double) \
	K(sum_var_time, double)		/* sum of squared deviations */ \
	V(plans, INT8, PGSS_1_8, LAST, NG_V_CALLS(NG_PLAN), false) \
	V(total_plan_time, FLOAT8, PGSS_1_8, LAST, NG_V_TOTAL(NG_PLAN), false) \
	V(min_plan_time, FLOAT8, PGSS_1_8, LAST, NG_V_MIN(NG_PLAN), false) \
	V(max_plan_time, FLOAT8, PGSS_1_8, LAST, NG_V_MAX(NG_PLAN), false) \
	V(mean_plan_time, FLOAT8, PGSS_1_8, LAST, NG_V_MEAN(NG_PLAN), false) \
	V(stddev_plan_time, FLOAT8, PGSS_1_8, LAST, NG_V_STDDEV(NG_PLAN), false) \
	V(calls, INT8, PGSS_1_0, LAST, NG_V_CALLS(NG_EXEC), false) \
	V(total_time, FLOAT8, PGSS_1_0, PGSS_1_3, NG_V_TOTAL(NG_EXEC), false) \
	V(min_time, FLOAT8, PGSS_1_3, PGSS_1_3, NG_V_MIN(NG_EXEC), false) \
	V(max_time, FLOAT8, PGSS_1_3, PGSS_1_3, NG_V_MAX(NG_EXEC), false) \
	V(mean_time, FLOAT8, PGSS_1_3, PGSS_1_3, NG_V_MEAN(NG_EXEC), false) \
	V(stddev_time, FLOAT8, PGSS_1_3, PGSS_1_3, NG_V_STDDEV(NG_EXEC), false) \
	V(total_exec_time, FLOAT8, PGSS_1_8, LAST, NG_V_TOTAL(NG_EXEC), false) \
	V(min_exec_time, FLOAT8, PGSS_1_8, LAST, NG_V_MIN(NG_EXEC), false) \
	V(max_exec_time, FLOAT8, PGSS_1_8, LAST, NG_V_MAX(NG_EXEC), false) \
	V(mean_exec_time, FLOAT8, PGSS_1_8, LAST, NG_V_MEAN(NG_EXEC), false) \
	V(stddev_exec_time, FLOAT8, PGSS_1_8, LAST, NG_V_STDDEV(NG_EXEC), false) \
	F(rows, INT8, PGSS_1_0, LAST, int64, rows, SUM, "ng_counters_record_plain", true) \
	F(shared_blks_hit, INT8, PGSS_1_0, LAST, int64, shared_blks_hit, SUM, "ng_counters_record_blocks_since", true) \
	F(shared_blks_read, INT8, PGSS_1_0, LAST, int64, shared_blks_read, SUM, "ng_counters_record_blocks_since", true) \
	F(shared_blks_dirtied, INT8, PGSS_1_1, LAST, int64, shared_blks_dirtied, SUM, "ng_counters_record_blocks_since", true) \
	F(shared_blks_written, INT8, PGSS_1_0, LAST, int64, shared_blks_written, SUM, "ng_counters_record_blocks_since", true) \
	F(local_blks_hit, INT8, PGSS_1_0, LAST, int64, local_blks_hit, SUM, "ng_counters_record_blocks_since", true) \
	F(local_blks_read, INT8, PGSS_1_0, LAST, int64, local_blks_read, SUM, "ng_counters_record_blocks_since", true) \
	F(local_blks_dirtied, INT8, PGSS_1_1, LAST, int64, local_blks_dirtied, SUM, "ng_counters_record_blocks_since", true) \
	F(local_blks_written, INT8, PGSS_1_0, LAST, int64, local_blks_written, SUM, "ng_counters_record_blocks_since", true) \
	F(temp_blks_read, INT8, PGSS_1_0, LAST, int64, temp_blks_read, SUM, "ng_counters_record_blocks_since", true) \
	F(temp_blks_written, INT8, PGSS_1_0, LAST, int64, temp_blks_written, SUM, "ng_counters_record_blocks_since", true) \
	V(blk_read_time, FLOAT8, PGSS_1_1, PGSS_1_10, Float8GetDatumFast(c->shared_blk_read_time), false) \
	V(blk_write_time, FLOAT8, PGSS_1_1, PGSS_1_10, Float8GetDatumFast(c->shared_blk_write_time), false) \
	F(shared_blk_read_time, FLOAT8, PGSS_1_11, LAST, double, shared_blk_read_time, SUM, "ng_counters_record_bufusage", true) \
	F(shared_blk_write_time, FLOAT8, PGSS_1_11, LAST, double, shared_blk_write_time, SUM, "ng_counters_record_bufusage", true) \
	F(local_blk_read_time, FLOAT8, PGSS_1_11, LAST, double, local_blk_read_time, SUM, "ng_counters_record_bufusage", NG_HAVE_LOCAL_BLK_TIME) \
	F(local_blk_write_time, FLOAT8, PGSS_1_11, LAST, double, local_blk_write_time, SUM, "ng_counters_record_bufusage", NG_HAVE_LOCAL_BLK_TIME) \
	F(temp_blk_read_time, FLOAT8, PGSS_1_10, LAST, double, temp_blk_read_time, SUM, "ng_counters_record_bufusage", true) \
	F(temp_blk_write_time, FLOAT8, PGSS_1_10, LAST, double, temp_blk_write_time, SUM, "ng_counters_record_bufusage", true) \
	F(wal_records, INT8, PGSS_1_8, LAST, int64, wal_records, SUM, "ng_counters_record_rest", true) \
	F(wal_fpi, INT8, PGSS_1_8, LAST, int64, wal_fpi, SUM, "ng_counters_record_rest", true) \
	F(wal_bytes, NUMERIC, PGSS_1_8, LAST, uint64, wal_bytes, SUM, "ng_counters_record_rest", true) \
	F(wal_buffers_full, INT8, PGSS_1_12, LAST, int64, wal_buffers_full, SUM, "ng_counters_record_rest", NG_HAVE_WAL_BUFFERS_FULL) \
	F(jit_functions, INT8, PGSS_1_10, LAST, int64, jit_functions, SUM, "ng_counters_record_rest", true) \
	F(jit_generation_time, FLOAT8, PGSS_1_10, LAST, double, jit_generation_time, SUM, "ng_counters_record_rest", true) \
	F(jit_inlining_count, INT8, PGSS_1_10, LAST, int64, jit_inlining_count, SUM, "ng_counters_record_rest", true) \
	F(jit_inlining_time, FLOAT8, PGSS_1_10, LAST, double, jit_inlining_time, SUM, "ng_counters_record_rest", true) \
	F(jit_optimization_count, INT8, PGSS_1_10, LAST, int64, jit_optimization_count, SUM, "ng_counters_record_rest", true) \
	F(jit_optimization_time, FLOAT8, PGSS_1_10, LAST, double, jit_optimization_time, SUM, "ng_counters_record_rest", true) \
	F(jit_emission_count, INT8, PGSS_1_10, LAST, int64, jit_emission_count, SUM, "ng_counters_record_rest", true) \
	F(jit_emission_time, FLOAT8, PGSS_1_10, LAST, double, jit_emission_time, SUM, "ng_counters_record_rest", true) \
	F(jit_deform_count, INT8, PGSS_1_11, LAST, int64, jit_deform_count, SUM, "ng_counters_record_rest", NG_HAVE_JIT_DEFORM) \
	F(jit_deform_time, FLOAT8, PGSS_1_11, LAST, double, jit_deform_time, SUM, "ng_counters_record_rest", NG_HAVE_JIT_DEFORM) \
	F(parallel_workers_to_launch, INT8, PGSS_1_12, LAST, int64, parallel_workers_to_launch, SUM, "ng_counters_record_rest", NG_HAVE_PARALLEL_WORKERS) \
	F(parallel_workers_launched, INT8, PGSS_1_12, LAST, int64, parallel_workers_launched, SUM, "ng_counters_record_rest", NG_HAVE_PARALLEL_WORKERS) \
	V(stats_since, TSTZ, PGSS_1_11, LAST, TimestampTzGetDatum(row->stats_since), false) \
	V(minmax_stats_since, TSTZ, PGSS_1_11, LAST, TimestampTzGetDatum(row->minmax_stats_since), false) \
	F(errors, INT8, NG_1_0, LAST, int64, failed_errors, SUM, "ng_counters_record_failure", true) \
	F(cancels, INT8, NG_1_0, LAST, int64, failed_cancels, SUM, "ng_counters_record_failure", true) \
	F(timeouts, INT8, NG_1_0, LAST, int64, failed_timeouts, SUM, "ng_counters_record_failure", true) \
	F(failed_exec_time, FLOAT8, NG_1_0, LAST, double, failed_time, SUM, "ng_counters_record_failure", true) \
	F(last_executed_at, TSTZ, NG_1_0, LAST, TimestampTz, last_executed_at, MAX, "ng_counters_record", true) \
	V(text_stored_at, TSTZ, NG_1_0, LAST, TimestampTzGetDatum(row->text_stored_at), row->text_stored_at == 0) \
	V(exec_p50, FLOAT8, NG_1_0, LAST, NG_V_PCT(NG_EXEC, 0), !row->any_pct[NG_EXEC]) \
	V(exec_p95, FLOAT8, NG_1_0, LAST, NG_V_PCT(NG_EXEC, 1), !row->any_pct[NG_EXEC]) \
	V(exec_p99, FLOAT8, NG_1_0, LAST, NG_V_PCT(NG_EXEC, 2), !row->any_pct[NG_EXEC]) \
	V(plan_p50, FLOAT8, NG_1_0, LAST, NG_V_PCT(NG_PLAN, 0), !row->any_pct[NG_PLAN]) \
	V(plan_p95, FLOAT8, NG_1_0, LAST, NG_V_PCT(NG_PLAN, 1), !row->any_pct[NG_PLAN]) \
	V(plan_p99, FLOAT8, NG_1_0, LAST, NG_V_PCT(NG_PLAN, 2), !row->any_pct[NG_PLAN]) \
	V(fingerprint, BIGINT, NG_1_2, LAST, Int64GetDatumFast((int64) row->fingerprint), !row->has_fingerprint) \
	F(changed_generation, NONE, NONE, NONE, uint64, changed_generation, MAX, "slot_record_end", false) \
								/* new counters above */

/* a row's arguments ignored */
#define NG_COL_NONE(...)

/* the number of K, F or V rows: more than any API version has columns */
#define NG_COL_ONE(...) + 1
#define NG_COLUMNS_ROWS (0 NG_COLUMNS(NG_COL_ONE, NG_COL_ONE, NG_COL_ONE))

#endif							/* NG_COLUMNS_H */
