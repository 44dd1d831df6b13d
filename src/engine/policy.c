/*
 * When a learned sequence is not worth holding, with every constant of that
 * judgement in one place:
 *  - thrash: a sequence that diverges on most of its runs is set aside for a
 *    number of operations that doubles each time it happens again;
 *  - timer waits: one the AUTOGRAPH_FLUSH_US timer flushed on runs in a row,
 *    or on a share of its runs, is set aside the same way;
 *  - eviction thrash: one instantiated again on most replays (more live
 *    graphs than AUTOGRAPH_MAX_GRAPHS) is no longer graphed.
 *  - idle streams: one that shows no sign of repeating itself for
 *    AUTOGRAPH_IDLE_OPS operations is not observed for a while.
 * Every judgement counts events (runs, divergences, flushes, instantiations,
 * operations), never durations: the same program makes the same decisions on
 * every run.
 * Only the timer itself measures time, so that a program waiting on the host
 * for held work is not left waiting (hold.c, watchdog.c). A judgement that
 * timed graph launches against eager ones made the CG solver's decisions
 * differ in 2 of 5 runs on the H200 (run 13); a graph launch costs about
 * what one eager launch does, so a learned sequence of two or more
 * operations is not judged slower.
 */

#include "config.h"
#include "engine/internal.h"
#include "log.h"
#include "stats.h"

#define THRASH_MIN_STARTS 8       /* runs before a sequence can be judged thrashing */
#define BACKOFF_START 1024u       /* operations a thrashing sequence is first set aside for */
#define BACKOFF_MAX (1u << 24)
#define EVICTION_REPLAYS 16       /* replays before instantiations per replay are judged */
#define TIMEOUTS_TOLERATED 1      /* runs in a row the timer flushed before a sequence is set aside */
#define TIMEOUT_SHARE 4           /* ... or more than one run in this many, once it is judged */
#define PAUSE_FIRST 4             /* an idle stream's first pause, in AUTOGRAPH_IDLE_OPS */
#define PAUSE_MAX 64              /* each next one twice the last, up to this many */


void ag_policy_learned(struct ag_seq *seq)
{
	seq->backoff = BACKOFF_START;
}

int ag_policy_allows(const struct ag_stream *st, const struct ag_seq *seq)
{
	return !seq->broken && !seq->reinstantiated && st->observed >= seq->disabled_until;
}

static void set_aside(struct ag_stream *st, struct ag_seq *seq, const char *why)
{
	seq->disabled_until = st->observed + seq->backoff;
	if (seq->backoff < BACKOFF_MAX)
		seq->backoff *= 2;
	seq->hold_starts = seq->diverges = seq->timeouts = seq->flushed = 0;
	ag_stats_add(AG_S_FB_THRASH, 1);
	AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u %s; set aside for %u ops", (void *)st->handle,
	       seq->id, why, seq->backoff / 2);
}

void ag_policy_diverged(struct ag_stream *st, struct ag_seq *seq)
{
	seq->diverges++;
	if (seq->hold_starts >= THRASH_MIN_STARTS && 2 * seq->diverges > seq->hold_starts)
		set_aside(st, seq, "changes on most runs");
}

/*
 * The program waited on the host for work the sequence held (a host function
 * signalling a flag it spins on): every run would cost AUTOGRAPH_FLUSH_US.
 * Set aside like a thrashing sequence, so the cost is paid rarely, not always.
 * Runs flushed in a row count: a program that waits for held work on every
 * run never lets one complete, while a gap that a scheduler or a garbage
 * collector put into one run says nothing about the next (run 12: two such
 * gaps, replays apart, set a PyTorch training step aside for the rest of the
 * program). So does a share of the runs, like divergence: a program that waits
 * on every other run, or every third, completes runs in between.
 */
void ag_policy_timed_out(struct ag_stream *st, struct ag_seq *seq)
{
	seq->flushed++;
	if (++seq->timeouts > TIMEOUTS_TOLERATED)
		set_aside(st, seq, "made the program wait for the AUTOGRAPH_FLUSH_US timer on runs in a row");
	else if (seq->hold_starts >= THRASH_MIN_STARTS && TIMEOUT_SHARE * seq->flushed > seq->hold_starts)
		set_aside(st, seq, "made the program wait for the AUTOGRAPH_FLUSH_US timer on many runs");
}

/* A run completed: its graph was launched. */
void ag_policy_replayed(struct ag_stream *st, struct ag_seq *seq)
{
	seq->timeouts = 0; /* the program did not wait for its held work */
	/* More live executables than AUTOGRAPH_MAX_GRAPHS: each replay instantiates again. */
	if (++seq->replays >= EVICTION_REPLAYS && 2 * seq->instantiations > seq->replays) {
		seq->reinstantiated = 1;
		ag_stats_add(AG_S_FB_NOT_FASTER, 1);
		AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u: instantiated on most replays "
		       "(more live graphs than AUTOGRAPH_MAX_GRAPHS); no longer graphed",
		       (void *)st->handle, seq->id);
	}
}

/*
 * A stream that shows no sign of repeating itself (no hold started, no
 * segment and no loop seen again) for AUTOGRAPH_IDLE_OPS operations has
 * nothing to learn now, and observing it costs every operation a description
 * and a detection step (on the H100, 374 ns a launch against the driver's
 * 4405: 8.5%, run 16). Its next operations go to the driver unobserved:
 * PAUSE_FIRST times as many, then twice the last pause each time it is still
 * idle after one, up to PAUSE_MAX times; over a long run it is observed for
 * one operation in 65. Between pauses it is observed as before, so a loop
 * that begins later is still learned, late by at most one pause. The default
 * is four histories (AG_HIST): a segment the history can hold is seen a
 * second time within three, and a period up to AG_PERIOD_MAX is confirmed
 * within about three periods. Compare llama.cpp's ggml-cuda, which disables
 * its graphs after consecutive updates ("too many consecutive updates").
 */
void ag_policy_repeating(struct ag_stream *st)
{
	st->quiet = 0;
	st->pause = 0;
}

void ag_policy_observed(struct ag_stream *st)
{
	uint64_t idle = (uint64_t)ag_opt.num[AG_OPT_IDLE_OPS];
	if (++st->quiet < idle || !idle || st->held_seq)
		return;
	st->pause = st->pause ? 2 * st->pause : PAUSE_FIRST * idle;
	if (st->pause > PAUSE_MAX * idle)
		st->pause = PAUSE_MAX * idle;
	st->unobserved = st->pause;
	st->quiet = 0;
	ag_history_gap(st); /* no window spans the operations it does not see */
	ag_stats_add(AG_S_IDLE_PAUSES, 1);
	AG_LOG(AG_LOG_DEBUG, "stream %p: nothing learned, replayed or repeating in %llu operations; "
	       "the next %llu are not observed (AUTOGRAPH_IDLE_OPS)", (void *)st->handle,
	       (unsigned long long)idle, (unsigned long long)st->pause);
}
