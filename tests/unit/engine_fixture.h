/* Shared by the engine's unit tests: a stream state with its buffers, fake kernel
 * descriptions, and calls built the way the hook layer builds them. */
#ifndef AG_ENGINE_FIXTURE_H
#define AG_ENGINE_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/op.h"
#include "stats.h"

uint64_t unit_stat(enum ag_scalar s); /* stub_driver.c */

static inline struct ag_stream *fixture_stream(void)
{
    static int loaded;
    if (!loaded) {
        ag_opt_load();
        loaded = 1;
    }
    struct ag_stream *st = calloc(1, sizeof *st);
    if (!st || !ag_history_alloc(st))
        abort();
    st->handle = (CUstream)0x5000;
    st->blocking = 1;
    return st;
}

/* A kernel with parameters (pointer, int, float): 16 bytes, dense. */
static inline struct ag_kern *fixture_kernel(uintptr_t handle)
{
    struct ag_kern *k = calloc(1, sizeof *k + 8);
    static uint16_t offset[] = {0, 8, 12}, size[] = {8, 4, 4};
    k->handle = handle;
    k->argbytes = 16;
    k->nparams = 3;
    k->layout_ok = k->graphable = k->dense = 1;
    k->offset = offset;
    k->size = size;
    return k;
}

struct fixture_args {
    CUdeviceptr p;
    int n;
    float a;
    void *params[3];
};

static inline struct ag_call fixture_launch(struct ag_kern *k, struct fixture_args *v, unsigned grid)
{
    struct ag_call c;
    memset(&c, 0, sizeof c);
    c.kind = AG_OP_KERNEL;
    c.api = AG_LAUNCH_PLAIN;
    c.stream = (CUstream)0x5000;
    c.u.kern.f = (CUfunction)k->handle;
    c.u.kern.grid[0] = grid, c.u.kern.grid[1] = c.u.kern.grid[2] = 1;
    c.u.kern.block[0] = 64, c.u.kern.block[1] = c.u.kern.block[2] = 1;
    v->params[0] = &v->p, v->params[1] = &v->n, v->params[2] = &v->a;
    c.u.kern.params = v->params;
    return c;
}

#endif
