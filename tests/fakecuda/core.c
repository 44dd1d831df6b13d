/* fakecuda core: the global lock and API entry/exit, cuInit, the single CPU "device",
 * primary and created contexts (per-thread context stacks) with their sticky errors,
 * error names, and other small driver entry points. Owned by the fakecuda test
 * infrastructure (CI has no GPU). */
#define _GNU_SOURCE
#include "fake.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One lock around everything keeps the stand-in obviously correct; recursive so that a
 * (forbidden) CUDA call from a host function is answered instead of deadlocking. */
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int initialized;
static _Thread_local int in_host_fn;

void ag_fake_lock(void)
{
    pthread_mutex_lock(&lock);
}

void ag_fake_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

/* Only ever called with the lock held once (API calls do not nest while they wait),
 * so the wait really releases it. */
void ag_fake_wait(void)
{
    pthread_cond_wait(&changed, &lock);
}

void ag_fake_broadcast(void)
{
    pthread_cond_broadcast(&changed);
}

/* Calls that still answer after a device fault: device queries, primary-context
 * management (a reset is how a program recovers), the current-context stack and
 * context destruction; everything else returns the context's sticky error. */
static int survives_fault(const char *symbol)
{
    static const char *const prefixes[] = {"cuDevice", "cuCtxGetCurrent", "cuCtxSetCurrent", "cuCtxPushCurrent",
                                           "cuCtxPopCurrent", "cuCtxDestroy", "cuGetProcAddress", "cuGetErrorName",
                                           "cuGetErrorString", "cuDriverGetVersion", "cuInit"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(symbol, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

CUresult ag_fake_begin(const char *symbol, int needs_init)
{
    struct ag_fake_ctx *c;
    pthread_mutex_lock(&lock);
    ag_fake_trace_start(symbol);
    if (in_host_fn)
        return CUDA_ERROR_NOT_PERMITTED;
    if (needs_init && !initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (ag_fake_current_ctx(&c) == CUDA_SUCCESS && c->sticky && !survives_fault(symbol))
        return c->sticky;
    return CUDA_SUCCESS;
}

CUresult ag_fake_end(CUresult rc)
{
    ag_fake_trace_finish(rc);
    pthread_mutex_unlock(&lock);
    return rc;
}

void ag_fake_call_host(CUhostFn fn, void *user)
{
    in_host_fn = 1;
    fn(user);
    in_host_fn = 0;
}

void ag_fake_call_callback(CUstreamCallback fn, CUstream s, CUresult status, void *user)
{
    in_host_fn = 1;
    fn(s, status, user);
    in_host_fn = 0;
}

/* ---- init, version, device ------------------------------------------------------- */

static CUresult init(unsigned flags)
{
    ag_fake_trace_field("flags=%u", flags);
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    initialized = 1;
    return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int Flags) AG_FAKE_BODY_NOINIT(init(Flags))

static CUresult driver_version(int *v)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = 13000;
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *driverVersion) AG_FAKE_BODY_NOINIT(driver_version(driverVersion))

static CUresult check_dev(CUdevice d)
{
    return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult device_get(CUdevice *d, int ordinal)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) AG_FAKE_BODY(device_get(device, ordinal))

static CUresult device_count(int *n)
{
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    *n = 1;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) AG_FAKE_BODY(device_count(count))

static CUresult device_name(char *name, int len, CUdevice d)
{
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "%s", "autograph CPU stand-in");
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev) AG_FAKE_BODY(device_name(name, len, dev))

#define TOTAL_MEM (80ull << 30)

static CUresult total_mem(size_t *bytes, CUdevice d)
{
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    *bytes = TOTAL_MEM;
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) AG_FAKE_BODY(total_mem(bytes, dev))

static CUresult device_uuid(CUuuid *u, CUdevice d)
{
    if (!u)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    memcpy(u->bytes, "ag-fake-cuda-dev", sizeof u->bytes);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) AG_FAKE_BODY(device_uuid(uuid, dev))
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) AG_FAKE_BODY(device_uuid(uuid, dev))

/* Values of an H200-class device (compute capability 9.0), so programs that size their
 * launches from attributes behave as they would on the real thing. */
static int attribute_value(CUdevice_attribute a)
{
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1980000;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 6144;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 52428800;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 2;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: return 82837504;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: return 134213632;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: return 0;
    default: return 0;
    }
}

static CUresult device_attribute(int *v, CUdevice_attribute a, CUdevice d)
{
    if (!v || a <= 0 || a >= CU_DEVICE_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    ag_fake_trace_field("attr=%d", (int)a);
    *v = attribute_value(a);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
    AG_FAKE_BODY(device_attribute(pi, attrib, dev))

/* ---- contexts --------------------------------------------------------------------- */

static struct ag_fake_ctx primary = {AG_FAKE_CTX, 1, 0, 1, CUDA_SUCCESS};
static int primary_refs;
static unsigned long long next_ctx_id = 2;

/* The driver keeps a stack of current contexts per thread. */
#define STACK 16
static _Thread_local struct ag_fake_ctx *stack[STACK];
static _Thread_local int depth;

static int ctx_alive(const struct ag_fake_ctx *c)
{
    return c && c->magic == AG_FAKE_CTX && (!c->primary || primary_refs > 0);
}

CUresult ag_fake_check_ctx(CUcontext h, struct ag_fake_ctx **out)
{
    struct ag_fake_ctx *c = (struct ag_fake_ctx *)h;
    if (!c)
        return ag_fake_current_ctx(out);
    if (!ctx_alive(c))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    return CUDA_SUCCESS;
}

CUresult ag_fake_current_ctx(struct ag_fake_ctx **out)
{
    if (depth == 0 || !ctx_alive(stack[depth - 1]))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = stack[depth - 1];
    return CUDA_SUCCESS;
}

static CUresult primary_retain(CUcontext *pctx, CUdevice d)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    primary_refs++;
    *pctx = (CUcontext)&primary;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) AG_FAKE_BODY(primary_retain(pctx, dev))

static CUresult primary_release(CUdevice d)
{
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    if (primary_refs == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    /* The last release destroys the primary context, and its sticky error with it. */
    if (--primary_refs == 0) {
        ag_fake_drain();
        primary.sticky = CUDA_SUCCESS;
    }
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) AG_FAKE_BODY(primary_release(dev))

static CUresult primary_reset(CUdevice d)
{
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    ag_fake_drain();
    primary_refs = 0;
    primary.flags = 0;
    primary.sticky = CUDA_SUCCESS;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) AG_FAKE_BODY(primary_reset(dev))

static CUresult primary_state(CUdevice d, unsigned *flags, int *active)
{
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    *flags = primary.flags;
    *active = primary_refs > 0;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
    AG_FAKE_BODY(primary_state(dev, flags, active))

static CUresult primary_set_flags(CUdevice d, unsigned flags)
{
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    if (flags & ~0x1fu)
        return CUDA_ERROR_INVALID_VALUE;
    primary.flags = flags;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) AG_FAKE_BODY(primary_set_flags(dev, flags))

static CUresult push(struct ag_fake_ctx *c)
{
    if (depth == STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    stack[depth++] = c;
    return CUDA_SUCCESS;
}

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice d)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    struct ag_fake_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *c = (struct ag_fake_ctx){AG_FAKE_CTX, 0, flags, next_ctx_id++, CUDA_SUCCESS};
    CUresult rc = push(c);
    if (rc)
        return rc;
    ag_fake_trace_field("ctx=%llu", c->id);
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) AG_FAKE_BODY(ctx_create(pctx, flags, dev))
CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev)
    AG_FAKE_BODY(ctxCreateParams && (ctxCreateParams->execAffinityParams || ctxCreateParams->cigParams)
                     ? CUDA_ERROR_NOT_SUPPORTED
                     : ctx_create(pctx, flags, dev))

static CUresult ctx_destroy(CUcontext h)
{
    struct ag_fake_ctx *c = (struct ag_fake_ctx *)h;
    if (!c || c->magic != AG_FAKE_CTX || c->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    ag_fake_drain();
    c->magic = AG_FAKE_DEAD;
    if (depth > 0 && stack[depth - 1] == c)
        depth--;
    return CUDA_SUCCESS;
}

CUresult cuCtxDestroy_v2(CUcontext ctx) AG_FAKE_BODY(ctx_destroy(ctx))

static CUresult ctx_get_current(CUcontext *pctx)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = depth ? (CUcontext)stack[depth - 1] : NULL;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx) AG_FAKE_BODY(ctx_get_current(pctx))

static CUresult ctx_set_current(CUcontext h)
{
    struct ag_fake_ctx *c = (struct ag_fake_ctx *)h;
    if (!c) {
        if (depth)
            depth--;
        return CUDA_SUCCESS;
    }
    if (c->magic != AG_FAKE_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (depth == 0)
        return push(c);
    stack[depth - 1] = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) AG_FAKE_BODY(ctx_set_current(ctx))

static CUresult ctx_push(CUcontext h)
{
    struct ag_fake_ctx *c = (struct ag_fake_ctx *)h;
    if (!c || c->magic != AG_FAKE_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    return push(c);
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx) AG_FAKE_BODY(ctx_push(ctx))

static CUresult ctx_pop(CUcontext *pctx)
{
    if (depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    depth--;
    if (pctx)
        *pctx = (CUcontext)stack[depth];
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx) AG_FAKE_BODY(ctx_pop(pctx))

static CUresult ctx_get_device(CUdevice *d)
{
    struct ag_fake_ctx *c;
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_current_ctx(&c);
    if (rc)
        return rc;
    *d = 0;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device) AG_FAKE_BODY(ctx_get_device(device))

static CUresult ctx_synchronize(void)
{
    struct ag_fake_ctx *c;
    CUresult rc = ag_fake_current_ctx(&c);
    if (rc == CUDA_SUCCESS)
        rc = ag_fake_capture_unsafe(NULL);
    if (rc)
        return rc;
    ag_fake_drain();
    return c->sticky;
}

CUresult cuCtxSynchronize(void) AG_FAKE_BODY(ctx_synchronize())

static CUresult ctx_get_flags(unsigned *flags)
{
    struct ag_fake_ctx *c;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_current_ctx(&c);
    if (rc)
        return rc;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetFlags(unsigned int *flags) AG_FAKE_BODY(ctx_get_flags(flags))

static CUresult ctx_get_id(CUcontext h, unsigned long long *id)
{
    struct ag_fake_ctx *c;
    if (!id)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_check_ctx(h, &c);
    if (rc)
        return rc;
    *id = c->id;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId) AG_FAKE_BODY(ctx_get_id(ctx, ctxId))

static CUresult ctx_api_version(CUcontext h, unsigned *version)
{
    struct ag_fake_ctx *c;
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_check_ctx(h, &c);
    if (rc)
        return rc;
    *version = 3020;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version) AG_FAKE_BODY(ctx_api_version(ctx, version))

static CUresult priority_range(int *least, int *greatest)
{
    struct ag_fake_ctx *c;
    CUresult rc = ag_fake_current_ctx(&c);
    if (rc)
        return rc;
    if (least)
        *least = 0;
    if (greatest)
        *greatest = -5;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
    AG_FAKE_BODY(priority_range(leastPriority, greatestPriority))

/* ---- errors and miscellany ---------------------------------------------------------- */

static const struct {
    CUresult code;
    const char *name, *text;
} errors[] = {
#define E(code, text) {code, #code, text}
    E(CUDA_SUCCESS, "no error"),
    E(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    E(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    E(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    E(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
    E(CUDA_ERROR_PROFILER_DISABLED, "profiler disabled while using external profiling tool"),
    E(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
    E(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    E(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
    E(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    E(CUDA_ERROR_NOT_MAPPED, "mapping of buffer object failed"),
    E(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"),
    E(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
    E(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"),
    E(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
    E(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
    E(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    E(CUDA_ERROR_NOT_READY, "device not ready"),
    E(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
    E(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
    E(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"),
    E(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped"),
    E(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region"),
    E(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
    E(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
    E(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing"),
    E(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture"),
    E(CUDA_ERROR_STREAM_CAPTURE_MERGE, "operation would result in a merge of separate capture sequences"),
    E(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "capture was not ended in the same stream as it began"),
    E(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "capturing stream has unjoined work"),
    E(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "dependency created on uncaptured work in another stream"),
    E(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "operation would make the legacy stream depend on a capturing blocking stream"),
    E(CUDA_ERROR_CAPTURED_EVENT, "operation not permitted on an event last recorded in a capturing stream"),
    E(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "attempt to terminate a thread-local capture sequence from another thread"),
    E(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"),
    E(CUDA_ERROR_UNKNOWN, "unknown error"),
#undef E
};

static CUresult error_lookup(CUresult e, const char **p, int want_name)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == e) {
            *p = want_name ? errors[i].name : errors[i].text;
            return CUDA_SUCCESS;
        }
    *p = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult error, const char **pStr) AG_FAKE_BODY_NOINIT(error_lookup(error, pStr, 1))
CUresult cuGetErrorString(CUresult error, const char **pStr) AG_FAKE_BODY_NOINIT(error_lookup(error, pStr, 0))

/* The export table is private to NVIDIA's runtime; it cannot be faked meaningfully. */
CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
    AG_FAKE_BODY_NOINIT((ppExportTable && pExportTableId) ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE)

CUresult cuProfilerStart(void) AG_FAKE_BODY(CUDA_SUCCESS)
CUresult cuProfilerStop(void) AG_FAKE_BODY(CUDA_SUCCESS)
