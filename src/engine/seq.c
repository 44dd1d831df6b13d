/*
 * Learned sequences: created from a window of a stream's history (operations
 * and argument bytes copied out, the graph built), indexed by the hash of
 * their first operation so that the hold logic can start one, and freed in
 * one place when their handles may go away.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine/internal.h"
#include "log.h"
#include "stats.h"

#define SEQS_PER_STREAM 256

static unsigned next_seq_id;

struct ag_seq *ag_seq_first(struct ag_stream *st, uint64_t hash)
{
	struct ag_seq *seq;
	HASH_FIND_BYHASHVALUE(by_first, st->by_first, &hash, sizeof hash, ag_key_hash(hash), seq);
	return seq;
}

/* Newest first, as the one most likely to match what the program does now. */
static void index_first(struct ag_stream *st, struct ag_seq *seq)
{
	seq->first_hash = seq->ops[0].shape;
	unsigned hv = ag_key_hash(seq->first_hash);
	seq->same_first = ag_seq_first(st, seq->first_hash);
	if (seq->same_first)
		HASH_DELETE(by_first, st->by_first, seq->same_first);
	HASH_ADD_BYHASHVALUE(by_first, st->by_first, first_hash, sizeof seq->first_hash, hv, seq);
}

/* One with the same operations, or, for a window whose arguments change from run to run,
 * one with the same shapes: runs of it are held and updated already (or it was set aside,
 * and learning it again would only start the same holds over). */
static struct ag_seq *find_seq(struct ag_stream *st, uint64_t hash, uint64_t shape, int on_shape,
			       unsigned *count)
{
	*count = 0;
	for (struct ag_seq *s = st->seqs; s; s = s->next, ++*count)
		if (s->hash == hash || (on_shape && s->on_shape && s->shape_hash == shape))
			return s;
	return NULL;
}

void ag_seq_learn(struct ag_stream *st, uint64_t first, uint32_t n, const char *why, int on_shape)
{
	uint64_t hash = 0, shape = 0;
	size_t blob = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct ag_op *op = &st->hist[(first + i) % AG_HIST];
		hash = ag_mix(hash, op->hash);
		shape = ag_mix(shape, op->shape);
		blob += AG_ALIGN8(op->argbytes) + op->call.u.kern.nattrs * sizeof(CUlaunchAttribute);
	}
	unsigned count;
	if (find_seq(st, hash, shape, on_shape, &count) || count >= SEQS_PER_STREAM)
		return;
	/* Arguments that change while held are kept in the arena until the sequence completes. */
	if (blob > AG_ARENA / 4) {
		ag_stats_add(AG_S_FB_UNSUPPORTED, 1);
		return;
	}
	/* A recorded event must still be the one seen, without timing: one destroyed since
	 * may have left its handle to a new event. */
	for (uint32_t i = 0; i < n; i++) {
		const struct ag_op *op = &st->hist[(first + i) % AG_HIST];
		struct ag_event_arg a;
		if (op->call.kind == AG_OP_EVENT &&
		    (!ag_facts_event_arg(op->call.u.event.ev, &a) || memcmp(op->args, &a, sizeof a) != 0)) {
			ag_stats_add(AG_S_FB_UNSUPPORTED, 1);
			return;
		}
	}
	struct ag_seq *seq = calloc(1, sizeof *seq);
	if (!seq)
		return;
	seq->ops = malloc(n * sizeof *seq->ops);
	seq->blob = malloc(blob ? blob : 1);
	if (!seq->ops || !seq->blob) {
		free(seq->ops), free(seq->blob), free(seq);
		return;
	}
	uint8_t *p = seq->blob;
	for (uint32_t i = 0; i < n; i++) {
		struct ag_op *op = &seq->ops[i];
		*op = st->hist[(first + i) % AG_HIST];
		memcpy(p, op->args, op->argbytes);
		op->args = p;
		p += AG_ALIGN8(op->argbytes);
		if (op->call.kind == AG_OP_KERNEL && op->call.u.kern.nattrs) {
			size_t a = op->call.u.kern.nattrs * sizeof(CUlaunchAttribute);
			memcpy(p, op->call.u.kern.attrs, a);
			op->call.u.kern.attrs = (const CUlaunchAttribute *)p;
			p += a;
		}
	}
	seq->n = n;
	seq->hash = hash;
	seq->shape_hash = shape;
	seq->why = why;
	seq->on_shape = (uint8_t)on_shape;
	seq->id = __atomic_add_fetch(&next_seq_id, 1, __ATOMIC_RELAXED);
	ag_policy_learned(seq);
	ag_stats_add(AG_S_SEQUENCES, 1);
	/* The timer must run before anything is held; without it nothing will be. */
	static int warned;
	if (!ag_watchdog_start() && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		AG_LOG(AG_LOG_WARN, "the AUTOGRAPH_FLUSH_US timer thread could not be started; "
		       "nothing is graphed");
	if (!ag_graph_build(seq, st->ctx)) {
		seq->broken = 1;
		ag_stats_add(AG_S_FB_BUILD, 1);
		AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u (%u ops, %s): graph build failed; stays eager",
		       (void *)st->handle, seq->id, n, why);
	} else {
		AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u (%u ops, %s): graph built",
		       (void *)st->handle, seq->id, n, why);
	}
	seq->next = st->seqs;
	st->seqs = seq;
	index_first(st, seq);
}

static void free_seq(const struct ag_stream *st, struct ag_seq *s)
{
	ag_ledger_retire(st, s);
	ag_graph_destroy(s);
	free(s->ops);
	free(s->blob);
	free(s);
}

/* Every sequence of the stream, graphs and all; detection starts over. The index goes
 * first: its table hangs off its head, which is one of the sequences freed here. */
void ag_seq_forget_all(struct ag_stream *st)
{
	HASH_CLEAR(by_first, st->by_first);
	for (struct ag_seq *s = st->seqs, *next; s; s = next) {
		next = s->next;
		free_seq(st, s);
	}
	st->seqs = NULL;
	ag_detect_reset(st);
}

/* Oldest first, so that each chain of sequences sharing a first operation is newest first. */
static void index_all(struct ag_stream *st, struct ag_seq *s)
{
	if (!s)
		return;
	index_all(st, s->next);
	index_first(st, s);
}

/* What a sequence to forget touches: memory [lo, hi). */
struct touch {
	uintptr_t lo, hi;
};

static int op_touches(const struct ag_op *op, const struct touch *t)
{
	return ag_op_touches(op, t->lo, t->hi);
}

static void forget_where(struct ag_stream *st, const struct touch *t)
{
	int dropped = 0;
	for (struct ag_seq **p = &st->seqs; *p;) {
		struct ag_seq *s = *p;
		int hit = 0;
		for (uint32_t i = 0; i < s->n && !hit; i++)
			hit = op_touches(&s->ops[i], t);
		if (!hit) {
			p = &s->next;
			continue;
		}
		if (!dropped) /* before the index's head can be freed: the table hangs off it */
			HASH_CLEAR(by_first, st->by_first);
		*p = s->next;
		free_seq(st, s);
		dropped = 1;
	}
	if (dropped)
		index_all(st, st->seqs);
}

/*
 * Memory [lo, hi) goes away (a device free, host memory unregistered or
 * freed). The driver checks a copy's or memset's addresses when it is called,
 * and a later allocation may reuse the addresses: a sequence that copies or
 * sets there must never match again (issue 8, patterns 1 and 10). The caller
 * has flushed the stream.
 */
void ag_seq_forget_touching(struct ag_stream *st, uintptr_t lo, uintptr_t hi)
{
	struct touch t = {lo, hi};
	forget_where(st, &t);
}
