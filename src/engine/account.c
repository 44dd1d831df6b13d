/*
 * Where operations went, for AUTOGRAPH_REPORT: per kernel, launches left
 * eager (not a graph node, or no learned sequence held them), held and then
 * submitted eagerly, and replayed inside graphs; the other operations left
 * eager, by why; operations in no learned sequence, by what their segment was
 * (new, and where it differed from the one before; short; warming up); which
 * field of a launch broke held runs; and which driver calls made held work go
 * eagerly. All of it is
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
static uint64_t unlearned[AG_UNL_COUNT];
static uint64_t first_seen_fields[AG_DIV_LENGTH + 1];

const char *const ag_diverge_field_names[AG_DIV_LENGTH + 1] = {
	"kind", "kernel", "grid", "block", "shared_memory", "other", "length"};
const char *const ag_unlearned_keys[AG_UNL_COUNT] = {
	[AG_UNL_FIRST_SEEN] = "first_seen", [AG_UNL_SHORT] = "short_segment",
	[AG_UNL_WARMING] = "warming_up", [AG_UNL_OTHER] = "other", [AG_UNL_UNOBSERVED] = "not_observed"};
const char *const ag_unlearned_texts[AG_UNL_COUNT] = {
	[AG_UNL_FIRST_SEEN] = "in segments seen for the first time",
	[AG_UNL_SHORT] = "in segments shorter than AUTOGRAPH_MIN_OPS",
	[AG_UNL_WARMING] = "in segments seen before but not yet learned (AUTOGRAPH_WARMUP)",
	[AG_UNL_OTHER] = "elsewhere (a loop's period not yet confirmed, a sequence set aside, a segment "
			 "still open at exit)",
	[AG_UNL_UNOBSERVED] = "not observed, of any kind: their stream had shown nothing learned, replayed or "
			      "repeating in AUTOGRAPH_IDLE_OPS operations"};

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

void ag_account_eager(struct ag_stream *st, const struct ag_op *op)
{
	st->seg_unlearned += op->nodeable;
	if (op->call.kind == AG_OP_KERNEL) {
		if (op->k)
			add(op->nodeable ? &op->k->eager_unlearned : &op->k->eager_unnodeable, 1);
		return;
	}
	add(&eager_others[why_other(op)], 1);
}

/* Counted only for a report or a trace: a pause exists to cost little (policy.c). */
void ag_account_unobserved(struct ag_kern *k)
{
	if (!ag_engine_callers_wanted)
		return;
	add(&unlearned[AG_UNL_UNOBSERVED], 1);
	if (k)
		add(&k->eager_unlearned, 1);
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
static enum ag_diverge_field field_of(const struct ag_op *e, const struct ag_call *c)
{
	const struct ag_call *x = &e->call;
	if (x->kind != c->kind)
		return AG_DIV_KIND;
	if (c->kind == AG_OP_KERNEL && x->u.kern.f != c->u.kern.f)
		return AG_DIV_KERNEL;
	if (c->kind == AG_OP_KERNEL && memcmp(x->u.kern.grid, c->u.kern.grid, sizeof c->u.kern.grid))
		return AG_DIV_GRID;
	if (c->kind == AG_OP_KERNEL && memcmp(x->u.kern.block, c->u.kern.block, sizeof c->u.kern.block))
		return AG_DIV_BLOCK;
	if (c->kind == AG_OP_KERNEL && x->u.kern.shmem != c->u.kern.shmem)
		return AG_DIV_SHMEM;
	return AG_DIV_OTHER;
}

enum ag_diverge_field ag_account_diverged(const struct ag_op *e, const struct ag_call *c)
{
	enum ag_diverge_field f = field_of(e, c);
	add(&diverged_fields[f], 1);
	if (e->call.kind == AG_OP_KERNEL && e->k)
		add(&e->k->diverged, 1);
	return f;
}

void ag_account_segment(struct ag_stream *st, enum ag_unlearned why)
{
	if (st->seg_unlearned)
		add(&unlearned[why], st->seg_unlearned);
	st->seg_unlearned = 0;
}

/* Once per segment that is new, off the replay path; the two lie in the history. */
static void first_seen(const struct ag_stream *st, uint64_t start, uint64_t len)
{
	enum ag_diverge_field f = AG_DIV_LENGTH;
	if (st->prev_seg_len == len && st->observed - st->prev_seg_start <= AG_HIST) {
		f = AG_DIV_OTHER; /* the same shapes: the segment table had forgotten it */
		for (uint64_t i = 0; i < len; i++) {
			const struct ag_op *a = &st->hist[(st->prev_seg_start + i) % AG_HIST];
			const struct ag_op *b = &st->hist[(start + i) % AG_HIST];
			if (a->shape != b->shape) {
				f = field_of(a, &b->call);
				break;
			}
		}
	}
	add(&first_seen_fields[f], 1);
}

void ag_account_segment_ended(struct ag_stream *st, uint64_t len, unsigned shape_count)
{
	enum ag_unlearned why = AG_UNL_OTHER;
	if (st->seg_unlearned && shape_count == 1) {
		if (ag_engine_callers_wanted) /* a report or a trace is written: worth a comparison */
			first_seen(st, st->seg_start, len);
		why = AG_UNL_FIRST_SEEN;
	} else if (st->seg_unlearned && shape_count <= (unsigned)ag_opt.num[AG_OPT_WARMUP] + 1) {
		why = AG_UNL_WARMING;
	}
	ag_account_segment(st, why);
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
	ag_account_segment(st, AG_UNL_OTHER); /* the segment still open at exit */
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

const uint64_t *ag_engine_unlearned(void)
{
	return unlearned;
}

const uint64_t *ag_engine_first_seen_fields(void)
{
	return first_seen_fields;
}

unsigned long long ag_engine_sequences(void (*fn)(const struct ag_ledger_entry *, void *), void *arg)
{
	return ag_ledger_each(fn, arg);
}
