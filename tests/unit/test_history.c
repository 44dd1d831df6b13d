/* Unit tests of a stream's history (src/engine/history.c): the argument arena's alignment,
 * wrap and liveness, and the ring slot each observed operation is described into. */
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
    return unit_done();
}
