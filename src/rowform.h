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

#pragma GCC visibility push(hidden)

/* how the loop writes a column */
typedef enum NgColKind
{
	NG_COL_8,					/* by value, 8 bytes aligned on 8 */
	NG_COL_4,					/* by value, 4 bytes aligned on 4 */
	NG_COL_BYVAL,				/* by value, another length or alignment */
	NG_COL_VARLENA
} NgColKind;

/* one column as the loop needs it */
typedef struct NgRowFormAtt
{
	NgColKind	kind;
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
	Size		fixed_max;		/* room the by-value columns may take */
	char	   *buf;			/* the tuple being formed; zeros between rows */
	Size		bufsize;
} NgRowForm;

extern void ng_rowform_begin(NgRowForm *f, Tuplestorestate *store,
							 TupleDesc desc);
extern void ng_rowform_put(NgRowForm *f, const Datum *values,
						   const bool *nulls);
extern void ng_rowform_end(NgRowForm *f);

#pragma GCC visibility pop

#endif							/* NG_ROWFORM_H */
