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
#include "engine/engine.h"
#include "engine/internal.h"
#include "names.h"
#include "stats.h"

struct seq_list {
	struct ag_ledger_entry *v;
	size_t n, cap;
};

static void collect(const struct ag_ledger_entry *e, void *arg)
{
	struct seq_list *l = arg;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = realloc(l->v, l->cap * sizeof *l->v);
		if (!l->v)
			exit(1);
	}
	l->v[l->n++] = *e;
}

/* Most operations replayed first; ties by id, so that the output is the same on every run. */
static int by_replayed(const void *a, const void *b)
{
	const struct ag_ledger_entry *x = a, *y = b;
	uint64_t rx = (uint64_t)x->replays * x->n, ry = (uint64_t)y->replays * y->n;
	if (rx != ry)
		return rx < ry ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
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
	unsigned long long dropped = ag_ledger_each(collect, &l);
	qsort(l.v, l.n, sizeof *l.v, by_replayed);
	for (size_t i = 0; i < l.n; i++) {
		const struct ag_ledger_entry *e = &l.v[i];
		printf("sequence %u: %u ops (%s): %u kernel%s, most often %s (%u)%s; %u replays, %llu ops "
		       "replayed, %u instantiations: %s\n",
		       e->id, e->n, e->why ? e->why : "?", e->kernels, e->kernels == 1 ? "" : "s",
		       e->kernel[0] ? e->kernel : "-", e->top_launches,
		       e->others ? ", with copies, sets, records or host functions" : "", e->replays,
		       (unsigned long long)e->replays * e->n, e->instantiations, e->fate);
	}
	if (dropped)
		printf("(%llu more sequences that replayed least are not listed)\n", dropped);
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
	fallback("not faster (instantiated again on most replays: AUTOGRAPH_MAX_GRAPHS)", c[AG_S_FB_NOT_FASTER]);
	fallback("excluded (AUTOGRAPH_INCLUDE/EXCLUDE)", c[AG_S_FB_EXCLUDED]);
	if (c[AG_S_UPDATES])
		printf("graph updates (variants updated in place for new arguments): %llu\n",
		       (unsigned long long)c[AG_S_UPDATES]);
	if (c[AG_S_IDLE_PAUSES])
		printf("idle pauses (AUTOGRAPH_IDLE_OPS operations with nothing learned, replayed or repeating): "
		       "%llu, %llu operations not observed\n", (unsigned long long)c[AG_S_IDLE_PAUSES],
		       (unsigned long long)c[AG_S_OPS_UNOBSERVED]);
	ag_engine_explain_prepare(); /* the segments still open at the trace's end */
	const uint64_t *u = ag_engine_unlearned(), *f = ag_engine_first_seen_fields();
	for (int i = 0; i < AG_UNL_COUNT; i++)
		if (u[i])
			printf("in no learned sequence: %llu operations %s\n", (unsigned long long)u[i],
			       ag_unlearned_texts[i]);
	for (int i = 0; u[AG_UNL_FIRST_SEEN] && i <= AG_DIV_LENGTH; i++)
		if (f[i])
			printf("  segments seen for the first time whose %s first differed from the segment "
			       "before: %llu\n", ag_diverge_field_names[i], (unsigned long long)f[i]);
	uint64_t n = c[AG_S_OPS_REPLAYED], m = t->ops;
	printf("graphed: %llu of %llu operations (%.1f%%)\n", (unsigned long long)n,
	       (unsigned long long)m, m ? 100.0 * (double)n / (double)m : 0.0);
}
