/*
 * What a stream observed: a ring of the last AG_HIST operations it submitted
 * eagerly, their argument bytes in a ring arena, and the boundary epoch that
 * tells detection where a segment ends (a global epoch bumped by barriers
 * and syncs of everything, plus the stream's own, bumped by boundaries on
 * that stream). The buffers are allocated on a stream's first operation.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine/internal.h"

static uint64_t global_epoch;

int ag_history_alloc(struct ag_stream *st)
{
	if (st->hist)
		return 1;
	size_t max_ops = (size_t)ag_opt.num[AG_OPT_MAX_OPS];
	st->hist = calloc(AG_HIST, sizeof *st->hist);
	st->arena = malloc(AG_ARENA);
	st->lastpos = calloc(AG_PERIOD_MAX + 1, sizeof *st->lastpos);
	st->counts_exact.pool = calloc(AG_SEGS, sizeof *st->counts_exact.pool);
	st->counts_shape.pool = calloc(AG_SEGS, sizeof *st->counts_shape.pool);
	st->held = calloc(max_ops, sizeof *st->held);
	st->dirty = calloc(max_ops, 1);
	if (st->hist && st->arena && st->lastpos && st->counts_exact.pool && st->counts_shape.pool &&
	    st->held && st->dirty)
		return 1;
	free(st->hist), free(st->arena), free(st->lastpos), free(st->held), free(st->dirty);
	free(st->counts_exact.pool), free(st->counts_shape.pool);
	st->hist = NULL;
	st->lastpos = NULL;
	st->counts_exact.pool = st->counts_shape.pool = NULL;
	return 0;
}

void ag_history_free(struct ag_stream *st)
{
	/* The tables' entries live in the pools: clear the tables first. */
	HASH_CLEAR(hh, st->lastpos_by_hash);
	HASH_CLEAR(hh, st->counts_exact.by_hash);
	HASH_CLEAR(hh, st->counts_shape.by_hash);
	free(st->hist), free(st->arena), free(st->lastpos), free(st->held), free(st->dirty);
	free(st->counts_exact.pool), free(st->counts_shape.pool);
	st->hist = NULL;
}

uint8_t *ag_arena_alloc(struct ag_stream *st, size_t n, uint64_t *pos)
{
	n = AG_ALIGN8(n);
	if (n > AG_ARENA / 8)
		return NULL;
	uint64_t p = st->arena_head;
	size_t off = p % AG_ARENA;
	if (off + n > AG_ARENA) {
		p += AG_ARENA - off;
		off = 0;
	}
	st->arena_head = p + n;
	*pos = p;
	return st->arena + off;
}

int ag_arena_alive(const struct ag_stream *st, const struct ag_op *op)
{
	return op->argbytes == 0 || st->arena_head - op->arena_pos <= AG_ARENA;
}

struct ag_op *ag_history_next(struct ag_stream *st)
{
	return &st->hist[st->observed % AG_HIST];
}

uint64_t ag_history_epoch_of(const struct ag_stream *st)
{
	return __atomic_load_n(&global_epoch, __ATOMIC_ACQUIRE) + st->local_epoch;
}

void ag_history_boundary(struct ag_stream *st)
{
	st->local_epoch++;
}

void ag_history_boundary_all(void)
{
	__atomic_add_fetch(&global_epoch, 1, __ATOMIC_ACQ_REL);
}

/*
 * A sequence learned after memory went away from operations observed before
 * would replay copies and sets of it: from another thread, between the
 * engine's forgetting and the driver's unregistering, a graph built then
 * still captured the old registration (issue 8, pattern 1, found by the
 * fuzzer on the asynchronous stand-in). Windows start after such operations.
 */
void ag_history_forget_touching(struct ag_stream *st, uintptr_t lo, uintptr_t hi)
{
	if (!st->hist)
		return;
	uint64_t from = st->gap, n = st->observed - from;
	if (n > AG_HIST)
		from = st->observed - AG_HIST;
	for (uint64_t i = st->observed; i-- > from;) {
		if (ag_op_touches(&st->hist[i % AG_HIST], lo, hi)) {
			ag_history_gap(st);
			return;
		}
	}
}

/*
 * A held operation that went to the driver eagerly after all (its run was
 * flushed), recorded as if it had been observed then: detection sees the step
 * whole, and a run's part that no sequence covers (a step's tail after its
 * last complete piece, flushed at the step's sync) is learned like any other
 * segment. Its argument bytes and attributes are copied into the arena, as an
 * observed operation's are, since the sequence may be freed before the window.
 */
void ag_history_observe_held(struct ag_stream *st, const struct ag_op *recorded, const uint8_t *args,
			     uint64_t epoch, int failed)
{
	struct ag_op *op = ag_history_next(st);
	*op = *recorded;
	op->epoch = epoch;
	op->failed = (uint8_t)failed;
	op->last = NULL;
	size_t a = op->call.kind == AG_OP_KERNEL ? op->call.u.kern.nattrs * sizeof(CUlaunchAttribute) : 0;
	if (op->argbytes || a) {
		uint8_t *buf = ag_arena_alloc(st, AG_ALIGN8(op->argbytes) + a, &op->arena_pos);
		if (!buf) {
			op->nodeable = 0;
			op->args = NULL;
			op->argbytes = 0;
			op->hash = op->shape;
			return;
		}
		memcpy(buf, args, op->argbytes);
		if (a) {
			memcpy(buf + AG_ALIGN8(op->argbytes), recorded->call.u.kern.attrs, a);
			op->call.u.kern.attrs = (const CUlaunchAttribute *)(buf + AG_ALIGN8(op->argbytes));
		}
		op->args = op->argbytes ? buf : NULL;
		/* the run's addresses and size, or event, not the sequence's */
		if (op->call.kind == AG_OP_COPY && op->argbytes)
			memcpy(&op->call.u.copy, buf, AG_COPY_ARGS);
		else if (op->call.kind == AG_OP_EVENT && op->argbytes)
			op->call.u.event.ev = ag_op_event(buf);
		if (args != recorded->args)
			op->hash = ag_op_args_hash(op, buf);
	}
}

/* Operations the history did not see (held ones) come next: no window may span them. */
void ag_history_gap(struct ag_stream *st)
{
	ag_account_segment(st, AG_UNL_OTHER);
	st->gap = st->observed;
	st->seg_start = st->observed;
	st->seg_hash = st->seg_shape = 0;
}
