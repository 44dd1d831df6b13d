/* Unit tests of when a learned sequence is set aside (src/engine/policy.c), driven
 * by events alone, as the policy is (no judgement takes a duration): a sequence the AUTOGRAPH_FLUSH_US timer flushes on runs in a row, or
 * on more than a quarter of its runs, is set aside (the program waits for its held work);
 * one the timer flushes now and then, with completed runs between, is not (run 12: two
 * scheduling gaps set a PyTorch training step aside); a sequence diverging on most runs
 * is set aside, and the time set aside doubles; one instantiated again on most replays
 * (more live graphs than AUTOGRAPH_MAX_GRAPHS) is no longer graphed. */
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
    return unit_done();
}
