/*
 * When a learned sequence is not worth holding, with every constant of that
 * judgement in one place:
 *  - thrash: a sequence that diverges on most of its runs is set aside for a
 *    number of operations that doubles each time it happens again;
 *  - not faster: the cheapest of a sequence's first graph launches is
 *    compared with the estimated eager cost of its operations, from a sample
 *    of eager submissions on the stream.
 */

#include "engine/internal.h"
#include "log.h"
#include "stats.h"

#define THRASH_MIN_STARTS 8       /* runs before a sequence can be judged thrashing */
#define BACKOFF_START 1024u       /* operations a thrashing sequence is first set aside for */
#define BACKOFF_MAX (1u << 24)
#define NOT_FASTER_SAMPLES 8      /* graph launches timed per sequence */
#define NOT_FASTER_MARGIN 2       /* a graph launch may cost this many times the eager estimate */
#define EAGER_SAMPLE_MASK 15u     /* one eager submission in 16 is timed */
#define EVICTION_REPLAYS 16       /* replays before instantiations per replay are judged */
#define TIMEOUTS_TOLERATED 1      /* runs in a row the timer flushed before a sequence is set aside */
#define TIMEOUT_SHARE 4           /* ... or more than one run in this many, once it is judged */


void ag_policy_learned(struct ag_stream *st, struct ag_seq *seq)
{
	seq->eager_cycles = seq->n * st->eager_avg;
	seq->backoff = BACKOFF_START;
}

int ag_policy_allows(const struct ag_stream *st, const struct ag_seq *seq)
{
	return !seq->broken && !seq->slow && st->observed >= seq->disabled_until;
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

/* The cheapest of the first few graph launches against the eager estimate, with a margin: a
 * preempted measurement must not condemn a graph that pays. */
void ag_policy_graph_timed(struct ag_stream *st, struct ag_seq *seq, uint64_t cycles)
{
	seq->timeouts = 0; /* a run completed: the program did not wait for its held work */
	/* More live executables than AUTOGRAPH_MAX_GRAPHS: each replay instantiates again. */
	if (++seq->replays >= EVICTION_REPLAYS && 2 * seq->instantiations > seq->replays) {
		seq->slow = 1;
		ag_stats_add(AG_S_FB_NOT_FASTER, 1);
		AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u: instantiated on most replays "
		       "(more live graphs than AUTOGRAPH_MAX_GRAPHS); no longer graphed",
		       (void *)st->handle, seq->id);
		return;
	}
	if (seq->timed >= NOT_FASTER_SAMPLES)
		return;
	seq->graph_cycles = seq->timed && seq->graph_cycles < cycles ? seq->graph_cycles : cycles;
	if (++seq->timed == NOT_FASTER_SAMPLES && seq->eager_cycles &&
	    seq->graph_cycles > NOT_FASTER_MARGIN * seq->eager_cycles) {
		seq->slow = 1;
		ag_stats_add(AG_S_FB_NOT_FASTER, 1);
		AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u: graph launch not faster than eager (cheapest of %d "
		       "launches %llu cycles, its %u operations eagerly about %llu); no longer graphed",
		       (void *)st->handle, seq->id, NOT_FASTER_SAMPLES, (unsigned long long)seq->graph_cycles,
		       seq->n, (unsigned long long)seq->eager_cycles);
	}
}

CUresult ag_policy_submit_eager(struct ag_stream *st, const struct ag_call *c)
{
	if (st->observed & EAGER_SAMPLE_MASK)
		return ag_call_submit(c);
	uint64_t t0 = ag_policy_clock();
	CUresult rc = ag_call_submit(c);
	uint64_t dt = ag_policy_clock() - t0;
	st->eager_avg = st->eager_avg ? (7 * st->eager_avg + dt) / 8 : dt;
	return rc;
}
