/* Unit tests of the facts the engine keeps about memory and events (src/engine/facts.c):
 * page-locked ranges (inside, at the edges, straddling, between, after removal, many
 * ranges in any order) and event flags. */
#include <stdint.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "unit.h"

int main(void)
{
    static char a[1000], b[1000], c[1000];
    CHECK(!ag_engine_pinned(a, 10), "nothing registered");
    ag_engine_pinned_add(b, sizeof b);
    ag_engine_pinned_add(a, sizeof a);
    CHECK(ag_engine_pinned(a, sizeof a) && ag_engine_pinned(b + 999, 1), "whole ranges and edges");
    CHECK(!ag_engine_pinned(b + 999, 2), "one byte past the end is not pinned");
    CHECK(!ag_engine_pinned(c, 1), "another buffer is not");
    ag_engine_pinned_add(c, sizeof c);
    CHECK(ag_engine_pinned(c + 500, 500), "added after the others");
    ag_engine_pinned_remove(b);
    CHECK(!ag_engine_pinned(b, 1) && ag_engine_pinned(a, 1) && ag_engine_pinned(c, 1),
          "removing one keeps the others");

    /* Many ranges added in descending order stay sorted for the binary search. */
    static char pool[300][64];
    for (int i = 299; i >= 0; i -= 2)
        ag_engine_pinned_add(pool[i], sizeof pool[i]);
    int ok = 1;
    for (int i = 0; i < 300; i++)
        ok &= ag_engine_pinned(pool[i], 64) == (i % 2 == 1);
    CHECK(ok, "150 of 300 ranges, found exactly");

    struct ag_event_arg ea = {NULL, 123}, eb;
    CUevent ev = (CUevent)0x10;
    CHECK(!ag_facts_event_arg(ev, &ea) && ea.gen == 123, "unknown event");
    ag_engine_event_created(ev, CU_EVENT_DISABLE_TIMING);
    CHECK(ag_facts_event_arg(ev, &ea) && ea.ev == ev && ea.gen != 0, "an event without timing");
    ag_engine_event_created(ev, CU_EVENT_DEFAULT);
    CHECK(!ag_facts_event_arg(ev, &eb), "a handle reused for a timing event takes its flags");
    ag_engine_event_created(ev, CU_EVENT_DISABLE_TIMING);
    CHECK(ag_facts_event_arg(ev, &eb) && eb.gen != ea.gen,
          "a handle reused for a new event is another argument");
    ag_facts_event_forget(ev);
    CHECK(!ag_facts_event_arg(ev, &eb), "a destroyed event is not known");
    return unit_done();
}
