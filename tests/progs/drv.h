/* The driver entry points the test programs use, as one table of function pointers.
 * workload.c is written against struct drv only; each door file (door_procaddr.c,
 * door_dlsym.c, door_link.c) fills it the way one kind of real program reaches libcuda,
 * which gives three binaries with the same behaviour and the same output.
 *
 * DRV_FUNCS lists each entry point once: struct member, base name and the CUDA version
 * whose ABI we want (what cudart passes to cuGetProcAddress), the exact exported symbol
 * of that ABI, and the symbol of its per-thread default-stream variant (the same symbol
 * when the function has none). Compiled with -D__CUDA_API_VERSION_INTERNAL so that
 * cuda.h declares every variant under its real name; the member types are those of the
 * exact symbols, so a door cannot hand the workload a pointer of the wrong signature. */
#ifndef AG_TEST_DRV_H
#define AG_TEST_DRV_H

#include <cuda.h>

/* X(member, base name, version, symbol, per-thread symbol) */
#define DRV_FUNCS(X)                                                                               \
    X(Init, cuInit, 2000, cuInit, cuInit)                                                          \
    X(GetErrorName, cuGetErrorName, 6000, cuGetErrorName, cuGetErrorName)                          \
    X(DriverGetVersion, cuDriverGetVersion, 2020, cuDriverGetVersion, cuDriverGetVersion)          \
    X(DeviceGet, cuDeviceGet, 2000, cuDeviceGet, cuDeviceGet)                                      \
    X(PrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain,                  \
      cuDevicePrimaryCtxRetain)                                                                    \
    X(PrimaryCtxRelease, cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2,           \
      cuDevicePrimaryCtxRelease_v2)                                                                \
    X(CtxSetCurrent, cuCtxSetCurrent, 4000, cuCtxSetCurrent, cuCtxSetCurrent)                      \
    X(CtxSynchronize, cuCtxSynchronize, 2000, cuCtxSynchronize, cuCtxSynchronize)                  \
    X(ModuleLoadData, cuModuleLoadData, 2000, cuModuleLoadData, cuModuleLoadData)                  \
    X(ModuleGetFunction, cuModuleGetFunction, 2000, cuModuleGetFunction, cuModuleGetFunction)      \
    X(LibraryLoadData, cuLibraryLoadData, 12000, cuLibraryLoadData, cuLibraryLoadData)             \
    X(LibraryGetKernel, cuLibraryGetKernel, 12000, cuLibraryGetKernel, cuLibraryGetKernel)         \
    X(MemAlloc, cuMemAlloc, 3020, cuMemAlloc_v2, cuMemAlloc_v2)                                    \
    X(MemFree, cuMemFree, 3020, cuMemFree_v2, cuMemFree_v2)                                        \
    X(MemAllocHost, cuMemAllocHost, 3020, cuMemAllocHost_v2, cuMemAllocHost_v2)                    \
    X(MemFreeHost, cuMemFreeHost, 2000, cuMemFreeHost, cuMemFreeHost)                              \
    X(MemcpyHtoD, cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds)                       \
    X(MemcpyDtoH, cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds)                       \
    X(MemcpyHtoDAsync, cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz)   \
    X(MemcpyDtoHAsync, cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz)   \
    X(MemcpyDtoDAsync, cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz)   \
    X(MemsetD8, cuMemsetD8, 3020, cuMemsetD8_v2, cuMemsetD8_v2_ptds)                               \
    X(MemsetD32Async, cuMemsetD32Async, 3020, cuMemsetD32Async, cuMemsetD32Async_ptsz)             \
    X(StreamCreate, cuStreamCreate, 2000, cuStreamCreate, cuStreamCreate)                          \
    X(StreamDestroy, cuStreamDestroy, 4000, cuStreamDestroy_v2, cuStreamDestroy_v2)                \
    X(StreamSynchronize, cuStreamSynchronize, 2000, cuStreamSynchronize, cuStreamSynchronize_ptsz) \
    X(LaunchKernel, cuLaunchKernel, 4000, cuLaunchKernel, cuLaunchKernel_ptsz)                     \
    X(LaunchKernelEx, cuLaunchKernelEx, 11060, cuLaunchKernelEx, cuLaunchKernelEx_ptsz)

struct drv {
#define DRV_MEMBER(member, base, version, sym, ptsym) __typeof__(&sym) member;
    DRV_FUNCS(DRV_MEMBER)
#undef DRV_MEMBER
};

/* Filled by the door file: how this binary reaches the driver ("cuGetProcAddress",
 * "dlsym" or "link"), and whether it can ask for the per-thread default stream. */
extern const char drv_door[];

/* Fills d through this binary's door; per_thread asks for the per-thread default-stream
 * variants. Prints what failed and exits 2 on any failure. */
void drv_open(struct drv *d, int per_thread);

/* On failure prints "file:line: call failed: ERROR_NAME (code)" and exits 2. */
void drv_check(CUresult rc, const char *call, const char *file, int line);
#define DRV_CHECK(call) drv_check((call), #call, __FILE__, __LINE__)

#endif
