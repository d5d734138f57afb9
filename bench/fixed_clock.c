/*
 * bench/fixed_clock.c -- a clock that counts readings, for the callgrind
 * part (bench/callgrind.py preloads it into postgres --single under
 * valgrind).
 *
 * Work that runs by the clock (core's flush of pending statistics at most
 * once a second, our maintenance once a second) runs under valgrind some 50
 * times as often per statement as natively, and how often depends on how
 * fast valgrind ran, that is on the machine's load: two runs of the same
 * input then differ by thousands of instructions per statement.  With this
 * library preloaded, clock_gettime and gettimeofday return a time that
 * starts at a fixed instant and advances by NG_CLOCK_STEP_NS nanoseconds
 * (default 1000) at each reading, whatever the real time: the process sees
 * the same times, and so does the same work, in every run.
 *
 *   cc -shared -fPIC -O2 -o fixed_clock.so bench/fixed_clock.c
 *   LD_PRELOAD=./fixed_clock.so [NG_CLOCK_STEP_NS=N] postgres --single ...
 *
 * Only calls through the dynamic linker are seen (postgres's own); the
 * kernel's timers (setitimer) still run on the real time.  Every clock
 * (realtime, monotonic, ...) reads the one counter.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

/* 2026-01-01 00:00:00 UTC, in nanoseconds since the epoch */
#define FIXED_CLOCK_START ((uint64_t) 1767225600 * 1000000000)

static uint64_t fixed_clock_readings;
static uint64_t fixed_clock_step;

/* the next reading, in nanoseconds since the epoch */
static uint64_t
fixed_clock_next(void)
{
	uint64_t	n;

	if (fixed_clock_step == 0)
	{
		const char *s = getenv("NG_CLOCK_STEP_NS");
		uint64_t	step = s ? strtoull(s, NULL, 10) : 0;

		fixed_clock_step = step > 0 ? step : 1000;
	}
	n = __atomic_fetch_add(&fixed_clock_readings, 1, __ATOMIC_RELAXED);
	return FIXED_CLOCK_START + n * fixed_clock_step;
}

int
clock_gettime(clockid_t clk, struct timespec *tp)
{
	uint64_t	ns = fixed_clock_next();

	(void) clk;
	tp->tv_sec = (time_t) (ns / 1000000000);
	tp->tv_nsec = (long) (ns % 1000000000);
	return 0;
}

int
gettimeofday(struct timeval *tv, void *tz)
{
	uint64_t	ns = fixed_clock_next();

	(void) tz;
	tv->tv_sec = (time_t) (ns / 1000000000);
	tv->tv_usec = (long) (ns % 1000000000 / 1000);
	return 0;
}
