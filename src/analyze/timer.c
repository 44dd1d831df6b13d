/*
 * The AUTOGRAPH_FLUSH_US timer of engine/watchdog.c, driven by the trace's
 * clock instead of a thread: the tick advances with the recorded time between
 * records, and a stream whose held work saw no new operation for four ticks
 * is flushed before the next record is replayed, as the timer thread would
 * have done meanwhile.
 */
#include "analyze/analyze.h"
#include "config.h"
#include "engine/internal.h"

#define TICKS 4 /* ticks per AUTOGRAPH_FLUSH_US, as in watchdog.c */

uint64_t ag_watchdog_tick;
int ag_watchdog_running = 1;

int ag_watchdog_start(void)
{
	return 1;
}

void ag_watchdog_wake(void)
{
}

static void expire(struct ag_stream *st, void *arg)
{
	uint64_t now = *(const uint64_t *)arg;
	if (!st->holding || now - st->hold_tick < TICKS)
		return;
	ag_stream_lock(st);
	if (st->held_seq)
		ag_hold_flush(st, AG_FLUSH_TIMEOUT);
	ag_stream_unlock(st);
}

void ag_an_timer_advance(uint64_t now_us)
{
	uint64_t quarter = (uint64_t)ag_opt.num[AG_OPT_FLUSH_US] / TICKS;
	uint64_t tick = now_us / (quarter ? quarter : 1);
	if (tick <= ag_watchdog_tick)
		return;
	ag_watchdog_tick = tick;
	if (ag_hold_streams)
		ag_stream_for_each(expire, &tick);
}
