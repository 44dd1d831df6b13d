/* Unit tests of the self-measurement's sampler (src/stats.h, src/stats.c): a thread's first
 * measured call is sampled, then about one in AG_STATS_SAMPLE_MEAN, with gaps of 1 to
 * 2 x mean - 1 that every thread takes in the same order; a loop of the mean's length is
 * sampled at each of its places; calls not sampled time nothing, and a sampled call times
 * the driver calls inside it, each less one clock read. */
#include "stats.h"

#include <pthread.h>
#include <string.h>

#include "unit.h"

#define CALLS 160000
#define FIRST 1000

/* One measured wrapper with no driver call in it: 1 if it was sampled. */
static int call(struct ag_stats_block *b)
{
	struct ag_stats_clock c;
	ag_stats_clock_in(b, &c);
	int sampled = c.t0 != 0;
	CHECK(ag_stats_timing() == sampled, "timing %d while the call is %s", ag_stats_timing(),
	      sampled ? "sampled" : "not sampled");
	ag_stats_clock_out(b, &c);
	return sampled;
}

static int first_samples[FIRST];

static void *other_thread(void *arg)
{
	(void)arg;
	struct ag_stats_block *b = ag_stats_block();
	for (int i = 0; i < FIRST; i++)
		first_samples[i] = call(b);
	return NULL;
}

int main(void)
{
	CHECK(ag_stats_tls == NULL, "a block before the first call");
	struct ag_stats_block *b = ag_stats_block();
	int mine[FIRST];
	long samples = 0, gaps[2 * AG_STATS_SAMPLE_MEAN + 1] = {0}, at[AG_STATS_SAMPLE_MEAN] = {0};
	int last = -1, bad_gap = 0;
	for (int i = 0; i < CALLS; i++) {
		int s = call(b);
		if (i < FIRST)
			mine[i] = s;
		if (!s)
			continue;
		samples++;
		at[i % AG_STATS_SAMPLE_MEAN]++;
		if (last >= 0) {
			int g = i - last;
			if (g < 1 || g > 2 * AG_STATS_SAMPLE_MEAN - 1)
				bad_gap = g;
			else
				gaps[g]++;
		}
		last = i;
	}
	CHECK(mine[0] == 1, "a thread's first call was not sampled");
	CHECK(bad_gap == 0, "a gap of %d calls", bad_gap);
	for (int g = 1; g <= 2 * AG_STATS_SAMPLE_MEAN - 1; g++)
		CHECK(gaps[g] > 0, "no gap of %d calls", g);
	/* the mean gap is 16: 10,000 samples in 160,000 calls, give or take 2% */
	CHECK(samples > CALLS / AG_STATS_SAMPLE_MEAN * 98 / 100 &&
		      samples < CALLS / AG_STATS_SAMPLE_MEAN * 102 / 100,
	      "%ld samples in %d calls", samples, CALLS);
	CHECK(b->ticks[AG_T_SELF_CALLS] == (uint64_t)samples, "%llu sampled calls counted, %ld made",
	      (unsigned long long)b->ticks[AG_T_SELF_CALLS], samples);
	/* a loop of 16 calls is sampled at each of its places, none more than twice as often */
	for (int p = 0; p < AG_STATS_SAMPLE_MEAN; p++)
		CHECK(at[p] > samples / AG_STATS_SAMPLE_MEAN / 2 && at[p] < samples / AG_STATS_SAMPLE_MEAN * 2,
		      "place %d of 16 sampled %ld times of %ld", p, at[p], samples);

	/* another thread samples the same places */
	pthread_t t;
	CHECK(pthread_create(&t, NULL, other_thread, NULL) == 0, "pthread_create");
	CHECK(pthread_join(t, NULL) == 0, "pthread_join");
	CHECK(memcmp(mine, first_samples, sizeof mine) == 0, "another thread sampled other places");

	/* a sampled call times its driver calls, less one read each; an unsampled one none */
	uint64_t driver = b->ticks[AG_T_DRIVER], eager = b->ticks[AG_T_EAGER_OPS];
	int timed = 0, untimed = 0;
	for (int i = 0; i < 200; i++) {
		struct ag_stats_clock c;
		ag_stats_clock_in(b, &c);
		if (ag_stats_timing()) {
			ag_stats_driver_time(AG_DRIVER_EAGER_OP, ag_stats_stamp + 1000);
			timed++;
		} else {
			untimed++;
		}
		ag_stats_clock_out(b, &c);
	}
	CHECK(timed > 0 && untimed > 0, "%d timed, %d not", timed, untimed);
	CHECK(b->ticks[AG_T_EAGER_OPS] - eager == (uint64_t)timed, "%llu eager ops timed of %d",
	      (unsigned long long)(b->ticks[AG_T_EAGER_OPS] - eager), timed);
	CHECK(b->ticks[AG_T_DRIVER] - driver == 1000 * (uint64_t)timed, "%llu driver ticks for %d",
	      (unsigned long long)(b->ticks[AG_T_DRIVER] - driver), timed);
	CHECK(b->depth == 0 && b->timing == 0, "depth %u, timing %u after the calls", b->depth,
	      b->timing);
	return unit_done();
}
