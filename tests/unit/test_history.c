/* Unit tests of a stream's history (src/engine/history.c): the argument arena's alignment,
 * wrap and liveness, the ring slot each observed operation is described into, and what
 * memory going away does to it. */
#include "engine_fixture.h"
#include "unit.h"

int main(void)
{
    struct ag_stream *st = fixture_stream();
    uint64_t pos, prev_end = 0;
    uint8_t *p = ag_arena_alloc(st, 5, &pos);
    CHECK(p == st->arena && pos == 0 && st->arena_head == 8, "5 bytes take 8: head %llu",
          (unsigned long long)st->arena_head);
    CHECK(ag_arena_alloc(st, AG_ARENA / 8 + 1, &pos) == NULL, "more than an eighth is refused");

    /* Fill to just before the end, then ask for more than is left: it wraps to 0. */
    size_t chunk = AG_ARENA / 8;
    for (int i = 0; i < 7; i++) {
        p = ag_arena_alloc(st, chunk, &pos);
        prev_end = pos + chunk;
    }
    CHECK(p && prev_end == 8 + 7 * chunk, "seven eighths after the first 8 bytes");
    p = ag_arena_alloc(st, chunk, &pos);
    CHECK(p == st->arena && pos == AG_ARENA, "a piece that does not fit at the end starts over");

    struct ag_op old = {.argbytes = 16, .arena_pos = 8};
    CHECK(!ag_arena_alive(st, &old) || st->arena_head - old.arena_pos <= AG_ARENA,
          "liveness follows the distance to the head");
    for (int i = 0; i < 8; i++)
        ag_arena_alloc(st, chunk, &pos);
    CHECK(!ag_arena_alive(st, &old), "overwritten arguments are no longer alive");
    struct ag_op none = {.argbytes = 0, .arena_pos = 0};
    CHECK(ag_arena_alive(st, &none), "an operation without arguments always is");

    st->observed = AG_HIST + 3;
    CHECK(ag_history_next(st) == &st->hist[3], "the ring slot wraps with the count");
    uint64_t e0 = ag_history_epoch_of(st);
    ag_history_boundary(st);
    CHECK(ag_history_epoch_of(st) == e0 + 1, "a stream boundary moves its epoch");
    ag_history_boundary_all();
    CHECK(ag_history_epoch_of(st) == e0 + 2, "so does a boundary of all streams");

    /* Memory going away: windows may not start at or before an operation that touched it
     * (a sequence learned from it later would replay a copy of memory that is gone). */
    st->observed = 10, st->gap = 0;
    for (uint64_t i = 0; i < 10; i++)
        st->hist[i] = (struct ag_op){.call = {.kind = AG_OP_COPY, .u.copy = {.dst = 0x1000 + 0x100 * i,
                                                                              .src = 0x9000, .bytes = 0x100}}};
    ag_history_forget_touching(st, 0x20000, 0x30000);
    CHECK(st->gap == 0, "memory no observed operation touched leaves the history alone");
    ag_history_forget_touching(st, 0x1450, 0x1460);
    CHECK(st->gap == 10 && st->seg_start == 10, "memory an observed copy wrote: no window reaches back (gap %llu)",
          (unsigned long long)st->gap);
    st->observed = 20;
    ag_history_forget_touching(st, 0x1450, 0x1460);
    CHECK(st->gap == 10, "operations before the gap are not looked at again");
    return unit_done();
}
