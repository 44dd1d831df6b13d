/* Unit tests of when a learned sequence is set aside (src/engine/policy.c), driven
 * by events alone, as the policy is (no judgement takes a duration): a sequence the AUTOGRAPH_FLUSH_US timer flushes on runs in a row, or
 * on more than a quarter of its runs, is set aside (the program waits for its held work);
 * one the timer flushes now and then, with completed runs between, is not (run 12: two
 * scheduling gaps set a PyTorch training step aside); a sequence diverging on most runs
 * is set aside, and the time set aside doubles; one instantiated again on most replays
 * (more live graphs than AUTOGRAPH_MAX_GRAPHS) is no longer graphed; a stream with no
 * sign of repetition for AUTOGRAPH_IDLE_OPS operations pauses for 4 times as many, then
 * twice the last pause up to 64 times, and a sign of repetition starts the count over. */
#include "engine_fixture.h"
#include "unit.h"

static struct ag_seq *fixture_seq(void)
{
    struct ag_seq *seq = calloc(1, sizeof *seq);
    if (!seq)
        abort();
    seq->n = 8;
    ag_policy_learned(seq);
    return seq;
}

/* One run that completed and launched its graph. */
static void replay(struct ag_stream *st, struct ag_seq *seq)
{
    seq->hold_starts++;
    ag_policy_replayed(st, seq);
    st->observed += seq->n;
}

/* One run the timer flushed. */
static void flushed_by_timer(struct ag_stream *st, struct ag_seq *seq)
{
    seq->hold_starts++;
    ag_policy_timed_out(st, seq);
    st->observed += seq->n;
}

int main(void)
{
    struct ag_stream *st = fixture_stream();

    struct ag_seq *gaps = fixture_seq();
    for (int i = 0; i < 50; i++) {
        replay(st, gaps);
        if (i % 5 == 2)
            flushed_by_timer(st, gaps);
    }
    CHECK(ag_policy_allows(st, gaps), "10 timer flushes, each between completed runs: still graphed");

    struct ag_seq *waits = fixture_seq();
    replay(st, waits);
    flushed_by_timer(st, waits);
    CHECK(ag_policy_allows(st, waits), "one timer flush is tolerated");
    flushed_by_timer(st, waits);
    CHECK(!ag_policy_allows(st, waits), "flushed by the timer on two runs in a row: set aside");
    uint64_t until = waits->disabled_until;
    CHECK(until == st->observed + 1024 - 8, "set aside for 1024 operations (until %llu, now %llu)",
          (unsigned long long)until, (unsigned long long)st->observed);
    st->observed = until;
    CHECK(ag_policy_allows(st, waits), "tried again once that many operations were observed");
    flushed_by_timer(st, waits);
    flushed_by_timer(st, waits);
    CHECK(waits->disabled_until == st->observed + 2048 - 8, "the second time for twice as long");

    /* A program that waits for held work on every other run completes the runs between. */
    struct ag_seq *every_other = fixture_seq();
    int runs = 0;
    while (ag_policy_allows(st, every_other) && runs < 100) {
        replay(st, every_other);
        flushed_by_timer(st, every_other);
        runs += 2;
    }
    CHECK(runs == 8, "flushed by the timer on every other run: set aside after 8 runs (got %d)", runs);

    struct ag_seq *thrash = fixture_seq();
    for (int i = 0; i < 7; i++) {
        thrash->hold_starts++;
        ag_policy_diverged(st, thrash);
    }
    CHECK(ag_policy_allows(st, thrash), "7 divergent runs are too few to judge");
    thrash->hold_starts++;
    ag_policy_diverged(st, thrash);
    CHECK(!ag_policy_allows(st, thrash), "8 runs, all diverged: set aside");

    /* graph.c counts an instantiation per executable built; eviction makes one per replay. */
    struct ag_seq *kept = fixture_seq(), *evicted = fixture_seq();
    kept->instantiations = 1;
    for (int i = 0; i < 100; i++)
        replay(st, kept);
    CHECK(ag_policy_allows(st, kept), "100 replays of one executable: still graphed");
    int replays = 0;
    while (ag_policy_allows(st, evicted) && replays < 100) {
        evicted->instantiations++;
        replay(st, evicted);
        replays++;
    }
    CHECK(replays == 16, "instantiated on every replay: no longer graphed after 16 (got %d)", replays);

    /* Idle streams: counted in observed operations. */
    ag_opt.num[AG_OPT_IDLE_OPS] = 10;
    struct ag_stream *idle = fixture_stream();
    for (int i = 0; i < 9; i++)
        ag_policy_observed(idle);
    CHECK(idle->unobserved == 0, "9 operations with no sign of repetition: still observed");
    ag_policy_observed(idle);
    CHECK(idle->unobserved == 40, "the 10th: a pause of 4 x 10 (got %llu)", (unsigned long long)idle->unobserved);
    CHECK(unit_stat(AG_S_IDLE_PAUSES) == 1, "counted as an idle pause");
    uint64_t pauses[8];
    for (int p = 0; p < 8; p++) {
        idle->unobserved = 0; /* the engine submitted the pause's operations */
        for (int i = 0; i < 10; i++)
            ag_policy_observed(idle);
        pauses[p] = idle->unobserved;
    }
    CHECK(pauses[0] == 80 && pauses[1] == 160 && pauses[2] == 320 && pauses[3] == 640 && pauses[4] == 640 &&
          pauses[7] == 640, "each next pause twice the last, up to 64 x 10 (got %llu %llu %llu %llu %llu)",
          (unsigned long long)pauses[0], (unsigned long long)pauses[1], (unsigned long long)pauses[2],
          (unsigned long long)pauses[3], (unsigned long long)pauses[4]);
    idle->unobserved = 0;
    for (int i = 0; i < 9; i++)
        ag_policy_observed(idle);
    ag_policy_repeating(idle);
    for (int i = 0; i < 9; i++)
        ag_policy_observed(idle);
    CHECK(idle->unobserved == 0, "a sign of repetition starts the count over");
    ag_policy_observed(idle);
    CHECK(idle->unobserved == 40, "and the next pause is the first one's length again (got %llu)",
          (unsigned long long)idle->unobserved);
    ag_opt.num[AG_OPT_IDLE_OPS] = 0;
    struct ag_stream *always = fixture_stream();
    for (int i = 0; i < 100000; i++)
        ag_policy_observed(always);
    CHECK(always->unobserved == 0, "AUTOGRAPH_IDLE_OPS=0: never paused");
    return unit_done();
}
