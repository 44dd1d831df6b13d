/*
 * The bound on executables alive (AUTOGRAPH_MAX_GRAPHS): before one more is
 * instantiated, the least recently used executables of any stream go. An
 * evicted variant keeps its key and is instantiated again when next used.
 */
#include "config.h"
#include "engine/internal.h"
#include "driver/real.h"
#include "log.h"
#include "stats.h"

/*
 * Destroys least recently used executables until one more fits. Only
 * executables of streams whose lock can be taken without waiting are
 * candidates (the caller holds its own), and never the sequence a stream is
 * holding work for; if none can go, the bound is exceeded for now.
 */
struct victim {
	struct ag_variant *v;
	struct ag_stream *st;
};

static void consider(struct ag_stream *st, struct victim *best)
{
	for (struct ag_seq *s = st->seqs; s; s = s->next) {
		if (s == st->held_seq)
			continue;
		for (int i = 0; i < s->nvar; i++)
			if (s->var[i].exec && (!best->v || s->var[i].last_used < best->v->last_used)) {
				best->v = &s->var[i];
				best->st = st;
			}
	}
}

void ag_graph_make_room(void)
{
	while (__atomic_load_n(&ag_graph_count, __ATOMIC_RELAXED) >=
	       (unsigned)ag_opt.num[AG_OPT_MAX_GRAPHS]) {
		struct victim best = {NULL, NULL};
		struct ag_stream *mine = ag_stream_locked;
		if (mine)
			consider(mine, &best);
		int others = ag_stream_try_registry();
		struct ag_stream *locked_other = NULL;
		if (others) {
			for (struct ag_stream *st = ag_stream_all(); st; st = st->next_all) {
				if (st == mine || !ag_stream_trylock(st))
					continue;
				consider(st, &best);
				if (best.st == st) {
					if (locked_other)
						ag_stream_unlock(locked_other);
					locked_other = st;
				} else {
					ag_stream_unlock(st);
				}
			}
		}
		if (best.v) {
			AG_REAL(cuGraphExecDestroy)(best.v->exec);
			best.v->exec = NULL;
			__atomic_sub_fetch(&ag_graph_count, 1, __ATOMIC_RELAXED);
			ag_stats_add(AG_S_EVICTIONS, 1);
			AG_LOG(AG_LOG_DEBUG, "graph evicted to stay under AUTOGRAPH_MAX_GRAPHS=%ld",
			       ag_opt.num[AG_OPT_MAX_GRAPHS]);
		}
		if (locked_other)
			ag_stream_unlock(locked_other);
		if (others)
			ag_stream_unlock_registry();
		if (!best.v)
			return;
	}
}
