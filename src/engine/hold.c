/*
 * One stream's decision for each operation, under the stream's lock: take it
 * as the next expected operation of the held run, start holding a learned
 * sequence, or submit it now and let the history observe it. Completing a
 * held run launches its graph; a divergence, a boundary or the timer flushes
 * the run (resubmits it eagerly, in order). Errors met while flushing are kept
 * for the next synchronizing call (order.c asks for them).
 *
 * Invariants that keep programs correct:
 *  - An operation is held only if it is identical in shape (kernel, launch
 *    configuration, attributes, copy and set parameters) to one that already
 *    succeeded eagerly, so no submission-time error can be hidden; only
 *    kernel argument values may differ, and they are compared byte for byte.
 *  - A failure met while submitting held work is reported by the next
 *    synchronizing call on that stream (or on all work), where eager
 *    execution of an asynchronous failure would have shown up too.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "driver/real.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/op.h"
#include "log.h"
#include "names.h"
#include "nvtx.h"
#include "stats.h"

int ag_hold_streams;
uint64_t ag_hold_begins;
int ag_hold_errors;
static int holding_legacy, holding_blocking;

static const struct {
	enum ag_scalar stat;
	const char *text;
} flush_reason[AG_FLUSH_COUNT] = {
	[AG_FLUSH_SHAPE] = {AG_S_FB_SHAPE, "an operation's shape changed"},
	[AG_FLUSH_ARGS] = {AG_S_FB_ARGS, "arguments changed"},
	[AG_FLUSH_BOUNDARY] = {AG_S_FB_BARRIER, "a barrier or synchronization"},
	[AG_FLUSH_TIMEOUT] = {AG_S_FB_TIMEOUT, "AUTOGRAPH_FLUSH_US passed"},
	[AG_FLUSH_LAUNCH_FAILED] = {AG_S_FB_BUILD, "graph launch failed"},
};

/* Holders that other streams are implicitly ordered with: counted so the check is one load. */
static int *order_counter(const struct ag_stream *st)
{
	return st->legacy ? &holding_legacy : st->blocking ? &holding_blocking : NULL;
}

int ag_hold_legacy(void)
{
	return __atomic_load_n(&holding_legacy, __ATOMIC_ACQUIRE);
}

int ag_hold_blocking(void)
{
	return __atomic_load_n(&holding_blocking, __ATOMIC_ACQUIRE);
}

static void hold_begin(struct ag_stream *st, struct ag_seq *seq)
{
	st->held_seq = seq;
	st->held_n = 0;
	st->ndirty = 0;
	st->run_hash = 0;
	__atomic_store_n(&st->hold_tick, __atomic_load_n(&ag_watchdog_tick, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&st->holding, 1, __ATOMIC_RELEASE);
	ag_history_gap(st); /* the history does not see held operations */
	__atomic_add_fetch(&ag_hold_streams, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ag_hold_begins, ag_hold_begins + 1, __ATOMIC_RELAXED);
	ag_watchdog_wake();
	int *kind = order_counter(st);
	if (kind)
		__atomic_add_fetch(kind, 1, __ATOMIC_ACQ_REL);
	seq->hold_starts++;
	ag_policy_repeating(st);
}

static void hold_end(struct ag_stream *st)
{
	for (uint32_t i = 0; st->ndirty && i < st->held_n; i++)
		st->dirty[i] = 0;
	st->held_seq = NULL;
	st->held_n = 0;
	st->ndirty = 0;
	__atomic_store_n(&st->holding, 0, __ATOMIC_RELEASE);
	int *kind = order_counter(st);
	if (kind)
		__atomic_sub_fetch(kind, 1, __ATOMIC_ACQ_REL);
	__atomic_sub_fetch(&ag_hold_streams, 1, __ATOMIC_ACQ_REL);
}

static void defer_error(struct ag_stream *st, CUresult rc)
{
	if (rc != CUDA_SUCCESS && st->pending == CUDA_SUCCESS) {
		__atomic_store_n(&st->pending, rc, __ATOMIC_RELAXED);
		__atomic_add_fetch(&ag_hold_errors, 1, __ATOMIC_ACQ_REL);
	}
}

CUresult ag_hold_take_error(struct ag_stream *st)
{
	CUresult rc = st->pending;
	if (rc != CUDA_SUCCESS) {
		__atomic_store_n(&st->pending, CUDA_SUCCESS, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&ag_hold_errors, 1, __ATOMIC_ACQ_REL);
	}
	return rc;
}

void ag_hold_flush(struct ag_stream *st, enum ag_flush why)
{
	struct ag_seq *seq = st->held_seq;
	if (!seq)
		return;
	ag_nvtx_push("autograph: fallback");
	CUcontext saved = ag_stream_enter_ctx(st);
	for (uint32_t i = 0; i < st->held_n; i++) {
		CUresult rc = ag_op_submit(&seq->ops[i], st->held[i]);
		defer_error(st, rc);
		if (why == AG_FLUSH_BOUNDARY) {
			ag_history_observe_held(st, &seq->ops[i], st->held[i], st->hold_epoch, rc != CUDA_SUCCESS);
			ag_detect_commit(st);
		}
	}
	ag_stream_leave_ctx(st, saved);
	ag_nvtx_pop();
	ag_stats_add(AG_S_OPS_EAGER, st->held_n);
	ag_stats_add(flush_reason[why].stat, 1);
	ag_account_flushed(st, why);
	AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u: %u held ops submitted eagerly (%s)",
	       (void *)st->handle, seq->id, st->held_n, flush_reason[why].text);
	hold_end(st);
	if (why == AG_FLUSH_TIMEOUT)
		ag_policy_timed_out(st, seq);
}

/*
 * Launches the held run's graph; returns the status the completing call gets.
 * A graph that cannot be launched for want of a variant is not the program's
 * business: the run is resubmitted eagerly. A launch the driver refuses (a
 * sticky error after a device fault, a context going away) is: eager
 * submission would have met that error at one of these calls, so this call
 * returns it, after the held work went to the driver (issue 8, pattern 9).
 */
static CUresult complete(struct ag_stream *st)
{
	struct ag_seq *seq = st->held_seq;
	ag_nvtx_push("autograph: replay");
	struct ag_variant *v = ag_graph_variant(st, seq);
	CUresult rc = CUDA_ERROR_NOT_READY;
	if (v) {
		CUcontext saved = ag_stream_enter_ctx(st);
		rc = AG_REAL(cuGraphLaunch)(v->exec, st->handle);
		ag_stream_leave_ctx(st, saved);
		if (rc == CUDA_SUCCESS)
			ag_policy_replayed(st, seq);
	}
	ag_nvtx_pop();
	if (rc != CUDA_SUCCESS) {
		ag_engine_status(rc);
		ag_hold_flush(st, AG_FLUSH_LAUNCH_FAILED);
		return v ? rc : CUDA_SUCCESS;
	}
	ag_stats_add(AG_S_REPLAYS, 1);
	ag_stats_add(AG_S_OPS_REPLAYED, seq->n);
	hold_end(st);
	return CUDA_SUCCESS;
}

static void diverge(struct ag_stream *st, enum ag_flush why)
{
	struct ag_seq *seq = st->held_seq;
	ag_hold_flush(st, why);
	ag_policy_diverged(st, seq);
}

/* What an operation is, for a log line: a kernel by its demangled name, else its kind. */
static const char *op_name(CUfunction f, unsigned kind, char *buf, size_t len)
{
	static const char *const kinds[] = {"a kernel", "a memset", "a copy", "an event record", "a host function"};
	const struct ag_kern *k = kind == AG_OP_KERNEL ? ag_kern_get(f) : NULL;
	if (k)
		return ag_name_qualified(k->name, buf, len) ? buf : k->name;
	return kind < sizeof kinds / sizeof *kinds ? kinds[kind] : "an operation";
}

/* --log debug: where a held run left its sequence, and the first field that differed. */
static void log_divergence(const struct ag_stream *st, const struct ag_op *e, const struct ag_call *c,
			   enum ag_diverge_field f)
{
	static const char *const field[] = {
		[AG_DIV_KIND] = "the kind of operation", [AG_DIV_KERNEL] = "the kernel",
		[AG_DIV_GRID] = "the grid", [AG_DIV_BLOCK] = "the block", [AG_DIV_SHMEM] = "the shared memory size",
		[AG_DIV_OTHER] = "a copy, set, record or attribute parameter"};
	char want[160], got[160];
	AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u: run diverged at op %u of %u: expected %s, got %s (%s differs)",
	       (void *)st->handle, st->held_seq->id, st->held_n + 1, st->held_seq->n,
	       op_name(e->call.u.kern.f, e->call.kind, want, sizeof want),
	       op_name(c->u.kern.f, c->kind, got, sizeof got), field[f]);
}

/* The held operation's arguments differ from the sequence's: its node will be updated. */
static const uint8_t *take_new_args(struct ag_stream *st, const struct ag_op *e, const uint8_t *args,
				    uint64_t *h)
{
	*h = ag_op_args_hash(e, args);
	st->dirty[st->held_n] = 1;
	st->ndirty++;
	return args;
}

/*
 * A held event record: its node records whatever the handle names when it
 * runs, so the event must exist without timing now; another event than the
 * sequence's, or a new one under its handle, is set on the node. 0 if the
 * run diverged here.
 */
static int event_taken(struct ag_stream *st, const struct ag_op *e, const struct ag_call *c,
		       const uint8_t **args, uint64_t *h)
{
	struct ag_event_arg a;
	struct ag_op in;
	if (!ag_facts_event_arg(c->u.event.ev, &a)) {
		AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u: run diverged at op %u of %u: its event %p has "
		       "timing or is not known", (void *)st->handle, st->held_seq->id, st->held_n + 1,
		       st->held_seq->n, (void *)c->u.event.ev);
		diverge(st, AG_FLUSH_ARGS);
		return 0;
	}
	if (memcmp(e->args, &a, sizeof a) == 0)
		return 1;
	if (!ag_opt.num[AG_OPT_UPDATE] || !ag_op_event_pack(st, &a, &in)) {
		diverge(st, AG_FLUSH_ARGS);
		return 0;
	}
	*args = take_new_args(st, e, in.args, h);
	return 1;
}

/* The next operation of a held sequence: 1 if it was taken (*rc its status), 0 if the
 * sequence diverged. */
static int match(struct ag_stream *st, const struct ag_call *c, CUresult *rc)
{
	struct ag_seq *seq = st->held_seq;
	const struct ag_op *e = &seq->ops[st->held_n];
	if (!ag_op_same_shape(e, c)) {
		enum ag_diverge_field f = ag_account_diverged(e, c);
		if (ag_log_level >= AG_LOG_DEBUG)
			log_divergence(st, e, c, f);
		diverge(st, AG_FLUSH_SHAPE);
		return 0;
	}
	const uint8_t *args = e->args;
	uint64_t h = e->hash;
	if (c->kind == AG_OP_KERNEL && !ag_op_same_args(e->k, c, e->args)) {
		struct ag_op in;
		in.call = *c;
		if (!ag_op_pack(st, c, e->k, &in)) {
			diverge(st, AG_FLUSH_SHAPE);
			return 0;
		}
		if (memcmp(in.args, e->args, e->argbytes) != 0) {
			if (!ag_opt.num[AG_OPT_UPDATE]) {
				diverge(st, AG_FLUSH_ARGS);
				return 0;
			}
			args = take_new_args(st, e, in.args, &h);
		}
	} else if (c->kind == AG_OP_COPY && e->argbytes && !ag_copy_same_args(c, e->args)) {
		struct ag_op in;
		if (!ag_opt.num[AG_OPT_UPDATE] || !ag_copy_addresses_ok(c) || !ag_copy_pack(st, c, &in)) {
			AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u: run diverged at op %u of %u: a copy's new "
			       "addresses are %s", (void *)st->handle, st->held_seq->id, st->held_n + 1,
			       st->held_seq->n, ag_opt.num[AG_OPT_UPDATE] ? "not both in device memory" :
			       "not updated (AUTOGRAPH_UPDATE=0)");
			diverge(st, AG_FLUSH_ARGS);
			return 0;
		}
		args = take_new_args(st, e, in.args, &h);
	} else if (c->kind == AG_OP_EVENT && !event_taken(st, e, c, &args, &h)) {
		return 0;
	}
	st->held[st->held_n++] = args;
	st->run_hash = ag_mix(st->run_hash, h);
	/* The timer measures time without a new operation, not the length of the hold. */
	__atomic_store_n(&st->hold_tick, __atomic_load_n(&ag_watchdog_tick, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	*rc = st->held_n == seq->n ? complete(st) : CUDA_SUCCESS;
	return 1;
}

/*
 * Hashes only propose: the call must equal the sequence's first operation
 * field by field. Its argument values may differ, as any later operation's
 * may (the node is updated), where detection saw them differ between runs
 * (a loop whose first launch passes the step number would otherwise never
 * start) and AUTOGRAPH_UPDATE is on. Elsewhere they must be equal: a shape
 * that recurs inside a step would start holds that diverge.
 */
static int startable(const struct ag_stream *st, const struct ag_seq *seq, const struct ag_op *op,
		     const struct ag_call *c)
{
	const struct ag_op *e = &seq->ops[0];
	if (!ag_policy_allows(st, seq) || e->shape != op->shape || e->argbytes != op->argbytes ||
	    !ag_op_same_shape(e, c))
		return 0;
	if (!op->argbytes || memcmp(e->args, op->args, op->argbytes) == 0)
		return 1;
	/* A copy's new addresses are checked as the driver would at the call (match()). */
	return seq->on_shape && ag_opt.num[AG_OPT_UPDATE] &&
	       (c->kind != AG_OP_COPY || ag_copy_addresses_ok(c));
}

/* Finds the kernel's entry and counts the launch against it. */
struct ag_kern *ag_hold_kernel_of(const struct ag_call *c)
{
	struct ag_kern *k = ag_kern_get(c->u.kern.f);
	if (k)
		__atomic_add_fetch(&k->launches, 1, __ATOMIC_RELAXED);
	return k;
}

static int try_start(struct ag_stream *st, const struct ag_op *op, const struct ag_call *c,
		     CUresult *rc)
{
	if (!op->nodeable || !__atomic_load_n(&ag_watchdog_running, __ATOMIC_RELAXED))
		return 0;
	struct ag_seq *seq = ag_seq_first(st, op->shape);
	struct ag_seq *same = NULL; /* one whose first arguments are the call's too: preferred */
	for (struct ag_seq *s = seq; s && !same; s = s->same_first)
		if (s->ops[0].hash == op->hash && startable(st, s, op, c) &&
		    (!op->argbytes || memcmp(s->ops[0].args, op->args, op->argbytes) == 0))
			same = s;
	while (!same && seq && !startable(st, seq, op, c))
		seq = seq->same_first;
	if (same)
		seq = same;
	if (!seq)
		return 0;
	ag_detect_epoch(st, op->epoch);
	ag_detect_hold_starts(st);
	hold_begin(st, seq);
	st->hold_epoch = op->epoch;
	int dirty = op->argbytes && memcmp(seq->ops[0].args, op->args, op->argbytes) != 0;
	st->held[st->held_n] = dirty ? op->args : seq->ops[0].args;
	st->dirty[st->held_n] = (uint8_t)dirty;
	st->ndirty = (uint32_t)dirty;
	st->held_n++;
	st->run_hash = ag_mix(0, op->hash);
	*rc = st->held_n == seq->n ? complete(st) : CUDA_SUCCESS;
	return 1;
}

CUresult ag_hold_submit(struct ag_stream *st, const struct ag_call *c, int unified_ok)
{
	struct ag_kern *k = NULL;
	CUresult rc;
	if (st->held_seq) {
		const struct ag_op *e = &st->held_seq->ops[st->held_n];
		if (c->kind == AG_OP_KERNEL && e->call.kind == AG_OP_KERNEL &&
		    e->call.u.kern.f == c->u.kern.f) {
			k = e->k;
			__atomic_add_fetch(&k->launches, 1, __ATOMIC_RELAXED);
		}
		if (match(st, c, &rc))
			return rc;
	}
	if (c->kind == AG_OP_KERNEL && !k)
		k = ag_hold_kernel_of(c);
	struct ag_op *op = ag_history_next(st);
	ag_op_describe(st, c, k, unified_ok, op);
	op->epoch = ag_history_epoch_of(st);
	if (try_start(st, op, c, &rc))
		return rc;
	rc = ag_engine_status(ag_call_submit(c));
	op->failed = rc != CUDA_SUCCESS;
	ag_detect_commit(st); /* first: the operation may begin a segment, and is counted in it */
	ag_account_eager(st, op);
	return rc;
}

void ag_hold_after_fork_child(void)
{
	ag_hold_streams = holding_legacy = holding_blocking = 0;
}
