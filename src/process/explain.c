/*
 * The AUTOGRAPH_REPORT file, written once at exit: what became of the
 * program's stream operations, in the terms a user can act on. Each learned
 * sequence (how it was found, the kernel it launches most, replays, what
 * became of it); the kernels whose launches stayed eager, with where they
 * went (not a graph node and why, no learned sequence held them, held and
 * then submitted eagerly, runs that diverged at them); which field of a
 * launch broke held runs; and which driver calls made held work go eagerly.
 * Text, or JSON when the path ends in ".json".
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "emit.h"
#include "engine/engine.h"
#include "engine/kernels.h"
#include "g_hook.h"
#include "log.h"
#include "names.h"
#include "pathfmt.h"
#include "process/explain.h"
#include "stats.h"

#define SEQUENCES_LISTED 50
#define KERNELS_LISTED 30
#define KERNELS_LOOKED_AT 4096

struct seq_list {
	struct ag_ledger_entry v[SEQUENCES_LISTED];
	size_t n;
	unsigned long long more;
};

/* Keeps the SEQUENCES_LISTED that replayed the most operations. */
static void keep(const struct ag_ledger_entry *e, void *arg)
{
	struct seq_list *l = arg;
	uint64_t w = (uint64_t)e->replays * e->n;
	size_t at = l->n;
	if (l->n == SEQUENCES_LISTED) {
		l->more++;
		at = 0;
		for (size_t i = 1; i < l->n; i++)
			if ((uint64_t)l->v[i].replays * l->v[i].n < (uint64_t)l->v[at].replays * l->v[at].n)
				at = i;
		if ((uint64_t)l->v[at].replays * l->v[at].n >= w)
			return;
	} else {
		l->n++;
	}
	l->v[at] = *e;
}

static int by_replayed(const void *a, const void *b)
{
	const struct ag_ledger_entry *x = a, *y = b;
	uint64_t rx = (uint64_t)x->replays * x->n, ry = (uint64_t)y->replays * y->n;
	return rx != ry ? (rx < ry ? 1 : -1) : (x->id > y->id) - (x->id < y->id);
}

static void emit_sequences(struct ag_emit *e)
{
	static struct seq_list l;
	ag_engine_sequences(keep, &l);
	qsort(l.v, l.n, sizeof *l.v, by_replayed);
	if (!e->json)
		ag_emit_line(e, "learned sequences, most operations replayed first:");
	ag_emit_array(e, "sequences", 0);
	for (size_t i = 0; i < l.n; i++) {
		const struct ag_ledger_entry *s = &l.v[i];
		if (!e->json) {
			ag_emit_line(e, "sequence %u: %s, %u ops (%s), %u kernel%s, most often %s; %llu replays, "
				     "%llu instantiations", s->id, s->fate, s->n, s->why ? s->why : "", s->kernels,
				     s->kernels == 1 ? "" : "s", s->kernel[0] ? s->kernel : "-",
				     (unsigned long long)s->replays, (unsigned long long)s->instantiations);
			continue;
		}
		ag_emit_object(e, NULL, 1);
		ag_emit_u64(e, "id", "", s->id);
		ag_emit_u64(e, "ops", "ops", s->n);
		ag_emit_str(e, "learned", s->why ? s->why : "");
		ag_emit_u64(e, "kernels", "kernels, most often", s->kernels);
		ag_emit_str(e, "top_kernel", s->kernel);
		ag_emit_u64(e, "replays", "replays", s->replays);
		ag_emit_u64(e, "instantiations", "instantiations", s->instantiations);
		ag_emit_str(e, "fate", s->fate);
		ag_emit_close(e);
	}
	ag_emit_close(e);
	ag_emit_u64(e, "sequences_not_listed", NULL, l.more);
}

static uint64_t left_eager(const struct ag_kern *k)
{
	return k->eager_unnodeable + k->eager_unlearned + k->flushed;
}

static int more_eager(const void *a, const void *b)
{
	const struct ag_kern *p = *(const struct ag_kern *const *)a, *q = *(const struct ag_kern *const *)b;
	uint64_t x = left_eager(p), y = left_eager(q);
	return x != y ? (x < y ? 1 : -1) : strcmp(p->name, q->name);
}

/* Why the kernel's launches cannot be graph nodes, as kernels.c and op.c decide it. */
static const char *why_not_a_node(const struct ag_kern *k)
{
	if (!k->layout_ok)
		return "the driver gave no parameter layout (cuFuncGetParamInfo)";
	if (!k->graphable)
		return "excluded (AUTOGRAPH_INCLUDE/EXCLUDE, or an NCCL collective without AUTOGRAPH_NCCL)";
	return "a launch attribute records an event or is unknown to this build, or a timing event";
}

/* Appends to the text at buf[*at], cut at size: a text report line built in parts. */
static void appendf(char *buf, size_t size, size_t *at, const char *fmt, ...)
{
	if (*at >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf + *at, size - *at, fmt, ap);
	va_end(ap);
	*at = k < 0 ? size : *at + (size_t)k;
}

/* One line of the text report: the launches, then only the reasons that apply. */
static void emit_kernel_line(struct ag_emit *e, const struct ag_kern *k, const char *name)
{
	char why[512] = "";
	size_t at = 0;
	if (k->eager_unnodeable)
		appendf(why, sizeof why, &at, ", %llu not a node (%s)", (unsigned long long)k->eager_unnodeable,
			why_not_a_node(k));
	if (k->eager_unlearned)
		appendf(why, sizeof why, &at, ", %llu in no learned sequence", (unsigned long long)k->eager_unlearned);
	if (k->flushed)
		appendf(why, sizeof why, &at, ", %llu held then eager", (unsigned long long)k->flushed);
	if (k->diverged)
		appendf(why, sizeof why, &at, "; %llu held runs diverged here", (unsigned long long)k->diverged);
	ag_emit_line(e, "kernel %s: %llu launches, %llu replayed%s", name, (unsigned long long)k->launches,
		     (unsigned long long)k->replayed, why);
}

static void emit_kernels(struct ag_emit *e)
{
	static const struct ag_kern *top[KERNELS_LOOKED_AT];
	size_t n = ag_kern_top(top, KERNELS_LOOKED_AT);
	qsort(top, n, sizeof *top, more_eager);
	if (!e->json)
		ag_emit_line(e, "kernels whose launches stayed eager, most first:");
	ag_emit_array(e, "kernels_left_eager", 0);
	for (size_t i = 0; i < n && i < KERNELS_LISTED && left_eager(top[i]); i++) {
		const struct ag_kern *k = top[i];
		char q[200];
		const char *name = ag_name_qualified(k->name, q, sizeof q) ? q : k->name;
		if (!e->json) {
			emit_kernel_line(e, k, name);
			continue;
		}
		ag_emit_object(e, NULL, 1);
		ag_emit_str(e, "name", name);
		ag_emit_u64(e, "launches", "launches", k->launches);
		ag_emit_u64(e, "replayed", "replayed", k->replayed);
		ag_emit_u64(e, "not_a_node", "not a node", k->eager_unnodeable);
		ag_emit_u64(e, "in_no_sequence", "in no learned sequence", k->eager_unlearned);
		ag_emit_u64(e, "held_then_eager", "held then eager", k->flushed);
		ag_emit_u64(e, "runs_diverged_here", "runs diverged here", k->diverged);
		if (k->eager_unnodeable)
			ag_emit_str(e, "why_not_a_node", why_not_a_node(k));
		ag_emit_close(e);
	}
	ag_emit_close(e);
}

/* Copies, sets, event records and host functions that stayed eager, by why. */
static void emit_others(struct ag_emit *e)
{
	static const struct {
		const char *key, *text;
	} why[AG_EAGER_OTHER_COUNT] = {
		[AG_EAGER_TO_PAGEABLE] = {"copy_to_pageable", "device-to-host copies to pageable memory not "
				"staged (over 64 KiB, or the stream's staging arena was full)"},
		[AG_EAGER_FROM_PAGEABLE] = {"copy_from_pageable", "host-to-device copies from memory not page-"
				"locked and not staged (over 64 KiB, or the stream's staging arena was full)"},
		[AG_EAGER_UNIFIED_PAGEABLE] = {"unified_copy_pageable", "unified-address copies with a pageable side"},
		[AG_EAGER_TIMING_EVENT] = {"timing_event_record", "records of events with timing, or interprocess ones"},
		[AG_EAGER_NOT_A_NODE] = {"other_not_a_node", "other operations that cannot be graph nodes"},
		[AG_EAGER_NO_SEQUENCE] = {"in_no_sequence", "copies, sets, event records and host functions "
				"that could be nodes but were in no learned sequence"},
	};
	const uint64_t *n = ag_engine_eager_others();
	if (!e->json) {
		int any = 0;
		ag_emit_line(e, "other operations that stayed eager:");
		for (int i = 0; i < AG_EAGER_OTHER_COUNT; i++)
			if (n[i])
				any = 1, ag_emit_line(e, "  %llu %s", (unsigned long long)n[i], why[i].text);
		if (!any)
			ag_emit_line(e, "  none");
		return;
	}
	ag_emit_object(e, "other_operations_left_eager", 1);
	for (int i = 0; i < AG_EAGER_OTHER_COUNT; i++)
		ag_emit_u64(e, why[i].key, why[i].text, n[i]);
	ag_emit_close(e);
}

/* "what: N a, M b" with the nonzero counts only ("none" if there are none), for the text report. */
static void emit_counts_line(struct ag_emit *e, const char *what, const uint64_t *v, const char *const *names,
			     int n)
{
	char text[1024] = "";
	size_t at = 0;
	for (int i = 0; i < n; i++)
		if (v[i])
			appendf(text, sizeof text, &at, "%s%llu %s", at ? ", " : "", (unsigned long long)v[i], names[i]);
	ag_emit_line(e, "%s: %s", what, at ? text : "none");
}

/* Operations that could be nodes but no sequence held, by what their segment was. */
static void emit_unlearned(struct ag_emit *e)
{
	const uint64_t *n = ag_engine_unlearned(), *f = ag_engine_first_seen_fields();
	if (!e->json) {
		char text[1024] = "";
		size_t at = 0;
		for (int i = 0; i < AG_UNL_COUNT; i++)
			if (n[i])
				appendf(text, sizeof text, &at, "%s%llu %s", at ? ", " : "", (unsigned long long)n[i],
					ag_unlearned_texts[i]);
		ag_emit_line(e, "operations in no learned sequence, by their segment: %s", at ? text : "none");
		if (n[AG_UNL_FIRST_SEEN])
			emit_counts_line(e, "segments seen for the first time, by what first differed from the "
				"segment before", f, ag_diverge_field_names, AG_DIV_LENGTH + 1);
		return;
	}
	ag_emit_object(e, "in_no_sequence_by_segment", 1);
	for (int i = 0; i < AG_UNL_COUNT; i++)
		ag_emit_u64(e, ag_unlearned_keys[i], ag_unlearned_texts[i], n[i]);
	ag_emit_close(e);
	ag_emit_object(e, "first_seen_segments_by_field", 1);
	for (int i = 0; i <= AG_DIV_LENGTH; i++)
		ag_emit_u64(e, ag_diverge_field_names[i], ag_diverge_field_names[i], f[i]);
	ag_emit_close(e);
}

static void emit_causes(struct ag_emit *e)
{
	static const char *fn_names[AG_FN_COUNT + 1];
	const uint64_t *d = ag_engine_diverged_fields();
	const uint64_t *f = ag_engine_flushes_by_fn();
	fn_names[0] = "unknown";
	for (int i = 1; i <= AG_FN_COUNT; i++)
		fn_names[i] = ag_fn_names[i - 1];
	if (!e->json) {
		emit_counts_line(e, "held runs that diverged, by the field that differed", d, ag_diverge_field_names,
				 AG_DIV_OTHER + 1);
		emit_counts_line(e, "held work submitted eagerly by a synchronizing or unknown call", f, fn_names,
				 AG_FN_COUNT + 1);
		return;
	}
	ag_emit_object(e, "runs_diverged_by_field", 1);
	for (int i = 0; i <= AG_DIV_OTHER; i++)
		ag_emit_u64(e, ag_diverge_field_names[i], ag_diverge_field_names[i], d[i]);
	ag_emit_close(e);
	ag_emit_object(e, "held_work_submitted_by", 0);
	for (int i = 0; i <= AG_FN_COUNT; i++)
		if (f[i])
			ag_emit_u64(e, fn_names[i], fn_names[i], f[i]);
	ag_emit_close(e);
}

void ag_explain_init(void)
{
	if (ag_opt.num[AG_OPT_REPORT])
		ag_engine_callers_wanted = 1;
}

void ag_explain_write(void)
{
	if (!ag_opt.num[AG_OPT_REPORT])
		return;
	char path[4096];
	const char *t = ag_opt.text[AG_OPT_REPORT];
	if (ag_path_expand(t, path, sizeof path) != 0) {
		ag_log_msg(AG_LOG_ERROR, "AUTOGRAPH_REPORT=%s: the path is too long; no report written", t);
		return;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ag_log_msg(AG_LOG_ERROR, "AUTOGRAPH_REPORT=%s: cannot create %s; no report written", t, path);
		return;
	}
	size_t len = strlen(path);
	static struct ag_emit e;
	ag_emit_begin(&e, fd, len > 5 && strcmp(path + len - 5, ".json") == 0);
	ag_engine_explain_prepare();
	struct ag_stats_block sum;
	ag_stats_sum(&sum);
	if (e.json) {
		ag_emit_u64(&e, "ops_replayed", NULL, sum.scalar[AG_S_OPS_REPLAYED]);
		ag_emit_u64(&e, "ops_eager", NULL, sum.scalar[AG_S_OPS_EAGER]);
		ag_emit_u64(&e, "fallback_timeout", NULL, sum.scalar[AG_S_FB_TIMEOUT]);
	} else {
		ag_emit_line(&e, "autograph report: %llu stream operations replayed from graphs, %llu held and "
			     "then submitted eagerly (%llu times by the AUTOGRAPH_FLUSH_US timer)",
			     (unsigned long long)sum.scalar[AG_S_OPS_REPLAYED],
			     (unsigned long long)sum.scalar[AG_S_OPS_EAGER],
			     (unsigned long long)sum.scalar[AG_S_FB_TIMEOUT]);
	}
	emit_sequences(&e);
	emit_kernels(&e);
	emit_others(&e);
	emit_unlearned(&e);
	emit_causes(&e);
	ag_emit_end(&e);
	close(fd);
}
