/*
 * What `autograph analyze` prints after the replay: the trace in one line,
 * one line per learned sequence (most operations replayed first), the
 * fallbacks with the driver calls that ended holds, and last exactly
 * `graphed: N of M operations (P%)`, N being the operations the engine
 * submitted inside graph launches and M the stream operations in the trace.
 */
#include <stdio.h>
#include <stdlib.h>

#include "analyze/analyze.h"
#include "engine/internal.h"
#include "names.h"
#include "stats.h"

struct seq_line {
	const struct ag_seq *seq;
	const struct ag_stream *st;
	uint64_t replayed;
};

struct seq_list {
	struct seq_line *v;
	size_t n, cap;
};

static void collect(struct ag_stream *st, void *arg)
{
	struct seq_list *l = arg;
	for (const struct ag_seq *s = st->seqs; s; s = s->next) {
		if (l->n == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 64;
			l->v = realloc(l->v, l->cap * sizeof *l->v);
			if (!l->v)
				exit(1);
		}
		l->v[l->n++] = (struct seq_line){s, st, (uint64_t)s->replays * s->n};
	}
}

static int by_replayed(const void *a, const void *b)
{
	const struct seq_line *x = a, *y = b;
	if (x->replayed != y->replayed)
		return x->replayed < y->replayed ? 1 : -1;
	return x->seq->id < y->seq->id ? -1 : x->seq->id > y->seq->id;
}

static const char *fate(const struct ag_seq *s, const struct ag_stream *st)
{
	if (s->broken)
		return "its graph could not be built";
	if (s->slow)
		return "set aside: not faster (or re-instantiated on most replays)";
	if (st->observed < s->disabled_until)
		return "set aside: changed on most runs or waited for the timer";
	if (!s->replays)
		return "never replayed: its runs did not repeat whole";
	return "replayed";
}

/* The kernel that occurs most in the sequence, demangled, and how many distinct kernels. */
static void kernels_of(const struct ag_seq *s, char *out, size_t len)
{
	const struct ag_kern *best = NULL;
	unsigned best_n = 0, distinct = 0, others = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct ag_kern *k = s->ops[i].k;
		if (s->ops[i].call.kind != AG_OP_KERNEL || !k) {
			others++;
			continue;
		}
		unsigned n = 0, first = 1;
		for (uint32_t j = 0; j < s->n; j++) {
			if (s->ops[j].k == k) {
				n++;
				if (j < i)
					first = 0;
			}
		}
		distinct += first;
		if (n > best_n)
			best = k, best_n = n;
	}
	char q[160];
	const char *name = !best ? "-" : ag_name_qualified(best->name, q, sizeof q) ? q : best->name;
	snprintf(out, len, "%u kernel%s, most often %s (%u)%s", distinct, distinct == 1 ? "" : "s",
		 name, best_n, others ? ", and copies, sets, records or host functions" : "");
}

static void fallback(const char *what, uint64_t n)
{
	if (n)
		printf("fallback %s: %llu\n", what, (unsigned long long)n);
}

void ag_an_summary(const char *path, const struct ag_an_totals *t)
{
	printf("trace %s: %llu stream operations (%llu launches, %llu copies, %llu memsets, "
	       "%llu event records, %llu host functions), %llu ordering calls, %zu thread%s, %.3f s\n",
	       path, (unsigned long long)t->ops, (unsigned long long)t->kernels,
	       (unsigned long long)t->copies, (unsigned long long)t->sets,
	       (unsigned long long)t->events, (unsigned long long)t->hostfns,
	       (unsigned long long)t->boundaries, t->threads,
	       t->threads == 1 ? "" : "s", (double)t->us / 1e6);
	struct seq_list l = {0};
	ag_stream_for_each(collect, &l);
	qsort(l.v, l.n, sizeof *l.v, by_replayed);
	for (size_t i = 0; i < l.n; i++) {
		const struct ag_seq *s = l.v[i].seq;
		char ks[256];
		kernels_of(s, ks, sizeof ks);
		printf("sequence %u: %u ops (%s), %u replays, %llu ops replayed: %s\n", s->id, s->n, ks,
		       s->replays, (unsigned long long)l.v[i].replayed, fate(s, l.v[i].st));
	}
	free(l.v);
	struct ag_stats_block sum;
	ag_stats_sum(&sum);
	const uint64_t *c = sum.scalar;
	fallback("shape (an operation differed from the sequence)", c[AG_S_FB_SHAPE]);
	fallback("args (arguments changed, no update possible)", c[AG_S_FB_ARGS]);
	fallback("barrier (a synchronizing or unknown call ended a hold)", c[AG_S_FB_BARRIER]);
	for (size_t i = 0; t->flushes_by_fn && i <= t->nfn; i++) {
		if (!t->flushes_by_fn[i])
			continue;
		const char *name = i && t->fn_names[i - 1] ? t->fn_names[i - 1] : "(a function this build does not know)";
		printf("  held work submitted by %s: %llu\n", name, (unsigned long long)t->flushes_by_fn[i]);
	}
	fallback("timeout (AUTOGRAPH_FLUSH_US passed without a new operation)", c[AG_S_FB_TIMEOUT]);
	fallback("unsupported (operations that cannot be graph nodes)", c[AG_S_FB_UNSUPPORTED]);
	fallback("thrash (sequences set aside)", c[AG_S_FB_THRASH]);
	fallback("not faster", c[AG_S_FB_NOT_FASTER]);
	fallback("excluded (AUTOGRAPH_INCLUDE/EXCLUDE)", c[AG_S_FB_EXCLUDED]);
	uint64_t n = c[AG_S_OPS_REPLAYED], m = t->ops;
	printf("graphed: %llu of %llu operations (%.1f%%)\n", (unsigned long long)n,
	       (unsigned long long)m, m ? 100.0 * (double)n / (double)m : 0.0);
}
