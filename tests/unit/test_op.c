/* Unit tests of what an operation is (src/engine/op.c): descriptions and their hashes, the
 * field-by-field comparison of a call with a recorded operation, launch attributes
 * compared by the member their id selects, and which operations can be graph nodes
 * (page-locked host ranges and timing events from facts.c). */
#include "engine_fixture.h"
#include "unit.h"

static struct ag_op describe(struct ag_stream *st, const struct ag_call *c, struct ag_kern *k)
{
    struct ag_op op;
    ag_op_describe(st, c, k, 0, &op);
    return op;
}

static void kernels(struct ag_stream *st)
{
    struct ag_kern *k = fixture_kernel(0x1000);
    struct fixture_args v = {.p = 0xd000, .n = 7, .a = 0.5f};
    struct ag_call c = fixture_launch(k, &v, 4);
    struct ag_op a = describe(st, &c, k);
    CHECK(a.nodeable && a.argbytes == 16, "nodeable %d argbytes %u", a.nodeable, a.argbytes);
    CHECK(a.call.u.kern.params == NULL, "the recorded call keeps no pointer into the caller's stack");
    struct ag_op b = describe(st, &c, k);
    CHECK(a.hash == b.hash && a.shape == b.shape, "the same call twice: the same hashes");
    CHECK(ag_op_same_shape(&a, &c) && ag_op_same_args(k, &c, a.args), "a call equals its record");

    v.n = 8;
    struct ag_op d = describe(st, &c, k);
    CHECK(d.shape == a.shape && d.hash != a.hash, "an argument value changes the hash, not the shape");
    CHECK(ag_op_same_shape(&a, &c) && !ag_op_same_args(k, &c, a.args),
          "same shape, different arguments");
    CHECK(ag_op_args_hash(&a, d.args) == d.hash, "the hash of new arguments is the hash of their op");

    struct ag_call g = fixture_launch(k, &v, 5);
    struct ag_op e = describe(st, &g, k);
    CHECK(e.shape != a.shape && !ag_op_same_shape(&a, &g), "the grid is part of the shape");
    g = c;
    g.u.kern.shmem = 128;
    CHECK(!ag_op_same_shape(&a, &g), "so is dynamic shared memory");
    g = c;
    g.api = AG_LAUNCH_EX;
    CHECK(!ag_op_same_shape(&a, &g), "and the entry point it came through");

    struct ag_kern *nolayout = fixture_kernel(0x2000);
    nolayout->layout_ok = 0;
    struct ag_call n = fixture_launch(nolayout, &v, 4);
    CHECK(!describe(st, &n, nolayout).nodeable, "no parameter layout: not a graph node");
    nolayout->layout_ok = 1;
    nolayout->graphable = 0;
    CHECK(!describe(st, &n, nolayout).nodeable, "excluded by AUTOGRAPH_EXCLUDE: not a graph node");
}

static void attributes(struct ag_stream *st)
{
    struct ag_kern *k = fixture_kernel(0x3000);
    struct fixture_args v = {.p = 0xd000, .n = 7, .a = 0.5f};
    struct ag_call c = fixture_launch(k, &v, 4);
    c.api = AG_LAUNCH_EX;
    CUlaunchAttribute x, y;
    memset(&x, 0x11, sizeof x);
    memset(&y, 0x77, sizeof y);
    x.id = y.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    x.value.priority = y.value.priority = 3;
    c.u.kern.attrs = &x;
    c.u.kern.nattrs = 1;
    struct ag_op a = describe(st, &c, k);
    struct ag_call d = c;
    d.u.kern.attrs = &y;
    struct ag_op b = describe(st, &d, k);
    CHECK(a.shape == b.shape && ag_op_same_shape(&a, &d),
          "unset union bytes of an attribute do not make a launch look new");
    y.value.priority = 4;
    CHECK(!ag_op_same_shape(&a, &d) && describe(st, &d, k).shape != a.shape,
          "the member the id selects does");

    /* An id this build does not know is compared by its whole value. */
    CUlaunchAttribute u1, u2;
    memset(&u1, 0, sizeof u1);
    memset(&u2, 0, sizeof u2);
    u1.id = u2.id = (CUlaunchAttributeID)99;
    u2.value.pad[40] = 1;
    c.u.kern.attrs = &u1;
    struct ag_op e = describe(st, &c, k);
    d.u.kern.attrs = &u2;
    CHECK(!ag_op_same_shape(&e, &d), "unknown ids compare every byte");
}

static void copies_and_events(struct ag_stream *st)
{
    static char host[4096];
    struct ag_call c;
    memset(&c, 0, sizeof c);
    c.kind = AG_OP_COPY;
    c.api = AG_COPY_HTOD;
    c.u.copy.dst = 0xd000;
    c.u.copy.src = (CUdeviceptr)(uintptr_t)(host + 100);
    c.u.copy.bytes = 256;
    CHECK(!describe(st, &c, NULL).nodeable, "a copy from pageable memory is not a graph node");
    ag_engine_pinned_add(host, sizeof host);
    CHECK(describe(st, &c, NULL).nodeable, "from a page-locked range it is");
    c.u.copy.bytes = sizeof host;
    CHECK(!describe(st, &c, NULL).nodeable, "not when it runs past the end of the range");
    c.u.copy.bytes = 256;
    ag_engine_pinned_remove(host);
    CHECK(!describe(st, &c, NULL).nodeable, "nor after the range is unregistered");
    c.api = AG_COPY_DTOD;
    c.u.copy.src = 0xe000;
    CHECK(describe(st, &c, NULL).nodeable, "device to device always is");

    struct ag_call ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = AG_OP_EVENT;
    ev.u.event.ev = (CUevent)0x7000;
    CHECK(!describe(st, &ev, NULL).nodeable, "an event the library has not seen created is not");
    ag_engine_event_created((CUevent)0x7000, CU_EVENT_DISABLE_TIMING);
    CHECK(describe(st, &ev, NULL).nodeable, "an event created without timing is");
    ag_engine_event_created((CUevent)0x7001, CU_EVENT_DEFAULT);
    ev.u.event.ev = (CUevent)0x7001;
    CHECK(!describe(st, &ev, NULL).nodeable, "a timing event keeps its eager semantics");
}

int main(void)
{
    struct ag_stream *st = fixture_stream();
    kernels(st);
    attributes(st);
    copies_and_events(st);
    return unit_done();
}
