/*-------------------------------------------------------------------------
 *
 * dropin.c
 *		The C entry points of contrib's pg_stat_statements, so that our
 *		library can back the extension named pg_stat_statements.
 *
 * Why a file of its own: these symbols are a contract with SQL scripts we
 * do not choose.  The drop-in's scripts (dropin/) are written to create
 * exactly the objects of contrib's module for the running major, and each
 * SQL function calls the C symbol of the API version its script was
 * written for, as contrib's do: an extension created at an older version
 * keeps working with this library, and ALTER EXTENSION ... UPDATE moves it
 * to the newer symbols.  Each entry point checks that its caller asks for
 * that version's column count.
 *
 * Everything here delegates to funcs.c and reset.c; there is no state.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/timestamp.h"

#include "funcs.h"
#include "reset.h"
#include "shmem.h"
#include "slots/slots.h"

NG_FUNCTION_INFO(pg_stat_statements);
NG_FUNCTION_INFO(pg_stat_statements_1_2);
NG_FUNCTION_INFO(pg_stat_statements_1_3);
NG_FUNCTION_INFO(pg_stat_statements_1_8);
NG_FUNCTION_INFO(pg_stat_statements_1_9);
NG_FUNCTION_INFO(pg_stat_statements_1_10);
NG_FUNCTION_INFO(pg_stat_statements_1_11);
NG_FUNCTION_INFO(pg_stat_statements_1_12);
NG_FUNCTION_INFO(pg_stat_statements_reset);
NG_FUNCTION_INFO(pg_stat_statements_reset_1_7);
NG_FUNCTION_INFO(pg_stat_statements_reset_1_11);
NG_FUNCTION_INFO(pg_stat_statements_info);

/*
 * pg_stat_statements(): 1.0 and 1.1, no showtext argument; which of the two
 * shapes is asked for is told by the column count, as contrib does.
 */
Datum
pg_stat_statements(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;

	ng_check_loaded_as(NG_DROPIN_NAME);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	return ng_sql_statements(fcinfo,
							 tupdesc->natts == 14 ? NG_API_PGSS_1_0 : NG_API_PGSS_1_1,
							 true);
}

Datum
pg_stat_statements_1_2(PG_FUNCTION_ARGS)
{
	return ng_sql_statements(fcinfo, NG_API_PGSS_1_2, PG_GETARG_BOOL(0));
}

Datum
pg_stat_statements_1_3(PG_FUNCTION_ARGS)
{
	return ng_sql_statements(fcinfo, NG_API_PGSS_1_3, PG_GETARG_BOOL(0));
}

Datum
pg_stat_statements_1_8(PG_FUNCTION_ARGS)
{
	return ng_sql_statements(fcinfo, NG_API_PGSS_1_8, PG_GETARG_BOOL(0));
}

Datum
pg_stat_statements_1_9(PG_FUNCTION_ARGS)
{
	return ng_sql_statements(fcinfo, NG_API_PGSS_1_9, PG_GETARG_BOOL(0));
}

Datum
pg_stat_statements_1_10(PG_FUNCTION_ARGS)
{
	return ng_sql_statements(fcinfo, NG_API_PGSS_1_10, PG_GETARG_BOOL(0));
}

Datum
pg_stat_statements_1_11(PG_FUNCTION_ARGS)
{
	return ng_sql_statements(fcinfo, NG_API_PGSS_1_11, PG_GETARG_BOOL(0));
}

Datum
pg_stat_statements_1_12(PG_FUNCTION_ARGS)
{
	return ng_sql_statements(fcinfo, NG_API_PGSS_1_12, PG_GETARG_BOOL(0));
}

/* pg_stat_statements_reset(): 1.4 to 1.6, everything, returns void */
Datum
pg_stat_statements_reset(PG_FUNCTION_ARGS)
{
	ng_check_loaded_as(NG_DROPIN_NAME);
	(void) ng_store_reset(InvalidOid, InvalidOid, 0, false);
	PG_RETURN_VOID();
}

/* pg_stat_statements_reset(userid, dbid, queryid): 1.7 to 1.10 */
Datum
pg_stat_statements_reset_1_7(PG_FUNCTION_ARGS)
{
	ng_check_loaded_as(NG_DROPIN_NAME);
	(void) ng_store_reset(PG_GETARG_OID(0), PG_GETARG_OID(1),
						  (uint64) PG_GETARG_INT64(2), false);
	PG_RETURN_VOID();
}

/* pg_stat_statements_reset(userid, dbid, queryid, minmax_only): 1.11 on */
Datum
pg_stat_statements_reset_1_11(PG_FUNCTION_ARGS)
{
	ng_check_loaded_as(NG_DROPIN_NAME);
	PG_RETURN_TIMESTAMPTZ(ng_store_reset(PG_GETARG_OID(0), PG_GETARG_OID(1),
										 (uint64) PG_GETARG_INT64(2),
										 PG_GETARG_BOOL(3)));
}

/* pg_stat_statements_info(): dealloc and stats_reset */
Datum
pg_stat_statements_info(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};
	NgSharedStats stats;

	ng_check_loaded_as(NG_DROPIN_NAME);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != 2)
		elog(ERROR, "incorrect number of output arguments");

	/*
	 * dealloc: entries evicted, and executions of new statements the
	 * admission filter gave no entry (where contrib would have evicted)
	 */
	ng_stats_read(&stats);
	values[0] = Int64GetDatum(stats.dealloc + stats.admissions_refused);
	values[1] = TimestampTzGetDatum(stats.stats_reset);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
