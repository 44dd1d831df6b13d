/*
 * The engine's front door and lifecycle. For each stream operation it decides
 * whether the engine looks at it at all (not while off, not while the program
 * captures, never on the per-thread default stream: no other thread could
 * name it to submit held work), orders it after held work of streams it is
 * implicitly ordered with, and hands it to the stream's hold logic under the
 * stream's lock. It also owns what happens at the process's and the
 * program's turning points: init, the first hold (exit flush, timer), the
 * program's own capture, teardown of handles, fork and exit.
 */
#include <stdlib.h>

#include "config.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "nvtx.h"

static int capture_depth;
static int engine_off;
static int holds_began;

int ag_engine_is_off(void)
{
	return __atomic_load_n(&engine_off, __ATOMIC_ACQUIRE);
}

/* Registered at the first hold, so it runs before exit handlers registered earlier (cudart's). */
static void exit_flush(void)
{
	ag_order_flush_all(AG_FLUSH_BOUNDARY);
	__atomic_store_n(&engine_off, 1, __ATOMIC_RELEASE);
}

static void first_hold(void)
{
	if (__atomic_exchange_n(&holds_began, 1, __ATOMIC_ACQ_REL))
		return;
	atexit(exit_flush);
	ag_watchdog_start();
}

static void lock(struct ag_stream *st)
{
	ag_stream_lock(st);
	ag_stream_locked = st;
}

static void unlock(struct ag_stream *st)
{
	ag_stream_locked = NULL;
	ag_stream_unlock(st);
}

CUresult ag_engine_submit(const struct ag_call *c)
{
	int off = ag_engine_is_off();
	int unified_ok = 0;
	if (c->kind == AG_OP_COPY && c->api == AG_COPY_UNIFIED && (!off || ag_opt.num[AG_OPT_STATS]))
		unified_ok = ag_op_unified_copy_nodeable(c);
	struct ag_stream *st = NULL;
	if (!off && !__atomic_load_n(&capture_depth, __ATOMIC_ACQUIRE)) {
		st = ag_stream_of(c->stream, c->per_thread, 1);
		if (__atomic_load_n(&ag_hold_streams, __ATOMIC_ACQUIRE))
			ag_order_others(st);
	}
	if (st) {
		lock(st);
		if (ag_history_alloc(st)) {
			CUresult rc = ag_hold_submit(st, c, unified_ok);
			int held = st->held_seq != NULL;
			unlock(st);
			if (held && !__atomic_load_n(&holds_began, __ATOMIC_RELAXED))
				first_hold();
			return rc;
		}
		unlock(st);
	}
	if (c->kind == AG_OP_KERNEL && (!off || ag_opt.num[AG_OPT_STATS]))
		ag_hold_kernel_of(c);
	return ag_call_submit(c);
}

CUresult ag_engine_capture_began(CUresult rc)
{
	if (rc == CUDA_SUCCESS)
		__atomic_add_fetch(&capture_depth, 1, __ATOMIC_ACQ_REL);
	return rc;
}

/* A capture ends whether it succeeded or was invalidated; other errors mean it was not ours. */
CUresult ag_engine_capture_ended(CUresult rc)
{
	if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED &&
	    rc != CUDA_ERROR_STREAM_CAPTURE_UNJOINED)
		return rc;
	int d = __atomic_load_n(&capture_depth, __ATOMIC_ACQUIRE);
	while (d > 0 && !__atomic_compare_exchange_n(&capture_depth, &d, d - 1, 0, __ATOMIC_ACQ_REL,
						     __ATOMIC_ACQUIRE))
		;
	return rc;
}

static void forget_stream(struct ag_stream *st, void *arg)
{
	(void)arg;
	ag_stream_lock(st);
	ag_hold_flush(st, AG_FLUSH_BOUNDARY);
	ag_seq_forget_all(st);
	ag_stream_unlock(st);
}

void ag_engine_forget_all(void)
{
	ag_history_boundary_all();
	ag_stream_for_each(forget_stream, NULL);
	ag_kern_forget_all();
}

void ag_engine_stream_destroyed(CUstream s)
{
	if (ag_engine_is_off())
		return;
	struct ag_stream *st = ag_stream_of(s, 0, 0);
	if (!st || st->legacy)
		return;
	forget_stream(st, NULL);
	ag_stream_remove(st);
}

void ag_engine_init(void)
{
	engine_off = !ag_opt.num[AG_OPT_ENABLE];
	ag_nvtx_init(ag_opt.num[AG_OPT_NVTX]);
}

void ag_engine_at_exit(void)
{
	exit_flush();
}

void ag_engine_before_fork(void)
{
	ag_order_flush_all(AG_FLUSH_BOUNDARY);
}

/* The driver does not work in a forked child: the library only passes calls through there. */
void ag_engine_after_fork_child(void)
{
	engine_off = 1;
	ag_hold_after_fork_child();
}
