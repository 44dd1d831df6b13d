/*
 * Boundaries and the order between streams. Held work is submitted, in its
 * original order, before anything that could observe or reorder it: a
 * barrier-class call, a synchronizing call or query, an operation the engine
 * does not record on the same stream, an operation on a stream it is
 * implicitly ordered with (the legacy default stream against blocking
 * streams), an event wait. Every boundary also ends the segment the history
 * is observing. After a synchronizing call, an error that held work met when
 * it was flushed is handed back here: by the stream's own synchronize, or by a
 * context synchronize (whose wrapper is here), never by another call.
 */
#include <sched.h>
#include <time.h>

#include "driver/real.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/trace.h"

#define EXIT_WAIT_NS 200000000L /* how long exit waits for another thread's stream lock */

struct flush_filter {
	const struct ag_stream *except;
	int legacy_only, blocking_only;
	enum ag_flush why;
};

static void flush_matching(struct ag_stream *st, void *arg)
{
	const struct flush_filter *f = arg;
	if (st == f->except || !__atomic_load_n(&st->holding, __ATOMIC_ACQUIRE))
		return;
	if ((f->legacy_only && !st->legacy) || (f->blocking_only && (st->legacy || !st->blocking)))
		return;
	ag_stream_lock(st);
	ag_hold_flush(st, f->why);
	ag_stream_unlock(st);
}

/*
 * At exit, a stream's lock may be held by this very thread (exit() from a
 * signal handler that interrupted the engine) or by a thread that will never
 * run again: waiting would hang the exit (issue 8, pattern 7). Such a stream
 * is waited for a bounded time, then left; its held work is lost as it would
 * be if the program had exited inside the driver.
 */
static int lock_for_exit(struct ag_stream *st)
{
	if (st == ag_stream_locked)
		return 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!ag_stream_trylock(st)) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > EXIT_WAIT_NS)
			return 0;
		sched_yield();
	}
	return 1;
}

void ag_order_flush_at_exit(void)
{
	if (!__atomic_load_n(&ag_hold_streams, __ATOMIC_ACQUIRE) || !ag_stream_try_registry())
		return;
	for (struct ag_stream *st = ag_stream_all(); st; st = st->next_all) {
		if (!__atomic_load_n(&st->holding, __ATOMIC_ACQUIRE) || !lock_for_exit(st))
			continue;
		ag_hold_flush(st, AG_FLUSH_BOUNDARY);
		ag_stream_unlock(st);
	}
	ag_stream_unlock_registry();
}

/* Held records of ev on other streams go first: one event's records never change order. */
static void flush_records_of(struct ag_stream *st, void *arg)
{
	const struct ag_call *c = arg;
	if (!__atomic_load_n(&st->holding, __ATOMIC_ACQUIRE) || st->handle == c->stream)
		return;
	ag_stream_lock(st);
	for (uint32_t i = 0; st->held_seq && i < st->held_n; i++) {
		const struct ag_call *h = &st->held_seq->ops[i].call;
		if (h->kind == AG_OP_EVENT && ag_op_event(st->held[i]) == c->u.event.ev) {
			ag_hold_flush(st, AG_FLUSH_BOUNDARY);
			break;
		}
	}
	ag_stream_unlock(st);
}

void ag_order_event_record(const struct ag_call *c)
{
	if (__atomic_load_n(&ag_hold_streams, __ATOMIC_ACQUIRE))
		ag_stream_for_each(flush_records_of, (void *)c);
}

/* The program's own graph may wait on events that held work on any stream records. */
void ag_engine_graph_launch(CUstream s, int per_thread)
{
	if (ag_trace_active)
		ag_trace_order(AG_TR_GRAPH_LAUNCH, s, per_thread);
	ag_order_flush_all(AG_FLUSH_BOUNDARY);
	ag_order_stream_op(s, per_thread);
}

void ag_order_flush_all(enum ag_flush why)
{
	if (!__atomic_load_n(&ag_hold_streams, __ATOMIC_ACQUIRE))
		return;
	struct flush_filter f = {NULL, 0, 0, why};
	ag_stream_for_each(flush_matching, &f);
}

/*
 * Work on the legacy default stream waits for earlier work on every blocking
 * stream, and the other way round: such held work must go first. st is NULL
 * for the per-thread default stream, which behaves as a blocking stream.
 */
void ag_order_others(const struct ag_stream *st)
{
	struct flush_filter f = {st, 0, 0, AG_FLUSH_BOUNDARY};
	if (st && st->legacy) {
		if (!ag_hold_blocking())
			return;
		f.blocking_only = 1;
	} else if (!st || st->blocking) {
		if (!ag_hold_legacy())
			return;
		f.legacy_only = 1;
	} else {
		return;
	}
	ag_stream_for_each(flush_matching, &f);
}

void ag_order_barrier(void)
{
	ag_history_boundary_all();
	ag_order_flush_all(AG_FLUSH_BOUNDARY);
}

void ag_engine_barrier(void)
{
	if (ag_trace_active)
		ag_trace_order(AG_TR_BARRIER, NULL, 0);
	ag_order_barrier();
}

void ag_order_stream_op(CUstream s, int per_thread)
{
	if (ag_engine_is_off())
		return;
	struct ag_stream *st = ag_stream_of(s, per_thread, 0);
	if (__atomic_load_n(&ag_hold_streams, __ATOMIC_ACQUIRE))
		ag_order_others(st);
	if (!st)
		return;
	ag_stream_lock(st);
	ag_hold_flush(st, AG_FLUSH_BOUNDARY);
	ag_history_boundary(st);
	ag_stream_unlock(st);
}

void ag_engine_stream_op(CUstream s, int per_thread)
{
	if (ag_trace_active)
		ag_trace_order(AG_TR_STREAM_OP, s, per_thread);
	ag_order_stream_op(s, per_thread);
}

void ag_engine_sync_stream(CUstream s, int per_thread)
{
	if (ag_trace_active)
		ag_trace_order(AG_TR_SYNC_STREAM, s, per_thread);
	struct ag_stream *st = ag_stream_of(s, per_thread, 0);
	if (st) /* before held work is submitted: a held copy counts as staged before the call */
		ag_stage_sync_begin(st);
	if (st && !st->legacy)
		ag_order_stream_op(s, per_thread);
	else
		ag_order_barrier();
}

struct take {
	CUcontext ctx; /* NULL: any stream's */
	CUresult rc;
};

static void take_error(struct ag_stream *st, void *arg)
{
	struct take *t = arg;
	if (__atomic_load_n(&st->pending, __ATOMIC_RELAXED) == CUDA_SUCCESS || (t->ctx && st->ctx != t->ctx))
		return;
	ag_stream_lock(st);
	CUresult e = ag_hold_take_error(st);
	if (t->rc == CUDA_SUCCESS)
		t->rc = e;
	ag_stream_unlock(st);
}

/*
 * A kept error is a submission-time error: without the library the call that
 * made it would have returned it, and no other call. It is handed to the
 * stream's own next synchronizing call, or to a context synchronize (below),
 * the calls that wait for that stream's work. The other calls that wait
 * (per_thread < 0: event queries, synchronizes and elapsed times, synchronous
 * copies and sets) flushed held work but take no stream's error: an event
 * query must not return an unrelated stream's error, and that stream's own
 * synchronize would then have found nothing (issue 8, item 2). Sticky errors
 * need no hand-off: the driver returns them from every later call.
 */
CUresult ag_engine_sync_done(CUresult rc, CUstream s, int per_thread)
{
	ag_engine_status(rc);
	if (rc != CUDA_SUCCESS || per_thread < 0)
		return rc;
	struct ag_stream *st = ag_stage_began() && !ag_engine_is_off() ? ag_stream_of(s, per_thread, 0) : NULL;
	if (st)
		ag_stage_sync_done(st);
	if (!__atomic_load_n(&ag_hold_errors, __ATOMIC_ACQUIRE))
		return rc;
	if (!st)
		st = ag_stream_of(s, per_thread, 0);
	struct take t = {NULL, rc};
	if (st)
		take_error(st, &t);
	return t.rc;
}

/* Waits for every stream of the context: their kept errors come back here. */
static CUresult ctx_sync_done(CUresult rc, CUcontext ctx)
{
	ag_engine_status(rc);
	int errors = __atomic_load_n(&ag_hold_errors, __ATOMIC_ACQUIRE);
	if (rc != CUDA_SUCCESS || (!errors && !ag_stage_retired()))
		return rc;
	if (!ctx && (AG_REAL(cuCtxGetCurrent)(&ctx) != CUDA_SUCCESS || !ctx))
		return rc;
	ag_stage_ctx_idle(ctx);
	if (!errors)
		return rc;
	struct take t = {ctx, rc};
	ag_stream_for_each(take_error, &t);
	return t.rc;
}

/* cuCtxSynchronize (src/hook/classes.txt: custom), the one call that waits for all of a
 * context's streams; _v2 names the context (NULL: the current one). */
CUresult ag_on_cuCtxSynchronize(void)
{
	ag_engine_caller(AG_FN_cuCtxSynchronize);
	ag_engine_barrier();
	return ctx_sync_done(AG_REAL(cuCtxSynchronize)(), NULL);
}

/* CUDA 13 added the variant; a build against 12.x headers has no wrapper for it to call this. */
#if CUDA_VERSION >= 13000
CUresult ag_on_cuCtxSynchronize_v2(CUcontext ctx)
{
	ag_engine_caller(AG_FN_cuCtxSynchronize_v2);
	ag_engine_barrier();
	return ctx_sync_done(AG_REAL(cuCtxSynchronize_v2)(ctx), ctx);
}
#endif
