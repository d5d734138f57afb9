/*-------------------------------------------------------------------------
 *
 * persist_contrib.h
 *		contrib's saved statistics (persist_contrib.c): which saved file
 *		the keeper restores at start, contrib's file imported, and written
 *		in contrib's format at a clean shutdown.
 *
 * Every function here is called by the keeper and holds no lock of ours
 * when called; restoring takes partition locks as persist_read.c does.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_PERSIST_CONTRIB_H
#define NG_PERSIST_CONTRIB_H

#include "storage/spin.h"

#include "counters.h"

#pragma GCC visibility push(hidden)

/* contrib's saved file, in the data directory */
#define NG_CONTRIB_FILE		"pg_stat/pg_stat_statements.stat"


/* ---- contrib's format (persist_contrib_format.c) ---- */

#define NG_CONTRIB_MAGIC		0x20220408
/* the major as contrib's header has it: 1500 for 15 */
#define NG_CONTRIB_MAJOR		(PG_VERSION_NUM / 100)
#define NG_CONTRIB_HEAD_SIZE	(3 * sizeof(uint32))	/* magic, major, count */

/* contrib's hash key */
typedef struct ContribKey
{
	Oid			userid;
	Oid			dbid;
	uint64		queryid;
	bool		toplevel;
} ContribKey;

StaticAssertDecl(sizeof(ContribKey) == 24, "contrib's key is 24 bytes");

/* what follows an entry's counters on 15 and 16 */
typedef struct ContribTail15
{
	Size		query_offset;
	int			query_len;
	int			encoding;
	slock_t		mutex;
} ContribTail15;

/* what follows an entry's counters from 17 on */
typedef struct ContribTail17
{
	Size		query_offset;
	int			query_len;
	int			encoding;
	TimestampTz stats_since;
	TimestampTz minmax_stats_since;
	slock_t		mutex;
} ContribTail17;

/* the figures after the entries */
typedef struct ContribGlobal
{
	int64		dealloc;
	TimestampTz stats_reset;
} ContribGlobal;

/* one major's entry layout */
typedef struct ContribLayout
{
	const int16 *words;
	int			nwords;
	bool		since;			/* stats_since, minmax_stats_since */
	size_t		entry_size;
} ContribLayout;

/* an entry as read from the file, or to be written */
typedef struct ContribEntry
{
	ContribKey	key;
	NgCounters	counters;
	double		usage;
	ContribTail17 tail;			/* 15, 16: the times are 0 */
	const char *query;			/* query_len bytes, then a zero byte */
} ContribEntry;

extern bool ng_contrib_layout(ContribLayout *l);
extern void ng_contrib_decode(const ContribLayout *l, const char *p,
							  ContribEntry *e);
extern void ng_contrib_encode(const ContribLayout *l, const ContribEntry *e,
							  char *out);

/* ---- contrib's file read and imported (persist_contrib.c) ---- */

extern void ng_persist_restore_saved(void);
extern void ng_contrib_discard_file(void);

/* ---- contrib's file written (persist_contrib_write.c) ---- */

extern bool ng_contrib_dump(uint64 *size, uint32 *crc);

#pragma GCC visibility pop

#endif							/* NG_PERSIST_CONTRIB_H */
