/*-------------------------------------------------------------------------
 *
 * hist.h
 *		The latency histograms' buckets (hist.c): the bucket of a duration,
 *		a bucket's lower bound, percentiles of a counter set's histogram.
 *		The buckets' definition (NG_HIST_*) is in counters.h, with the
 *		histograms themselves.
 *
 * Locks: none; callers own the counters they pass.  ng_hist_bucket builds
 * its table on first use (backend-local memory, no allocation).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NG_HIST_H
#define NG_HIST_H

#include "counters.h"

extern int	ng_hist_bucket(double ms);
extern double ng_hist_lower(int bucket);
extern bool ng_hist_percentiles(const NgCounters *c, int kind,
								const double *fractions, int nfractions,
								double *ms);
extern int	ng_hist_check(void);

#endif							/* NG_HIST_H */
