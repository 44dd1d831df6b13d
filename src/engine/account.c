/*
 * Where operations went, for AUTOGRAPH_REPORT: per kernel, launches left
 * eager (not a graph node, or no learned sequence held them), held and then
 * submitted eagerly, and replayed inside graphs; the other operations left
 * eager, by why; which field of a launch broke
 * held runs; and which driver calls made held work go eagerly. All of it is
 * counted off the replay path: on eager submissions, flushes and divergences
 * (which cost a driver call each anyway), and replays once per sequence when
 * it is retired or reported.
 */
#include <string.h>

#include "config.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "driver/real.h"

int ag_engine_callers_wanted;
static uint64_t flushes_by_fn[AG_FN_COUNT + 1]; /* [fn + 1]; [0]: not known */
static uint64_t diverged_fields[AG_DIV_OTHER + 1];
static uint64_t eager_others[AG_EAGER_OTHER_COUNT];

static void add(uint64_t *c, uint64_t n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

/* Why an operation that is not a launch cannot be a node, as op.c decides it. */
static enum ag_eager_other why_other(const struct ag_op *op)
{
	if (op->nodeable)
		return AG_EAGER_NO_SEQUENCE;
	if (op->call.kind == AG_OP_COPY)
		switch (op->call.api) {
		case AG_COPY_DTOH:
			return AG_EAGER_TO_PAGEABLE;
		case AG_COPY_HTOD:
			return AG_EAGER_FROM_PAGEABLE;
		case AG_COPY_UNIFIED:
			return AG_EAGER_UNIFIED_PAGEABLE;
		default:
			return AG_EAGER_NOT_A_NODE;
		}
	return op->call.kind == AG_OP_EVENT ? AG_EAGER_TIMING_EVENT : AG_EAGER_NOT_A_NODE;
}

void ag_account_eager(const struct ag_op *op)
{
	if (op->call.kind == AG_OP_KERNEL) {
		if (op->k)
			add(op->nodeable ? &op->k->eager_unlearned : &op->k->eager_unnodeable, 1);
		return;
	}
	add(&eager_others[why_other(op)], 1);
}

void ag_account_flushed(const struct ag_stream *st, enum ag_flush why)
{
	const struct ag_seq *seq = st->held_seq;
	for (uint32_t i = 0; i < st->held_n; i++)
		if (seq->ops[i].call.kind == AG_OP_KERNEL && seq->ops[i].k)
			add(&seq->ops[i].k->flushed, 1);
	if (why == AG_FLUSH_BOUNDARY && ag_engine_callers_wanted) {
		int fn = ag_trace_caller;
		add(&flushes_by_fn[fn >= 0 && fn <= AG_FN_COUNT ? fn : 0], 1);
	}
}

/* The first field, in the order a reader checks them, in which the call differs. */
enum ag_diverge_field ag_account_diverged(const struct ag_op *e, const struct ag_call *c)
{
	const struct ag_call *x = &e->call;
	enum ag_diverge_field f = AG_DIV_OTHER;
	if (x->kind != c->kind)
		f = AG_DIV_KIND;
	else if (c->kind == AG_OP_KERNEL && x->u.kern.f != c->u.kern.f)
		f = AG_DIV_KERNEL;
	else if (c->kind == AG_OP_KERNEL && memcmp(x->u.kern.grid, c->u.kern.grid, sizeof c->u.kern.grid))
		f = AG_DIV_GRID;
	else if (c->kind == AG_OP_KERNEL && memcmp(x->u.kern.block, c->u.kern.block, sizeof c->u.kern.block))
		f = AG_DIV_BLOCK;
	else if (c->kind == AG_OP_KERNEL && x->u.kern.shmem != c->u.kern.shmem)
		f = AG_DIV_SHMEM;
	add(&diverged_fields[f], 1);
	if (x->kind == AG_OP_KERNEL && e->k)
		add(&e->k->diverged, 1);
	return f;
}

void ag_account_replays(const struct ag_seq *s)
{
	for (uint32_t i = 0; s->replays && i < s->n; i++)
		if (s->ops[i].call.kind == AG_OP_KERNEL && s->ops[i].k)
			add(&s->ops[i].k->replayed, s->replays);
}

static void account_live(struct ag_stream *st, void *arg)
{
	(void)arg;
	if (st == ag_stream_locked || !ag_stream_trylock(st))
		return; /* another thread is in it at exit: its replays go uncounted */
	for (struct ag_seq *s = st->seqs; s; s = s->next) {
		if (!s->replays_accounted)
			ag_account_replays(s);
		s->replays_accounted = 1;
	}
	ag_stream_unlock(st);
}

void ag_engine_explain_prepare(void)
{
	ag_stream_for_each(account_live, NULL);
}

const uint64_t *ag_engine_flushes_by_fn(void)
{
	return flushes_by_fn;
}

const uint64_t *ag_engine_diverged_fields(void)
{
	return diverged_fields;
}

const uint64_t *ag_engine_eager_others(void)
{
	return eager_others;
}

unsigned long long ag_engine_sequences(void (*fn)(const struct ag_ledger_entry *, void *), void *arg)
{
	return ag_ledger_each(fn, arg);
}
