/* The cudart door: dlopen("libcuda.so.1"), dlsym "cuGetProcAddress_v2", the self-lookup
 * of "cuGetProcAddress" (versions 11030 and 12000) through that pointer, then every
 * entry point looked up through the self-looked-up pointer with (base name, version,
 * flags): flags 0, or CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM for --ptds, as a
 * program built with --default-stream per-thread does. */
#define _GNU_SOURCE
#include "drv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char drv_door[] = "cuGetProcAddress";

typedef __typeof__(&cuGetProcAddress_v2) gpa_v2_t;
typedef __typeof__(&cuGetProcAddress) gpa_v1_t;

static void *lookup(gpa_v2_t gpa, const char *name, int version, cuuint64_t flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult rc = gpa(name, &p, version, flags, &status);
    if (rc != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || !p) {
        fprintf(stderr, "%s:%d: cuGetProcAddress(\"%s\", %d, %llu) failed: rc %d, status %d\n",
                __FILE__, __LINE__, name, version, (unsigned long long)flags, (int)rc, (int)status);
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
    gpa_v2_t first = (gpa_v2_t)dlsym(h, "cuGetProcAddress_v2");
    if (!first) {
        fprintf(stderr, "%s:%d: dlsym(cuGetProcAddress_v2) failed: %s\n", __FILE__, __LINE__, dlerror());
        exit(2);
    }
    /* The self-lookup, as cudart does it: the 11.3 ABI (4 arguments) and the 12.0 one. */
    gpa_v1_t gpa11 = (gpa_v1_t)lookup(first, "cuGetProcAddress", 11030, 0);
    gpa_v2_t gpa = (gpa_v2_t)lookup(first, "cuGetProcAddress", 12000, 0);
    cuuint64_t flags = per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;

    /* One lookup through the 11.3 pointer, so that both self-lookup results are used. */
    void *p = NULL;
    CUresult rc = gpa11("cuDriverGetVersion", &p, 2020, 0);
    if (rc != CUDA_SUCCESS || !p) {
        fprintf(stderr, "%s:%d: cuGetProcAddress(11030)(\"cuDriverGetVersion\") failed: rc %d\n",
                __FILE__, __LINE__, (int)rc);
        exit(2);
    }
    d->DriverGetVersion = (__typeof__(d->DriverGetVersion))p;

    /* A per-thread variant's ABI dates from CUDA 7.0 (cudaTypedefs.h: PFN_cuMemcpyHtoD_v7000_ptds);
     * the driver answers an older version with CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT. */
#define DRV_VERSION(version, sym, ptsym)                                                           \
    (per_thread && strcmp(#sym, #ptsym) != 0 && (version) < 7000 ? 7000 : (version))
#define DRV_LOOKUP(member, base, version, sym, ptsym)                                              \
    if (!d->member)                                                                                \
        d->member = (__typeof__(d->member))lookup(gpa, #base, DRV_VERSION(version, sym, ptsym), flags);
    DRV_FUNCS(DRV_LOOKUP)
#undef DRV_LOOKUP
}
