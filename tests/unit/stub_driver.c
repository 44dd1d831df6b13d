/* The real-driver table for unit tests: every slot starts empty and resolves to a function
 * that returns CUDA_ERROR_NOT_SUPPORTED, so engine code under test never reaches a driver;
 * a test puts its own fake into ag_real_fn[AG_FN_x] for the calls it wants answered. Also
 * a statistics block, so that counters can be bumped without the exit report. */
#include <dlfcn.h>

#include "driver/real.h"
#include "stats.h"

void *ag_real_fn[AG_FN_COUNT];

static CUresult not_supported(void)
{
    return CUDA_ERROR_NOT_SUPPORTED;
}

void *ag_real_resolve(int id)
{
    ag_real_fn[id] = (void *)not_supported;
    return ag_real_fn[id];
}

void ag_real_learn(int id, void *fn)
{
    if (!ag_real_fn[id])
        ag_real_fn[id] = fn;
}

int ag_real_is_ours(const void *p)
{
    (void)p;
    return 0;
}

void *ag_real_dlsym(void *handle, const char *name)
{
    return dlsym(handle, name);
}

void *ag_real_dlvsym(void *handle, const char *name, const char *version)
{
    return dlvsym(handle, name, version);
}

static struct ag_stats_block block; /* never sampled: no driver call is timed */
uint64_t ag_stats_stamp;
__thread struct ag_stats_block *ag_stats_tls __attribute__((tls_model("initial-exec"))) = &block;

struct ag_stats_block *ag_stats_block_new(void)
{
    return &block;
}

uint64_t unit_stat(enum ag_scalar s)
{
    return block.scalar[s];
}
