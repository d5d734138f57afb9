/*-------------------------------------------------------------------------
 *
 * rowform.c
 *		The statement rows into the function's tuplestore: each row formed
 *		by a loop that knows its columns, instead of tuplestore_putvalues.
 *
 * Why a file of its own: a read of 100,000 statements forms 100,000 tuples
 * of up to 65 columns, and PostgreSQL's general heap_form_minimal_tuple
 * (two passes, each column a call that re-examines its attribute) was the
 * largest part of a read's instructions, more than everything else the
 * read does: about 110 instructions a column, against about 30 here
 * (callgrind, 15, a 64-column row).
 *
 * What it forms is byte for byte the tuple heap_form_minimal_tuple forms
 * from the same values and nulls (assertion builds form both and compare
 * them): the same header, null bitmap, alignment, zeroed padding and
 * 1-byte varlena headers where PostgreSQL would use them.  It knows columns
 * passed by value of 1, 2, 4 or 8 bytes and varlenas with a 4-byte header
 * or a short one, which is all a statement row has; a tuple descriptor
 * with any other column, or a value that is toasted, compressed or
 * expanded, goes to tuplestore_putvalues as before.
 *
 * Locks: none; backend-local memory only, outside every lock of ours.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "executor/tuptable.h"

#include "compat.h"
#include "rowform.h"

/* alignment in bytes of a typalign */
static uint8
align_bytes(char typalign)
{
	switch (typalign)
	{
		case TYPALIGN_CHAR:
			return 1;
		case TYPALIGN_SHORT:
			return ALIGNOF_SHORT;
		case TYPALIGN_INT:
			return ALIGNOF_INT;
		default:
			return ALIGNOF_DOUBLE;
	}
}

/*
 * ng_rowform_begin
 *		Ready f to put rows of desc into store.
 */
void
ng_rowform_begin(NgRowForm *f, Tuplestorestate *store, TupleDesc desc)
{
	f->store = store;
	f->desc = desc;
	f->natts = desc->natts;
	f->fast = true;
	f->fixed_max = 0;
	f->atts = palloc(sizeof(NgRowFormAtt) * Max(f->natts, 1));
	for (int i = 0; i < f->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		NgRowFormAtt *a = &f->atts[i];

		a->len = att->attlen;
		a->alignby = align_bytes(att->attalign);
		a->packable = (att->attlen == -1 &&
					   att->attstorage != TYPSTORAGE_PLAIN);
		if (att->attlen == -1)
			a->kind = NG_COL_VARLENA;
		else if (att->attlen == 8 && a->alignby == 8 && att->attbyval)
			a->kind = NG_COL_8;
		else if (att->attlen == 4 && a->alignby == 4 && att->attbyval)
			a->kind = NG_COL_4;
		else
			a->kind = NG_COL_BYVAL;
		if (att->attlen > 0)
			f->fixed_max += att->attlen + a->alignby - 1;
		if (att->attisdropped ||
			!(att->attlen == -1 ||
			  (att->attbyval && (att->attlen == 1 || att->attlen == 2 ||
								 att->attlen == 4 || att->attlen == 8))))
			f->fast = false;
	}
	f->slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	f->bufsize = 1024;
	while (f->bufsize < MAXALIGN(SizeofMinimalTupleHeader +
								 BITMAPLEN(f->natts)) + f->fixed_max + 256)
		f->bufsize *= 2;
	f->buf = palloc0(f->bufsize);
}

/* Where fill_data writes a row, and what it tells of it */
typedef struct RowFormDest
{
	char	   *data;			/* the values: zeroed, MAXALIGNed */
	Size		room;			/* bytes at data */
	bits8	   *bits;			/* the null bitmap, zeroed; NULL when the row
								 * has no nulls */
	uint16		infomask;		/* out: the infomask bits the values set */
} RowFormDest;

/*
 * fill_data
 *		Write the row's values at dest->data and their bits into dest->bits,
 *		as heap_fill_tuple does, in one pass; the infomask bits it sets into
 *		dest->infomask.  Returns the data's length; NG_FILL_UNKNOWN if a
 *		value is not one the loop knows (toasted, compressed or expanded),
 *		NG_FILL_ROOM if dest->room is too small: the caller then zeroes what
 *		was written and goes another way.
 */
#define NG_FILL_UNKNOWN		((Size) -1)
#define NG_FILL_ROOM		((Size) -2)

static Size
fill_data(const NgRowForm *f, const Datum *values, const bool *nulls,
		  RowFormDest *dest)
{
	char	   *data = dest->data;
	bits8	   *bits = dest->bits;
	uint16	   *infomask = &dest->infomask;
	Size		off = 0;

	*infomask = 0;
	for (int i = 0; i < f->natts; i++)
	{
		const NgRowFormAtt *a = &f->atts[i];
		const struct varlena *v;
		Size		n;

		if (bits != NULL)
		{
			if (nulls[i])
			{
				*infomask |= HEAP_HASNULL;
				continue;
			}
			bits[i >> 3] |= (bits8) (1 << (i & 7));
		}
		switch (a->kind)
		{
			case NG_COL_8:
				off = TYPEALIGN(8, off);
				*(Datum *) (data + off) = values[i];
				off += 8;
				continue;
			case NG_COL_4:
				off = TYPEALIGN(4, off);
				*(int32 *) (data + off) = DatumGetInt32(values[i]);
				off += 4;
				continue;
			case NG_COL_BYVAL:
				off = TYPEALIGN(a->alignby, off);
				store_att_byval(data + off, values[i], a->len);
				off += a->len;
				continue;
			case NG_COL_VARLENA:
				break;
		}
		*infomask |= HEAP_HASVARWIDTH;
		v = (const struct varlena *) DatumGetPointer(values[i]);
		if (VARATT_IS_SHORT(v))
			n = VARSIZE_SHORT(v);
		else if (!VARATT_IS_4B_U(v))
			return NG_FILL_UNKNOWN;
		else if (a->packable && VARATT_CAN_MAKE_SHORT(v))
			n = VARATT_CONVERTED_SHORT_SIZE(v);
		else
		{
			off = TYPEALIGN(a->alignby, off);
			n = VARSIZE(v);
		}
		/* the fixed columns still to come take at most f->fixed_max */
		if (off + n + f->fixed_max > dest->room)
			return NG_FILL_ROOM;
		if (VARATT_IS_4B_U(v) && n != VARSIZE(v))
		{
			SET_VARSIZE_SHORT(data + off, n);
			memcpy(data + off + 1, VARDATA(v), n - 1);
		}
		else
			memcpy(data + off, v, n);
		off += n;
	}
	return off;
}

/*
 * ng_rowform_put
 *		Put one row into the store: formed here when the loop knows every
 *		value, else by tuplestore_putvalues.
 */
void
ng_rowform_put(NgRowForm *f, const Datum *values, const bool *nulls)
{
	bool		hasnull = memchr(nulls, true, f->natts) != NULL;
	Size		hoff = MAXALIGN(SizeofMinimalTupleHeader +
								(hasnull ? BITMAPLEN(f->natts) : 0));
	Size		datalen = NG_FILL_UNKNOWN;
	MinimalTuple tup = (MinimalTuple) f->buf;
	RowFormDest dest;

	/* f->buf is all zeros between rows */
	while (f->fast)
	{
		dest.data = f->buf + hoff;
		dest.room = f->bufsize - hoff;
		dest.bits = hasnull ? tup->t_bits : NULL;
		datalen = fill_data(f, values, nulls, &dest);
		if (datalen != NG_FILL_ROOM)
			break;
		/* a long text: room for it, zeroed, and again */
		f->bufsize *= 2;
		pfree(f->buf);
		f->buf = palloc0(f->bufsize);
		tup = (MinimalTuple) f->buf;
	}
	if (datalen == NG_FILL_UNKNOWN)
	{
		memset(f->buf, 0, f->bufsize);
		tuplestore_putvalues(f->store, f->desc, (Datum *) values,
							 (bool *) nulls);
		return;
	}
	tup->t_len = hoff + datalen;
	HeapTupleHeaderSetNatts(tup, f->natts);
	tup->t_hoff = hoff + MINIMAL_TUPLE_OFFSET;
	tup->t_infomask = dest.infomask;
#ifdef USE_ASSERT_CHECKING
	{
		MinimalTuple check = NG_FORM_MINIMAL_TUPLE(f->desc, (Datum *) values,
												   (bool *) nulls);

		Assert(check->t_len == tup->t_len &&
			   memcmp(check, tup, tup->t_len) == 0);
		pfree(check);
	}
#endif
	ExecStoreMinimalTuple(tup, f->slot, false);
	tuplestore_puttupleslot(f->store, f->slot);
	ExecClearTuple(f->slot);
	memset(f->buf, 0, hoff + datalen);
}

/*
 * ng_rowform_end
 *		Free what ng_rowform_begin allocated.
 */
void
ng_rowform_end(NgRowForm *f)
{
	ExecDropSingleTupleTableSlot(f->slot);
	pfree(f->buf);
	pfree(f->atts);
}
