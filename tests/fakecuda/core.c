/* fakecuda core: the global lock and API entry/exit (with contexts' sticky errors), cuInit,
 * error names, and other small driver entry points (devices and contexts are device.c's). Owned by the
 * fakecuda test infrastructure (CI has no GPU). */
#define _GNU_SOURCE
#include "fake.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One lock around everything keeps the stand-in obviously correct; recursive so that a
 * (forbidden) CUDA call from a host function is answered instead of deadlocking. */
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int initialized;
static _Thread_local int in_host_fn;
/* Driver calls this thread is inside. A second one that is not a host function's can only
 * come from a signal handler that interrupted the first, where the real driver's locks may
 * be held by the interrupted call and it may hang: the stand-in says so and aborts. */
static _Thread_local int depth;

/* A forked child has only the thread that forked: a lock another thread held at the fork
 * is taken afresh there, so that a child's calls answer instead of hanging (the real driver
 * answers a child too, if only with errors). */
static void forked_child(void)
{
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
    lock = fresh;
    changed = fresh_cond;
}

__attribute__((constructor)) static void at_load(void)
{
    pthread_atfork(NULL, NULL, forked_child);
}

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
    if (depth++ && !in_host_fn) {
        static const char msg[] = "fakecuda: a driver call from a signal handler that interrupted another "
                                  "driver call on this thread (the real driver may hang here)\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        abort();
    }
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
    depth--;
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

/* ---- init, version (devices and contexts: device.c) ------------------------------ */

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

/* Stays with the execution model: waiting for the current context's work. */
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
    E(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
    E(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access is not supported between these two devices"),
    E(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled"),
    E(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled"),
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
