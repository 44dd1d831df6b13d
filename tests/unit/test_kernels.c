/* Unit tests of the kernel table (src/engine/kernels.c) against fake parameter-info and
 * name queries: the layout of a CUfunction and of a CUkernel (cuFuncGetParamInfo refuses
 * a CUkernel), padding, a handle without parameter info, one entry per handle, the launch
 * ranking, AUTOGRAPH_EXCLUDE, forgetting every handle, and a full table (issue 8, 15.4). */
#include <stdlib.h>
#include <time.h>

#include "config.h"
#include "driver/real.h"
#include "engine/kernels.h"
#include "unit.h"

#define FUNC ((CUfunction)0x100)    /* (u64, u32, u32): dense, 16 bytes */
#define PADDED ((CUfunction)0x200)  /* (u32, u64): 4 bytes of padding */
#define KERNEL ((CUfunction)0x300)  /* a CUkernel with (u64) */
#define OPAQUE ((CUfunction)0x400)  /* parameter info not available */
#define NCCL_C ((CUfunction)0x500)  /* an NCCL collective, unmangled */
#define NCCL_CXX ((CUfunction)0x600) /* and as NCCL 2.19+ names them, mangled */

static CUresult func_param_info(CUfunction f, size_t i, size_t *off, size_t *size)
{
    static const size_t foff[] = {0, 8, 12}, fsize[] = {8, 4, 4}, poff[] = {0, 8}, psize[] = {4, 8};
    if (f == KERNEL)
        return CUDA_ERROR_INVALID_HANDLE;
    if (f == OPAQUE)
        return CUDA_ERROR_NOT_SUPPORTED;
    size_t n = f == FUNC ? 3 : 2;
    if (i >= n)
        return CUDA_ERROR_INVALID_VALUE;
    *off = f == FUNC ? foff[i] : poff[i];
    *size = f == FUNC ? fsize[i] : psize[i];
    return CUDA_SUCCESS;
}

static CUresult kernel_param_info(CUkernel k, size_t i, size_t *off, size_t *size)
{
    if ((CUfunction)k != KERNEL || i >= 1)
        return CUDA_ERROR_INVALID_VALUE;
    *off = 0, *size = 8;
    return CUDA_SUCCESS;
}

static CUresult func_name(const char **name, CUfunction f)
{
    *name = f == FUNC       ? "_Z4axpyPfif"
            : f == PADDED   ? "padded"
            : f == NCCL_C   ? "ncclKernel_AllReduce_RING_LL_Sum_float"
            : f == NCCL_CXX ? "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"
                            : "opaque";
    return CUDA_SUCCESS;
}

static CUresult kernel_name(const char **name, CUkernel k)
{
    (void)k;
    *name = "a_kernel";
    return CUDA_SUCCESS;
}

int main(void)
{
    setenv("AUTOGRAPH_EXCLUDE", "padded", 1);
    ag_opt_load();
    ag_real_fn[AG_FN_cuFuncGetParamInfo] = (void *)func_param_info;
    ag_real_fn[AG_FN_cuKernelGetParamInfo] = (void *)kernel_param_info;
    ag_real_fn[AG_FN_cuFuncGetName] = (void *)func_name;
    ag_real_fn[AG_FN_cuKernelGetName] = (void *)kernel_name;

    struct ag_kern *f = ag_kern_get(FUNC);
    CHECK(f && f->layout_ok && f->nparams == 3 && f->argbytes == 16 && f->dense && !f->is_kernel,
          "CUfunction layout");
    CHECK(f && f->offset[2] == 12 && f->size[2] == 4, "offsets and sizes as the driver reports them");
    CHECK(f && f->graphable, "not excluded");
    CHECK(ag_kern_get(FUNC) == f, "one entry per handle");

    struct ag_kern *p = ag_kern_get(PADDED);
    CHECK(p && p->argbytes == 16 && !p->dense, "padding: 16 bytes, not dense");
    CHECK(p && !p->graphable, "AUTOGRAPH_EXCLUDE=padded excludes it");

    struct ag_kern *k = ag_kern_get(KERNEL);
    CHECK(k && k->is_kernel && k->layout_ok && k->nparams == 1 && k->argbytes == 8,
          "a CUkernel is asked through cuKernelGetParamInfo");

    struct ag_kern *o = ag_kern_get(OPAQUE);
    CHECK(o && !o->layout_ok, "no parameter info: arguments cannot be recorded");

    struct ag_kern *nc = ag_kern_get(NCCL_C), *nx = ag_kern_get(NCCL_CXX);
    CHECK(nc && !nc->graphable && nx && !nx->graphable,
          "NCCL collectives are never graph nodes by default (AUTOGRAPH_NCCL=0)");

    CHECK(ag_kern_distinct() == 6, "six handles, got %zu", ag_kern_distinct());
    f->launches = 5, k->launches = 9, p->launches = 1;
    const struct ag_kern *top[2];
    CHECK(ag_kern_top(top, 2) == 2 && top[0] == k && top[1] == f, "most launched first");

    p->launches = 9;
    CHECK(ag_kern_top(top, 2) == 2 && top[0] == k && top[1] == p, "ties ranked by name");

    ag_kern_forget_all();
    struct ag_kern *again = ag_kern_get(FUNC);
    CHECK(again && again != f && again->launches == 0, "learned afresh after forgetting");

    /* 65,536 handles, one per slot (the hash is a multiplication by an odd constant,
     * inverted here), fill the table; 20,000 more must each cost a bounded probe, not a
     * scan of the whole table (1.3e9 slot loads before the bound: seconds of CPU). */
    uint64_t g = 0x9E3779B97F4A7C15ull, inv = g;
    for (int i = 0; i < 6; i++)
        inv *= 2 - g * inv;
    size_t learned = 0;
    for (uint64_t i = 0; i < (1u << 16); i++)
        learned += ag_kern_get((CUfunction)(uintptr_t)((i << 48) * inv)) != NULL;
    CHECK(learned >= (1u << 16) - 1, "one handle per slot fills the table (%zu learned)", learned);
    clock_t t0 = clock();
    size_t refused = 0;
    for (uint64_t i = 0; i < 20000; i++)
        refused += ag_kern_get((CUfunction)(uintptr_t)(((i << 48) | 0x1000) * inv)) == NULL;
    double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
    CHECK(refused == 20000, "a full table learns no more handles (%zu refused)", refused);
    CHECK(cpu < 1.0, "20,000 lookups in a full table took %.2f s of CPU", cpu);
    return unit_done();
}
