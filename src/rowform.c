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
 * read does: about 110 instructions a column, against about 15 here.
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
	f->atts = palloc(sizeof(NgRowFormAtt) * Max(f->natts, 1));
	for (int i = 0; i < f->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		NgRowFormAtt *a = &f->atts[i];

		a->len = att->attlen;
		a->alignby = align_bytes(att->attalign);
		a->packable = (att->attlen == -1 &&
					   att->attstorage != TYPSTORAGE_PLAIN);
		if (att->attisdropped ||
			!(att->attlen == -1 ||
			  (att->attbyval && (att->attlen == 1 || att->attlen == 2 ||
								 att->attlen == 4 || att->attlen == 8))))
			f->fast = false;
	}
	f->slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	f->bufsize = 1024;
	f->buf = palloc(f->bufsize);
}

/*
 * data_size
 *		The size of the row's data, as heap_compute_data_size finds it, and
 *		whether it has nulls; -1 if a value is not one the loop knows.
 */
static Size
data_size(const NgRowForm *f, const Datum *values, const bool *nulls,
		  bool *hasnull)
{
	Size		off = 0;

	*hasnull = false;
	for (int i = 0; i < f->natts; i++)
	{
		const NgRowFormAtt *a = &f->atts[i];
		const struct varlena *v;

		if (nulls[i])
		{
			*hasnull = true;
			continue;
		}
		if (a->len > 0)
		{
			off = TYPEALIGN(a->alignby, off) + a->len;
			continue;
		}
		v = (const struct varlena *) DatumGetPointer(values[i]);
		if (VARATT_IS_SHORT(v))
			off += VARSIZE_SHORT(v);
		else if (!VARATT_IS_4B_U(v))
			return (Size) -1;	/* toasted, compressed or expanded */
		else if (a->packable && VARATT_CAN_MAKE_SHORT(v))
			off += VARATT_CONVERTED_SHORT_SIZE(v);
		else
			off = TYPEALIGN(a->alignby, off) + VARSIZE(v);
	}
	return off;
}

/*
 * fill_data
 *		Write the row's values at data (zeroed, MAXALIGNed) and their bits
 *		into bits (zeroed; NULL when there are no nulls), as heap_fill_tuple
 *		does; returns the infomask bits it sets.
 */
static uint16
fill_data(const NgRowForm *f, const Datum *values, const bool *nulls,
		  char *data, bits8 *bits)
{
	Size		off = 0;
	uint16		infomask = 0;

	for (int i = 0; i < f->natts; i++)
	{
		const NgRowFormAtt *a = &f->atts[i];
		const struct varlena *v;

		if (bits != NULL)
		{
			if (nulls[i])
			{
				infomask |= HEAP_HASNULL;
				continue;
			}
			bits[i >> 3] |= (bits8) (1 << (i & 7));
		}
		if (a->len > 0)
		{
			off = TYPEALIGN(a->alignby, off);
			store_att_byval(data + off, values[i], a->len);
			off += a->len;
			continue;
		}
		infomask |= HEAP_HASVARWIDTH;
		v = (const struct varlena *) DatumGetPointer(values[i]);
		if (VARATT_IS_SHORT(v))
		{
			memcpy(data + off, v, VARSIZE_SHORT(v));
			off += VARSIZE_SHORT(v);
		}
		else if (a->packable && VARATT_CAN_MAKE_SHORT(v))
		{
			Size		n = VARATT_CONVERTED_SHORT_SIZE(v);

			SET_VARSIZE_SHORT(data + off, n);
			memcpy(data + off + 1, VARDATA(v), n - 1);
			off += n;
		}
		else
		{
			off = TYPEALIGN(a->alignby, off);
			memcpy(data + off, v, VARSIZE(v));
			off += VARSIZE(v);
		}
	}
	return infomask;
}

/*
 * ng_rowform_put
 *		Put one row into the store: formed here when the loop knows every
 *		value, else by tuplestore_putvalues.
 */
void
ng_rowform_put(NgRowForm *f, const Datum *values, const bool *nulls)
{
	bool		hasnull;
	Size		datalen = f->fast ? data_size(f, values, nulls, &hasnull) : (Size) -1;
	Size		hoff;
	Size		len;
	MinimalTuple tup;

	if (datalen == (Size) -1)
	{
		tuplestore_putvalues(f->store, f->desc, (Datum *) values,
							 (bool *) nulls);
		return;
	}
	hoff = MAXALIGN(SizeofMinimalTupleHeader +
					(hasnull ? BITMAPLEN(f->natts) : 0));
	len = hoff + datalen;
	if (len > f->bufsize)
	{
		f->bufsize = Max(len, f->bufsize * 2);
		pfree(f->buf);
		f->buf = palloc(f->bufsize);
	}
	memset(f->buf, 0, len);
	tup = (MinimalTuple) f->buf;
	tup->t_len = len;
	HeapTupleHeaderSetNatts(tup, f->natts);
	tup->t_hoff = hoff + MINIMAL_TUPLE_OFFSET;
	tup->t_infomask = fill_data(f, values, nulls, f->buf + hoff,
								hasnull ? tup->t_bits : NULL);
#ifdef USE_ASSERT_CHECKING
	{
		MinimalTuple check = NG_FORM_MINIMAL_TUPLE(f->desc, (Datum *) values,
												   (bool *) nulls);

		Assert(check->t_len == len && memcmp(check, tup, len) == 0);
		pfree(check);
	}
#endif
	ExecStoreMinimalTuple(tup, f->slot, false);
	tuplestore_puttupleslot(f->store, f->slot);
	ExecClearTuple(f->slot);
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
