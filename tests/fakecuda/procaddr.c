/* fakecuda cuGetProcAddress: resolves driver entry points from a static table of this
 * library's own functions. It must not call dlsym: the interposer under test hooks dlsym,
 * and cudart reaches every driver function through this lookup (see
 * shared/notes/cuda-driver-facts.md). Given a base name, the caller's CUDA version and
 * flags, it picks the newest versioned variant (_v4, _v3, _v2, plain) that exists and
 * whose ABI the version covers, preferring _ptsz/_ptds variants when the caller asks for
 * per-thread default-stream semantics (flags 2). */
#include "fake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FN(name) {#name, (void *)name}

static const struct {
    const char *name;
    void *fn;
} table[] = {
    FN(cuCtxCreate_v2),
#if CUDA_VERSION >= 12050 /* entries the building cuda.h declares */
    FN(cuCtxCreate_v4),
    FN(cuKernelGetLibrary),
#endif
#if CUDA_VERSION >= 12080
    FN(cuEventElapsedTime_v2),
    FN(cuStreamGetDevice),
    FN(cuStreamGetDevice_ptsz),
#endif
    FN(cuCtxDestroy_v2),
    FN(cuCtxDisablePeerAccess),
    FN(cuCtxEnablePeerAccess),
    FN(cuCtxGetApiVersion),
    FN(cuCtxGetCurrent),
    FN(cuCtxGetDevice),
    FN(cuCtxGetFlags),
    FN(cuCtxGetId),
    FN(cuCtxGetStreamPriorityRange),
    FN(cuCtxPopCurrent_v2),
    FN(cuCtxPushCurrent_v2),
    FN(cuCtxSetCurrent),
    FN(cuCtxSynchronize),
    FN(cuDeviceGet),
    FN(cuDeviceCanAccessPeer),
    FN(cuDeviceGetAttribute),
    FN(cuDeviceGetCount),
    FN(cuDeviceGetName),
    FN(cuDeviceGetP2PAttribute),
    FN(cuDeviceGetUuid),
    FN(cuDeviceGetUuid_v2),
    FN(cuDevicePrimaryCtxGetState),
    FN(cuDevicePrimaryCtxRelease_v2),
    FN(cuDevicePrimaryCtxReset_v2),
    FN(cuDevicePrimaryCtxRetain),
    FN(cuDevicePrimaryCtxSetFlags_v2),
    FN(cuDeviceTotalMem_v2),
    FN(cuDriverGetVersion),
    FN(cuEventCreate),
    FN(cuEventDestroy_v2),
    FN(cuEventElapsedTime),
    FN(cuEventQuery),
    FN(cuEventRecord),
    FN(cuEventRecordWithFlags),
    FN(cuEventRecordWithFlags_ptsz),
    FN(cuEventRecord_ptsz),
    FN(cuEventSynchronize),
    FN(cuFuncGetAttribute),
    FN(cuFuncGetModule),
    FN(cuFuncGetName),
    FN(cuFuncGetParamInfo),
    FN(cuFuncSetAttribute),
    FN(cuGetErrorName),
    FN(cuGetErrorString),
    FN(cuGetExportTable),
    FN(cuGetProcAddress),
    FN(cuGetProcAddress_v2),
    FN(cuGraphAddEmptyNode),
    FN(cuGraphAddEventRecordNode),
    FN(cuGraphEventRecordNodeSetEvent),
    FN(cuGraphAddEventWaitNode),
    FN(cuGraphAddHostNode),
    FN(cuGraphAddKernelNode_v2),
    FN(cuGraphAddMemcpyNode),
    FN(cuGraphAddMemsetNode),
    FN(cuGraphCreate),
    FN(cuGraphDestroy),
    FN(cuGraphExecDestroy),
    FN(cuGraphExecEventRecordNodeSetEvent),
    FN(cuGraphExecHostNodeSetParams),
    FN(cuGraphExecKernelNodeSetParams_v2),
    FN(cuGraphExecMemcpyNodeSetParams),
    FN(cuGraphExecMemsetNodeSetParams),
    FN(cuGraphExecUpdate_v2),
    FN(cuGraphGetNodes),
    FN(cuGraphInstantiate),
    FN(cuGraphInstantiateWithFlags),
    FN(cuGraphInstantiateWithParams),
    FN(cuGraphInstantiateWithParams_ptsz),
    FN(cuGraphInstantiate_v2),
    FN(cuGraphKernelNodeGetAttribute),
    FN(cuGraphKernelNodeGetParams_v2),
    FN(cuGraphKernelNodeSetAttribute),
    FN(cuGraphKernelNodeSetParams_v2),
    FN(cuGraphLaunch),
    FN(cuGraphLaunch_ptsz),
    FN(cuGraphNodeGetType),
    FN(cuGraphUpload),
    FN(cuGraphUpload_ptsz),
    FN(cuInit),
    FN(cuKernelGetFunction),
    FN(cuKernelGetName),
    FN(cuKernelGetParamInfo),
    FN(cuLaunchCooperativeKernel),
    FN(cuLaunchCooperativeKernel_ptsz),
    FN(cuLaunchHostFunc),
    FN(cuLaunchHostFunc_ptsz),
    FN(cuLaunchKernel),
    FN(cuLaunchKernelEx),
    FN(cuLaunchKernelEx_ptsz),
    FN(cuLaunchKernel_ptsz),
    FN(cuLibraryGetKernel),
    FN(cuLibraryGetModule),
    FN(cuLibraryLoadData),
    FN(cuLibraryLoadFromFile),
    FN(cuLibraryUnload),
    FN(cuMemAllocHost_v2),
    FN(cuMemAllocPitch_v2),
    FN(cuMemAlloc_v2),
    FN(cuMemFreeHost),
    FN(cuMemFree_v2),
    FN(cuMemGetAddressRange_v2),
    FN(cuMemGetInfo_v2),
    FN(cuMemHostAlloc),
    FN(cuMemHostGetDevicePointer_v2),
    FN(cuMemHostGetFlags),
    FN(cuMemHostRegister_v2),
    FN(cuMemHostUnregister),
    FN(cuMemcpy),
    FN(cuMemcpy2DAsync_v2),
    FN(cuMemcpy2DAsync_v2_ptsz),
    FN(cuMemcpy2DUnaligned_v2),
    FN(cuMemcpy2DUnaligned_v2_ptds),
    FN(cuMemcpy2D_v2),
    FN(cuMemcpy2D_v2_ptds),
    FN(cuMemcpy3DAsync_v2),
    FN(cuMemcpy3DAsync_v2_ptsz),
    FN(cuMemcpy3D_v2),
    FN(cuMemcpy3D_v2_ptds),
    FN(cuMemcpyAsync),
    FN(cuMemcpyAsync_ptsz),
    FN(cuMemcpyDtoDAsync_v2),
    FN(cuMemcpyDtoDAsync_v2_ptsz),
    FN(cuMemcpyDtoD_v2),
    FN(cuMemcpyDtoD_v2_ptds),
    FN(cuMemcpyDtoHAsync_v2),
    FN(cuMemcpyDtoHAsync_v2_ptsz),
    FN(cuMemcpyDtoH_v2),
    FN(cuMemcpyDtoH_v2_ptds),
    FN(cuMemcpyHtoDAsync_v2),
    FN(cuMemcpyHtoDAsync_v2_ptsz),
    FN(cuMemcpyHtoD_v2),
    FN(cuMemcpyHtoD_v2_ptds),
    FN(cuMemcpyPeer),
    FN(cuMemcpyPeerAsync),
    FN(cuMemcpyPeerAsync_ptsz),
    FN(cuMemcpyPeer_ptds),
    FN(cuMemcpy_ptds),
    FN(cuMemsetD16Async),
    FN(cuMemsetD16Async_ptsz),
    FN(cuMemsetD16_v2),
    FN(cuMemsetD16_v2_ptds),
    FN(cuMemsetD2D16Async),
    FN(cuMemsetD2D16Async_ptsz),
    FN(cuMemsetD2D16_v2),
    FN(cuMemsetD2D16_v2_ptds),
    FN(cuMemsetD2D32Async),
    FN(cuMemsetD2D32Async_ptsz),
    FN(cuMemsetD2D32_v2),
    FN(cuMemsetD2D32_v2_ptds),
    FN(cuMemsetD2D8Async),
    FN(cuMemsetD2D8Async_ptsz),
    FN(cuMemsetD2D8_v2),
    FN(cuMemsetD2D8_v2_ptds),
    FN(cuMemsetD32Async),
    FN(cuMemsetD32Async_ptsz),
    FN(cuMemsetD32_v2),
    FN(cuMemsetD32_v2_ptds),
    FN(cuMemsetD8Async),
    FN(cuMemsetD8Async_ptsz),
    FN(cuMemsetD8_v2),
    FN(cuMemsetD8_v2_ptds),
    FN(cuModuleGetFunction),
    FN(cuModuleLoad),
    FN(cuModuleLoadData),
    FN(cuModuleLoadDataEx),
    FN(cuModuleUnload),
    FN(cuPointerGetAttribute),
    FN(cuPointerGetAttributes),
    FN(cuProfilerStart),
    FN(cuProfilerStop),
    FN(cuStreamAddCallback),
    FN(cuStreamAddCallback_ptsz),
    FN(cuStreamBeginCapture),
    FN(cuStreamBeginCaptureToGraph),
    FN(cuStreamBeginCaptureToGraph_ptsz),
    FN(cuStreamBeginCapture_ptsz),
    FN(cuStreamBeginCapture_v2),
    FN(cuStreamBeginCapture_v2_ptsz),
    FN(cuStreamCreate),
    FN(cuStreamCreateWithPriority),
    FN(cuStreamDestroy_v2),
    FN(cuStreamEndCapture),
    FN(cuStreamEndCapture_ptsz),
    FN(cuStreamGetCaptureInfo),
    FN(cuStreamGetCaptureInfo_ptsz),
    FN(cuStreamGetCaptureInfo_v2),
    FN(cuStreamGetCaptureInfo_v2_ptsz),
    FN(cuStreamGetCaptureInfo_v3),
    FN(cuStreamGetCaptureInfo_v3_ptsz),
    FN(cuStreamGetCtx),
    FN(cuStreamGetCtx_ptsz),
    FN(cuStreamGetFlags),
    FN(cuStreamGetFlags_ptsz),
    FN(cuStreamGetId),
    FN(cuStreamGetId_ptsz),
    FN(cuStreamGetPriority),
    FN(cuStreamGetPriority_ptsz),
    FN(cuStreamIsCapturing),
    FN(cuStreamIsCapturing_ptsz),
    FN(cuStreamQuery),
    FN(cuStreamQuery_ptsz),
    FN(cuStreamSynchronize),
    FN(cuStreamSynchronize_ptsz),
    FN(cuStreamWaitEvent),
    FN(cuStreamWaitEvent_ptsz),
    FN(cuStreamWaitValue32_v2),
    FN(cuStreamWaitValue32_v2_ptsz),
    FN(cuThreadExchangeStreamCaptureMode),
};

/* A test seam for driver functions the library under test has no wrapper for (a newer
 * driver's additions): with AG_FAKE_EXTRA_FUNCS=N, "cuFakeExtraFunctionK" (K < N) resolves
 * to the K-th of these. Not exported (the stand-in exports only libcuda's names), each is
 * a distinct function, CUresult (CUdeviceptr p, float *out): it waits for all work, then
 * reads the float at p, so a caller can see whether work submitted before it ran. */
#define EXTRA_MAX 100
static unsigned extra_calls[EXTRA_MAX];
#define EXTRA(k)                                                                               \
    static CUresult extra_##k(CUdeviceptr p, float *out)                                       \
    {                                                                                          \
        extra_calls[k]++; /* keeps the bodies distinct */                                      \
        CUresult rc = cuCtxSynchronize();                                                      \
        return rc ? rc : cuMemcpyDtoH_v2(out, p, sizeof *out);                                 \
    }
#define EXTRA10(t) EXTRA(t##0) EXTRA(t##1) EXTRA(t##2) EXTRA(t##3) EXTRA(t##4) EXTRA(t##5) \
    EXTRA(t##6) EXTRA(t##7) EXTRA(t##8) EXTRA(t##9)
EXTRA(0) EXTRA(1) EXTRA(2) EXTRA(3) EXTRA(4) EXTRA(5) EXTRA(6) EXTRA(7) EXTRA(8) EXTRA(9)
EXTRA10(1) EXTRA10(2) EXTRA10(3) EXTRA10(4) EXTRA10(5) EXTRA10(6) EXTRA10(7) EXTRA10(8) EXTRA10(9)
#define E10(t) extra_##t##0, extra_##t##1, extra_##t##2, extra_##t##3, extra_##t##4, extra_##t##5, \
    extra_##t##6, extra_##t##7, extra_##t##8, extra_##t##9
static CUresult (*const extras[EXTRA_MAX])(CUdeviceptr, float *) = {
    extra_0, extra_1, extra_2, extra_3, extra_4, extra_5, extra_6, extra_7, extra_8, extra_9,
    E10(1), E10(2), E10(3), E10(4), E10(5), E10(6), E10(7), E10(8), E10(9)};

static void *extra(const char *symbol)
{
    static const char prefix[] = "cuFakeExtraFunction";
    const char *n = getenv("AG_FAKE_EXTRA_FUNCS");
    if (!n || strncmp(symbol, prefix, sizeof prefix - 1) != 0)
        return NULL;
    int k = atoi(symbol + sizeof prefix - 1);
    return k >= 0 && k < atoi(n) && k < EXTRA_MAX ? (void *)extras[k] : NULL;
}

/* CUDA version that introduced each variant whose predecessor is also in the table; a
 * caller built against an older CUDA gets the predecessor and its older signature. */
static const struct {
    const char *name;
    int version;
} introduced[] = {
    {"cuGetProcAddress_v2", 12000},
    {"cuCtxCreate_v4", 12050},
    {"cuGraphInstantiateWithFlags", 12000},
    {"cuGraphExecUpdate_v2", 12000},
    {"cuGraphAddKernelNode_v2", 12000},
    {"cuGraphKernelNodeGetParams_v2", 12000},
    {"cuGraphKernelNodeSetParams_v2", 12000},
    {"cuGraphExecKernelNodeSetParams_v2", 12000},
    {"cuStreamGetCaptureInfo_v2", 11030},
    {"cuStreamGetCaptureInfo_v2_ptsz", 11030},
    {"cuStreamGetCaptureInfo_v3", 12030},
    {"cuStreamGetCaptureInfo_v3_ptsz", 12030},
    {"cuStreamBeginCapture_v2", 10010},
    {"cuStreamBeginCapture_v2_ptsz", 10010},
    {"cuEventElapsedTime_v2", 12080},
    {"cuDeviceGetUuid_v2", 11040},
};

static void *find(const char *name, int version, int *too_old)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(table[i].name, name) != 0)
            continue;
        for (size_t j = 0; j < sizeof introduced / sizeof introduced[0]; j++)
            if (strcmp(introduced[j].name, name) == 0 && version < introduced[j].version) {
                *too_old = 1;
                return NULL;
            }
        return table[i].fn;
    }
    return NULL;
}

static CUresult resolve(const char *symbol, void **pfn, int version, cuuint64_t flags,
                        CUdriverProcAddressQueryResult *status)
{
    static const char *const versions[] = {"_v4", "_v3", "_v2", ""};
    static const char *const streams[] = {"_ptsz", "_ptds"};
    int per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    int too_old = 0;
    char name[256];
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    ag_fake_trace_field("symbol=%s version=%d flags=%llu", symbol, version, (unsigned long long)flags);
    if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    /* Per-thread default-stream variants exist from CUDA 7.0 on; the real driver refuses an
     * older version asked for a function that has one (seen on an H200 for cuMemcpyHtoD:
     * status VERSION_NOT_SUFFICIENT) rather than handing out the legacy variant. */
    for (size_t v = 0; per_thread && version < 7000 && v < sizeof versions / sizeof versions[0]; v++) {
        for (size_t s = 0; s < 2; s++) {
            int unused = 0;
            snprintf(name, sizeof name, "%s%s%s", symbol, versions[v], streams[s]);
            if (find(name, 99999, &unused)) {
                if (status)
                    *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
                return CUDA_ERROR_NOT_FOUND;
            }
        }
    }
    /* The one base name whose newest form is not a _vN suffix. */
    if (strcmp(symbol, "cuGraphInstantiate") == 0 && version >= 12000)
        symbol = "cuGraphInstantiateWithFlags";
    for (size_t v = 0; v < sizeof versions / sizeof versions[0] && !*pfn; v++) {
        for (size_t s = 0; per_thread && s < 2 && !*pfn; s++) {
            snprintf(name, sizeof name, "%s%s%s", symbol, versions[v], streams[s]);
            *pfn = find(name, version, &too_old);
        }
        if (!*pfn) {
            snprintf(name, sizeof name, "%s%s", symbol, versions[v]);
            *pfn = find(name, version, &too_old);
        }
    }
    if (!*pfn && (*pfn = extra(symbol)) != NULL)
        snprintf(name, sizeof name, "%s", symbol);
    if (!*pfn) {
        if (status)
            *status = too_old ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return CUDA_ERROR_NOT_FOUND;
    }
    ag_fake_trace_field("found=%s", name);
    if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
    AG_FAKE_BODY_NOINIT(resolve(symbol, pfn, cudaVersion, flags, symbolStatus))
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
    AG_FAKE_BODY_NOINIT(resolve(symbol, pfn, cudaVersion, flags, NULL))
