/* The cuBLAS door: dlopen("libcuda.so.1") and dlsym of each exact symbol (cuLaunchKernel,
 * cuLaunchKernelEx, cuMemcpyHtoDAsync_v2 ...), the _ptsz/_ptds symbols for --ptds. */
#define _GNU_SOURCE
#include "drv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

const char drv_door[] = "dlsym";

static void *lookup(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "%s:%d: dlsym(%s) failed: %s\n", __FILE__, __LINE__, name, dlerror());
        exit(2);
    }
    return p;
}

void drv_open(struct drv *d, int per_thread)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "%s:%d: dlopen(libcuda.so.1) failed: %s\n", __FILE__, __LINE__, dlerror());
        exit(2);
    }
#define DRV_LOOKUP(member, base, version, sym, ptsym)                                              \
    d->member = (__typeof__(d->member))lookup(h, per_thread ? #ptsym : #sym);
    DRV_FUNCS(DRV_LOOKUP)
#undef DRV_LOOKUP
}
