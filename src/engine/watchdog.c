/*
 * The timer behind AUTOGRAPH_FLUSH_US. Held work must not wait for an
 * operation that may never come (a program spinning on host-mapped memory
 * that a held kernel would write): a background thread advances a tick every
 * quarter period, and any stream whose held work has seen no new operation for
 * four ticks gets it submitted. The launch path only reads the
 * tick, so it needs no clock. Started at the first hold; signals blocked.
 */
#include <signal.h>
#include <time.h>

#include "config.h"
#include "engine/internal.h"
#include "stats.h"

#define TICKS 4

uint64_t ag_watchdog_tick;

static void expire(struct ag_stream *st, void *arg)
{
	uint64_t now = *(const uint64_t *)arg;
	if (!__atomic_load_n(&st->holding, __ATOMIC_ACQUIRE) ||
	    now - __atomic_load_n(&st->hold_tick, __ATOMIC_RELAXED) < TICKS || !ag_stream_trylock(st))
		return;
	if (st->held_seq && now - st->hold_tick >= TICKS)
		ag_hold_flush(st, AG_FLUSH_TIMEOUT);
	ag_stream_unlock(st);
}

static void *run(void *arg)
{
	(void)arg;
	long quarter = ag_opt.num[AG_OPT_FLUSH_US] * 1000 / TICKS;
	struct timespec ts = {quarter / 1000000000, quarter % 1000000000};
	for (;;) {
		nanosleep(&ts, NULL);
		uint64_t now = __atomic_add_fetch(&ag_watchdog_tick, 1, __ATOMIC_ACQ_REL);
		if (__atomic_load_n(&ag_hold_streams, __ATOMIC_ACQUIRE))
			ag_stream_for_each(expire, &now);
	}
	return NULL;
}

static void start(void)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t tid;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_create(&tid, &attr, run, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void ag_watchdog_start(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, start);
}
