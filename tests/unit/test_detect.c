/* Unit tests of finding repeats (src/engine/detect.c) and of learned sequences
 * (src/engine/seq.c), on synthetic operation streams: a segment seen AUTOGRAPH_WARMUP
 * times becomes a sequence; long segments start with a quarter-length piece; an unsynced
 * loop is found by its period; sequences are indexed by their first operation; and which
 * sequences are learned depends only on which hashes are equal, never on their values
 * (issue 8, pattern 14). Graph builds fail against the stub driver, which only marks
 * the sequences broken. */
#include "engine_fixture.h"
#include "unit.h"

static uint64_t epoch = 1;

/* One observed operation: a memset whose hash is given (shape = hash). */
static void observe(struct ag_stream *st, uint64_t hash)
{
    struct ag_op *op = ag_history_next(st);
    memset(op, 0, sizeof *op);
    op->call.kind = AG_OP_MEMSET;
    op->hash = op->shape = hash;
    op->nodeable = 1;
    op->epoch = epoch;
    ag_detect_commit(st);
}

/* A sync: the segment being observed ends (as it does when the next operation comes). */
static void boundary(struct ag_stream *st)
{
    ag_detect_epoch(st, ++epoch);
}

static void segment(struct ag_stream *st, uint64_t base, int n)
{
    for (int i = 0; i < n; i++)
        observe(st, base + (uint64_t)i);
    boundary(st);
}

static unsigned count_seqs(const struct ag_stream *st, uint32_t *total_ops)
{
    unsigned n = 0;
    *total_ops = 0;
    for (const struct ag_seq *s = st->seqs; s; s = s->next, n++)
        *total_ops += s->n;
    return n;
}

static void segments(void)
{
    struct ag_stream *st = fixture_stream();
    uint32_t ops;
    segment(st, 100, 8);
    CHECK(count_seqs(st, &ops) == 0, "one sight learns nothing");
    segment(st, 100, 8);
    unsigned n = count_seqs(st, &ops);
    CHECK(n == 1 && ops == 8, "seen WARMUP=2 times: one sequence of 8 ops (got %u, %u ops)", n, ops);
    CHECK(ag_seq_first(st, 100) == st->seqs, "indexed by the hash of its first operation");
    segment(st, 100, 8);
    CHECK(count_seqs(st, &ops) == 1, "seen again: not learned twice");

    segment(st, 1000, 64);
    segment(st, 1000, 64);
    CHECK(count_seqs(st, &ops) == 3 && ops == 8 + 64, "64 ops after a sync: a 16-op lead, then the rest");
    CHECK(ag_seq_first(st, 1000) && ag_seq_first(st, 1000)->n == 16, "the lead starts the segment");
}

static void determinism(void)
{
    /* 40 segments in turn, twice each: all 40 learned, whatever their hash values; with
     * hash values that shared slots of a 256-entry table the old tables lost some. */
    for (int run = 0; run < 2; run++) {
        struct ag_stream *st = fixture_stream();
        uint64_t salt = run ? 0x100 : 0x9e3779b97f4a7c15ull;
        for (int rep = 0; rep < 2; rep++)
            for (uint64_t v = 0; v < 40; v++)
                segment(st, salt * (v + 1), 4);
        uint32_t ops;
        unsigned n = count_seqs(st, &ops);
        CHECK(n == 40, "run %d: 40 segments learned, got %u", run, n);
    }
}

static void periods(void)
{
    struct ag_stream *st = fixture_stream();
    /* An unsynced loop of a 10-op body, long enough to be committed. */
    for (int it = 0; it < 60; it++)
        for (uint64_t i = 0; i < 10; i++)
            observe(st, 5000 + i);
    uint32_t ops;
    unsigned n = count_seqs(st, &ops);
    CHECK(n >= 1 && ops % 10 == 0, "a loop without syncs is found by its period (%u seqs, %u ops)", n, ops);

    /* The same op twice inside the body does not fool it: the period is the whole body. */
    struct ag_stream *t = fixture_stream();
    uint64_t body[] = {1, 2, 3, 1, 4, 5, 6, 7};
    for (int it = 0; it < 80; it++)
        for (int i = 0; i < 8; i++)
            observe(t, 7000 + body[i]);
    n = count_seqs(t, &ops);
    CHECK(n >= 1 && ops % 8 == 0, "an op recurring inside the body: %u seqs, %u ops", n, ops);
}

static void chained_first(void)
{
    struct ag_stream *st = fixture_stream();
    /* Two segments that start with the same operation: both reachable from it. */
    for (int rep = 0; rep < 2; rep++) {
        observe(st, 1), observe(st, 2), observe(st, 3);
        boundary(st);
        observe(st, 1), observe(st, 4), observe(st, 5);
        boundary(st);
    }
    const struct ag_seq *s = ag_seq_first(st, 1);
    CHECK(s && s->same_first && !s->same_first->same_first, "two sequences chained by first op");
    CHECK(s && s->ops[1].hash == 4, "the newest first");
    ag_seq_forget_all(st);
    CHECK(!st->seqs && !ag_seq_first(st, 1), "forgotten: nothing left to start");
}

int main(void)
{
    segments();
    determinism();
    periods();
    chained_first();
    return unit_done();
}
