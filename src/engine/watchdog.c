/*
 * The timer behind AUTOGRAPH_FLUSH_US. Held work must not wait for an
 * operation that may never come (a program spinning on host-mapped memory
 * that a held kernel would write): a background thread advances a tick every
 * quarter period, and any stream whose held work has seen no new operation for
 * four ticks gets it submitted. The launch path only reads the tick, so it
 * needs no clock. The thread is started when a stream first learns a
 * sequence, before anything can be held; if it cannot be started, nothing is
 * ever held. When no hold has begun for a while it sleeps until one does, so
 * an idle program is not woken thousands of times a second. Signals blocked.
 */
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "config.h"
#include "engine/internal.h"

#define TICKS 4          /* ticks per AUTOGRAPH_FLUSH_US */
#define IDLE_TICKS 256   /* ticks without a new hold before the thread sleeps */

uint64_t ag_watchdog_tick;
int ag_watchdog_running;
static int sleeping;
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;

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

/* Sleeps until a hold begins; the hold's side checks `sleeping` after counting itself. */
static void idle(void)
{
	pthread_mutex_lock(&idle_lock);
	__atomic_store_n(&sleeping, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&ag_hold_streams, __ATOMIC_SEQ_CST))
		pthread_cond_wait(&idle_cond, &idle_lock);
	__atomic_store_n(&sleeping, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&idle_lock);
}

void ag_watchdog_wake(void)
{
	if (!__atomic_load_n(&sleeping, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&idle_lock);
	pthread_cond_signal(&idle_cond);
	pthread_mutex_unlock(&idle_lock);
}

static void *run(void *arg)
{
	(void)arg;
	long quarter = ag_opt.num[AG_OPT_FLUSH_US] * 1000 / TICKS;
	struct timespec ts = {quarter / 1000000000, quarter % 1000000000};
	uint64_t begins = 0, quiet = 0;
	for (;;) {
		nanosleep(&ts, NULL);
		uint64_t now = __atomic_add_fetch(&ag_watchdog_tick, 1, __ATOMIC_ACQ_REL);
		if (__atomic_load_n(&ag_hold_streams, __ATOMIC_ACQUIRE))
			ag_stream_for_each(expire, &now);
		uint64_t b = __atomic_load_n(&ag_hold_begins, __ATOMIC_RELAXED);
		quiet = b == begins ? quiet + 1 : 0;
		begins = b;
		if (quiet >= IDLE_TICKS && !__atomic_load_n(&ag_hold_streams, __ATOMIC_ACQUIRE)) {
			idle();
			quiet = 0;
		}
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
	int ok = pthread_attr_init(&attr) == 0;
	if (ok) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		ok = pthread_create(&tid, &attr, run, NULL) == 0;
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	__atomic_store_n(&ag_watchdog_running, ok, __ATOMIC_RELEASE);
}

int ag_watchdog_start(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, start);
	return __atomic_load_n(&ag_watchdog_running, __ATOMIC_ACQUIRE);
}
