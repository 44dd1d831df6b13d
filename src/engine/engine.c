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
#include "driver/real.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/trace.h"
#include "nvtx.h"
#include "stats.h"

static int capture_depth;
static int engine_off;
static int holds_began;
static int faulted; /* a device fault was reported: nothing is held until a context goes */

int ag_engine_is_off(void)
{
	return __atomic_load_n(&engine_off, __ATOMIC_ACQUIRE);
}

/* The errors after which the driver fails every later call in the context (a device fault). */
static int sticky(CUresult rc)
{
	switch (rc) {
	case CUDA_ERROR_ILLEGAL_ADDRESS:
	case CUDA_ERROR_LAUNCH_TIMEOUT:
	case CUDA_ERROR_ASSERT:
	case CUDA_ERROR_HARDWARE_STACK_ERROR:
	case CUDA_ERROR_ILLEGAL_INSTRUCTION:
	case CUDA_ERROR_MISALIGNED_ADDRESS:
	case CUDA_ERROR_INVALID_ADDRESS_SPACE:
	case CUDA_ERROR_INVALID_PC:
	case CUDA_ERROR_LAUNCH_FAILED:
	case CUDA_ERROR_ECC_UNCORRECTABLE:
		return 1;
	default:
		return 0;
	}
}

/*
 * After a device fault every driver call returns the sticky error; a held
 * call would return CUDA_SUCCESS (issue 8, pattern 9). Once the driver has
 * reported one, the engine holds nothing more, and held work is flushed at
 * its stream's next operation, until a context is destroyed or reset. Only
 * sets a flag: callers may hold a stream's lock.
 */
CUresult ag_engine_status(CUresult rc)
{
	if (rc != CUDA_SUCCESS && sticky(rc))
		__atomic_store_n(&faulted, 1, __ATOMIC_RELEASE);
	return rc;
}

/*
 * Registered at the first hold, so it runs before exit handlers registered earlier
 * (cudart's). Not when exit() came from a signal handler that interrupted this
 * thread inside a driver call (issue 8, pattern 7): the driver's own locks may be
 * held by the interrupted call, and submitting held work would wait for them
 * forever. The held work is lost then, as it would be had the program exited
 * inside the driver without the library.
 */
static void exit_flush(void)
{
	if (!ag_stats_in_call())
		ag_order_flush_at_exit();
	__atomic_store_n(&engine_off, 1, __ATOMIC_RELEASE);
}

static void first_hold(void)
{
	if (__atomic_exchange_n(&holds_began, 1, __ATOMIC_ACQ_REL))
		return;
	atexit(exit_flush);
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

/*
 * The stream is idle (policy.c), holding nothing: the call goes to the driver as made, not
 * described, detected or staged; its kernel is looked up only if statistics or a report show it.
 */
static CUresult submit_unobserved(const struct ag_call *c)
{
	struct ag_kern *k = NULL;
	if (c->kind == AG_OP_KERNEL && (ag_opt.num[AG_OPT_STATS] || ag_engine_callers_wanted))
		k = ag_hold_kernel_of(c);
	ag_account_unobserved(k);
	ag_stats_add(AG_S_OPS_UNOBSERVED, 1);
	return ag_engine_status(ag_call_submit(c));
}

static CUresult submit(const struct ag_call *c)
{
	int off = ag_engine_is_off();
	int unified_ok = 0;
	if (c->kind == AG_OP_COPY && c->api == AG_COPY_UNIFIED && (!off || ag_opt.num[AG_OPT_STATS]))
		unified_ok = ag_copy_unified_nodeable(c);
	struct ag_stream *st = NULL;
	int looks = !off && !__atomic_load_n(&capture_depth, __ATOMIC_SEQ_CST) &&
		    !__atomic_load_n(&faulted, __ATOMIC_ACQUIRE);
	if (looks || __atomic_load_n(&ag_hold_streams, __ATOMIC_ACQUIRE))
		st = ag_stream_of(c->stream, c->per_thread, looks);
	if (__atomic_load_n(&ag_hold_streams, __ATOMIC_ACQUIRE)) {
		ag_order_others(st);
		if (c->kind == AG_OP_EVENT)
			ag_order_event_record(c);
	}
	/*
	 * Not looked at (off, a capture in progress, a device fault): forwarded,
	 * but never past work this stream still holds. A capture that began on
	 * another thread flushes every stream, and this call may come before that
	 * flush reached this one (issue 8, pattern 5).
	 */
	if (!looks && st && __atomic_load_n(&st->holding, __ATOMIC_ACQUIRE)) {
		lock(st);
		ag_hold_flush(st, AG_FLUSH_BOUNDARY);
		unlock(st);
	}
	if (!looks)
		st = NULL;
	if (st) {
		lock(st);
		if (st->unobserved && !st->held_seq) {
			st->unobserved--;
			unlock(st);
			return submit_unobserved(c);
		}
		if (ag_history_alloc(st)) {
			struct ag_call staged;
			const struct ag_call *program = c;
			int out = 0;
			if (c->kind == AG_OP_COPY && ag_stage_copy(st, c, &staged)) {
				c = &staged;
				out = c->api == AG_COPY_DTOH;
			}
			CUresult rc = ag_hold_submit(st, c, unified_ok);
			/* The hold counted itself (a full barrier) before this load: either the
			 * capturing thread's flush sees it or this thread sees the capture. */
			if (st->held_seq && (out || __atomic_load_n(&capture_depth, __ATOMIC_SEQ_CST)))
				ag_hold_flush(st, AG_FLUSH_BOUNDARY);
			if (out) /* the call waits for the stream: no sequence goes past it */
				ag_history_boundary(st);
			int held = st->held_seq != NULL;
			unlock(st);
			if (out)
				return ag_stage_copy_out(st, program, c, rc);
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

CUresult ag_engine_submit(const struct ag_call *c)
{
	CUresult rc = submit(c);
	if (__builtin_expect(ag_trace_active, 0))
		ag_trace_op(c, rc);
	return rc;
}

/*
 * Counted before the call and taken back if it fails: counted after, a hold
 * another thread started meanwhile would survive into the capture and later
 * work on its stream would overtake it (issue 8, pattern 5). A hold that began
 * just as the count rose is flushed by its own thread (ag_engine_submit).
 */
void ag_engine_capture_begin(void)
{
	if (ag_trace_active)
		ag_trace_order(AG_TR_CAPTURE_BEGIN, NULL, 0);
	__atomic_add_fetch(&capture_depth, 1, __ATOMIC_SEQ_CST);
	ag_order_barrier();
}

CUresult ag_engine_capture_began(CUresult rc)
{
	if (ag_trace_active)
		ag_trace_values(AG_TR_CAPTURE_BEGAN, (uint64_t)rc, 0, 1);
	if (rc != CUDA_SUCCESS)
		__atomic_sub_fetch(&capture_depth, 1, __ATOMIC_ACQ_REL);
	return rc;
}

/* A capture ends whether it succeeded or was invalidated; other errors mean it was not ours. */
CUresult ag_engine_capture_ended(CUresult rc)
{
	if (ag_trace_active)
		ag_trace_values(AG_TR_CAPTURE_ENDED, (uint64_t)rc, 0, 1);
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

struct range {
	uintptr_t lo, hi;
};

static void forget_touching(struct ag_stream *st, void *arg)
{
	const struct range *r = arg;
	ag_stream_lock(st);
	ag_hold_flush(st, AG_FLUSH_BOUNDARY);
	ag_seq_forget_touching(st, r->lo, r->hi);
	ag_history_forget_touching(st, r->lo, r->hi);
	ag_stream_unlock(st);
}

void ag_engine_memory_gone(uintptr_t lo, uintptr_t hi)
{
	if (ag_trace_active)
		ag_trace_values(AG_TR_MEMORY_GONE, lo, hi, 2);
	ag_order_barrier();
	struct range r = {lo, hi};
	ag_stream_for_each(forget_touching, &r);
}

static void event_destroying(struct ag_stream *st, void *ev)
{
	ag_stream_lock(st);
	for (struct ag_seq *s = st->seqs; s; s = s->next)
		ag_graph_event_destroying(st, s, ev);
	ag_stream_unlock(st);
}

void ag_engine_event_destroying(CUevent ev)
{
	if (__atomic_load_n(&ag_graph_event_seqs, __ATOMIC_ACQUIRE))
		ag_stream_for_each(event_destroying, ev);
}

void ag_engine_event_destroyed(CUevent ev)
{
	if (ag_trace_active)
		ag_trace_values(AG_TR_EVENT_DESTROYED, (uintptr_t)ev, 0, 1);
	ag_facts_event_forget(ev);
}

/* The allocation's extent, asked before it goes; unknown: every copy and memset. */
void ag_engine_device_free(CUdeviceptr p)
{
	CUdeviceptr base = 0;
	size_t size = 0;
	if (p && AG_REAL(cuMemGetAddressRange_v2)(&base, &size, p) == CUDA_SUCCESS)
		ag_engine_memory_gone(base, base + size);
	else
		ag_engine_memory_gone(0, UINTPTR_MAX);
}

static void forget_all(void)
{
	ag_history_boundary_all();
	ag_stream_for_each(forget_stream, NULL);
	ag_kern_forget_all();
}

void ag_engine_forget_all(void)
{
	if (ag_trace_active)
		ag_trace_order(AG_TR_FORGET_ALL, NULL, 0);
	forget_all();
}

/* A destroyed stream's state is freed: using the handle again is the program's error, and a
 * program creating and destroying streams in a loop must not grow (issue 8, pattern 11). */
static void free_stream(struct ag_stream *st)
{
	ag_stage_release(st);
	ag_seq_forget_all(st);
	ag_history_free(st);
	free(st);
}

void ag_engine_stream_destroyed(CUstream s)
{
	if (ag_trace_active)
		ag_trace_order(AG_TR_STREAM_DESTROYED, s, 0);
	if (ag_engine_is_off())
		return;
	struct ag_stream *st = ag_stream_of(s, 0, 0);
	if (!st || st->legacy)
		return;
	forget_stream(st, NULL);
	ag_stream_remove(st);
	free_stream(st);
}

/*
 * A context goes away: its streams' states go with it, so that a new stream
 * given a reused handle is learned afresh (its own flags and context), not
 * taken for the dead one.
 */
static void drop_states(CUcontext ctx)
{
	__atomic_store_n(&faulted, 0, __ATOMIC_RELEASE);
	ag_stage_ctx_gone(ctx);
	if (ag_engine_is_off() || !ctx)
		return;
	struct ag_stream *gone;
	ag_stream_unlink_ctx(ctx, &gone);
	while (gone) {
		struct ag_stream *next = gone->next_all;
		free_stream(gone);
		gone = next;
	}
}

void ag_engine_ctx_destroyed(CUcontext ctx)
{
	if (ag_trace_active)
		ag_trace_values(AG_TR_CTX_DESTROYED, (uintptr_t)ctx, 0, 1);
	forget_all();
	drop_states(ctx);
}

/* A primary context's last reference was released: everything was forgotten before the call. */
void ag_engine_ctx_released(CUcontext ctx)
{
	if (ag_trace_active)
		ag_trace_values(AG_TR_CTX_DESTROYED, (uintptr_t)ctx, 0, 1);
	drop_states(ctx);
}

/* Off first, so that no hold begins after the flush passed its stream; one that began just
 * before is flushed by its stream's next operation (not looked at) or by the timer. */
void ag_engine_stand_aside(void)
{
	__atomic_store_n(&engine_off, 1, __ATOMIC_RELEASE);
	ag_order_barrier();
}

void ag_engine_init(void)
{
	engine_off = !ag_opt.num[AG_OPT_ENABLE];
	ag_nvtx_init(ag_opt.num[AG_OPT_NVTX]);
}

void ag_engine_first_driver_call(void)
{
	ag_trace_open();
}

void ag_engine_at_exit(void)
{
	exit_flush();
	ag_trace_close();
}

void ag_engine_before_fork(void)
{
	ag_order_flush_all(AG_FLUSH_BOUNDARY);
}

/* The driver does not work in a forked child: the library only passes calls through there. */
void ag_engine_after_fork_child(void)
{
	engine_off = 1;
	ag_trace_after_fork_child();
	ag_hold_after_fork_child();
	ag_stage_after_fork_child();
}
