/*
 * The ledger of learned sequences: what became of each (operations, the
 * kernel it launches most, replays, instantiations, and why it stopped being
 * replayed), kept when a sequence is freed (a module unload or a context
 * release frees them all, often just before exit) so that the exit report and
 * `autograph analyze` can still say it. At most LEDGER entries are kept; the
 * ones that replayed least give way.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "names.h"


#define LEDGER 512

static struct ag_ledger_entry entries[LEDGER];
static unsigned used;
static unsigned long long given_way;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void ag_ledger_describe(const struct ag_stream *st, const struct ag_seq *s, struct ag_ledger_entry *e)
{
	memset(e, 0, sizeof *e);
	e->id = s->id;
	e->n = s->n;
	e->replays = s->replays;
	e->instantiations = s->instantiations;
	e->why = s->why;
	e->fate = s->broken ? "its graph could not be built"
		  : s->reinstantiated ? "set aside: instantiated again on most replays"
		  : st && st->observed < s->disabled_until ? "set aside: diverged on most runs, or waited for the timer"
		  : s->replays ? "replayed"
			       : "never replayed: no later run matched it whole";
	const struct ag_kern *best = NULL;
	unsigned best_n = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct ag_kern *k = s->ops[i].call.kind == AG_OP_KERNEL ? s->ops[i].k : NULL;
		if (!k) {
			e->others++;
			continue;
		}
		unsigned n = 0, first = 1;
		for (uint32_t j = 0; j < s->n; j++) {
			if (s->ops[j].k == k) {
				n++;
				first &= j >= i;
			}
		}
		e->kernels += first;
		if (n > best_n)
			best = k, best_n = n;
	}
	e->top_launches = best_n;
	if (best && !ag_name_qualified(best->name, e->kernel, sizeof e->kernel))
		snprintf(e->kernel, sizeof e->kernel, "%s", best->name);
}

void ag_ledger_retire(const struct ag_stream *st, const struct ag_seq *s)
{
	if (!s->replays_accounted)
		ag_account_replays(s);
	pthread_mutex_lock(&lock);
	unsigned slot = used;
	if (used == LEDGER) {
		slot = 0;
		for (unsigned i = 1; i < LEDGER; i++)
			if ((uint64_t)entries[i].replays * entries[i].n < (uint64_t)entries[slot].replays * entries[slot].n)
				slot = i;
		given_way++;
		if ((uint64_t)entries[slot].replays * entries[slot].n > (uint64_t)s->replays * s->n) {
			pthread_mutex_unlock(&lock);
			return;
		}
	} else {
		used++;
	}
	ag_ledger_describe(st, s, &entries[slot]);
	pthread_mutex_unlock(&lock);
}

struct each {
	void (*fn)(const struct ag_ledger_entry *, void *);
	void *arg;
};

/* At exit other threads may still submit: a stream whose lock is taken is left out. */
static void live(struct ag_stream *st, void *arg)
{
	const struct each *x = arg;
	if (st == ag_stream_locked || !ag_stream_trylock(st))
		return;
	for (const struct ag_seq *s = st->seqs; s; s = s->next) {
		struct ag_ledger_entry e;
		ag_ledger_describe(st, s, &e);
		x->fn(&e, x->arg);
	}
	ag_stream_unlock(st);
}

unsigned long long ag_ledger_each(void (*fn)(const struct ag_ledger_entry *, void *), void *arg)
{
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < used; i++)
		fn(&entries[i], arg);
	unsigned long long dropped = given_way;
	pthread_mutex_unlock(&lock);
	struct each x = {fn, arg};
	ag_stream_for_each(live, &x);
	return dropped;
}
