/*-------------------------------------------------------------------------
 *
 * rowform.h
 *		Putting the statement rows into a function's tuplestore, formed by a
 *		loop specialized for their columns (rowform.c).
 *
 * Locks: none; backend-local memory only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_ROWFORM_H
#define NG_ROWFORM_H

#include "access/tupdesc.h"
#include "executor/tuptable.h"
#include "utils/tuplestore.h"

/* one column as the loop needs it */
typedef struct NgRowFormAtt
{
	int16		len;			/* 1, 2, 4 or 8 by value; -1 varlena */
	uint8		alignby;		/* 1, 2, 4 or 8 */
	bool		packable;		/* a varlena that may take a 1-byte header */
} NgRowFormAtt;

typedef struct NgRowForm
{
	Tuplestorestate *store;
	TupleDesc	desc;
	int			natts;
	bool		fast;			/* every column is one the loop knows */
	NgRowFormAtt *atts;
	TupleTableSlot *slot;		/* hands the formed tuple to the store */
	char	   *buf;			/* the tuple being formed, MAXALIGNed */
	Size		bufsize;
} NgRowForm;

extern void ng_rowform_begin(NgRowForm *f, Tuplestorestate *store,
							 TupleDesc desc);
extern void ng_rowform_put(NgRowForm *f, const Datum *values,
						   const bool *nulls);
extern void ng_rowform_end(NgRowForm *f);

#endif							/* NG_ROWFORM_H */
