/* Adversarial driver-API programs, one per pattern of issue 8: each aims at an
 * assumption the engine makes and checks what it observes against what the CUDA driver
 * guarantees (data, query answers, error codes, termination). Built for the stand-in
 * (tests/tests.mk) and for the real libcuda (scripts/gpu/adversary.sh); tests/adversary.bats
 * runs each pattern with and without the library and compares.
 *
 *   usage: adversary --pattern N     (1..14; PTX from env AG_KERNELS_PTX)
 *
 * Prints one line "result: pattern N ok ..." or "result: pattern N WRONG: ...", and exits
 * 0, 1 (a wrong observation), 2 (a call that should have succeeded failed) or 3 (a hang,
 * caught by alarm()). Every line on stdout is deterministic; figures go to stderr. On
 * the stand-in the patterns that block a stream (a host function, a memory wait) need its
 * asynchronous mode (AG_FAKE_ASYNC=1), as a GPU runs streams asynchronously. */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define N 256
static int pattern;

/* A failed call is also a result line on stdout: "result: pattern N WRONG: ...". */
#define CHECK_ON_FAIL(call, name) printf("result: pattern %d WRONG: %s failed: %s\n", pattern, call, name)
#include "check.h"

static const char *name_of(CUresult rc)
{
    return check_name(rc);
}

static int result(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int result(int ok, const char *fmt, ...)
{
    va_list ap;
    printf("result: pattern %d %s", pattern, ok ? "ok" : "WRONG:");
    va_start(ap, fmt);
    if (fmt && *fmt) {
        putchar(' ');
        vprintf(fmt, ap);
    }
    va_end(ap);
    putchar('\n');
    return ok ? 0 : 1;
}

static void on_alarm(int sig)
{
    char msg[64];
    int n = snprintf(msg, sizeof msg, "result: pattern %d WRONG: hang\n", pattern);
    ssize_t w = write(1, msg, (size_t)n);
    (void)w, (void)sig;
    _exit(3);
}

/* ---- set-up and helpers ----------------------------------------------------------------- */

static CUcontext ctx;
static CUmodule mod;
static char *image; /* the test kernels' PTX (AG_KERNELS_PTX), for modules loaded again */

/* Looked up once per name, so that launches after a fault (pattern 9) need no lookup. */
static CUfunction K(const char *name)
{
    static struct {
        const char *name;
        CUfunction f;
    } known[16];
    size_t i = 0;
    while (i < 16 && known[i].name && strcmp(known[i].name, name))
        i++;
    if (i < 16 && known[i].name)
        return known[i].f;
    CUfunction f;
    CHECK(cuModuleGetFunction(&f, mod, name));
    if (i < 16)
        known[i].name = name, known[i].f = f;
    return f;
}

static CUresult launch(const char *kernel, CUstream s, void **params)
{
    return cuLaunchKernel(K(kernel), 1, 1, 1, N, 1, 1, 0, s, params, NULL);
}

static CUdeviceptr dalloc(void)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, N * sizeof(float)));
    CHECK(cuMemsetD32(d, 0, N));
    return d;
}

static float first(CUdeviceptr d)
{
    float v;
    CHECK(cuMemcpyDtoH(&v, d, sizeof v));
    return v;
}

static CUstream stream(void)
{
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    return s;
}

/* A gate: a host function that blocks its stream until the program opens it, so that
 * what the stream does after it has certainly not run yet. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_is_open = 1;

static void CUDA_CB gate_wait(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&gate_lock);
    while (!gate_is_open)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
}

static void gate_set(int open)
{
    pthread_mutex_lock(&gate_lock);
    gate_is_open = open;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
}

/* A host function that tells a host thread how far the stream got: the count of calls. */
static atomic_long flag;
static void CUDA_CB bump_flag(void *arg)
{
    (void)arg;
    atomic_fetch_add(&flag, 1);
}

static void spin_for(long v)
{
    while (atomic_load(&flag) != v)
        ;
}

static long vm_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':')
            v = atol(line + n + 1);
    if (f)
        fclose(f);
    return v;
}

/* ---- the patterns -------------------------------------------------------------------------- */

/* 1: a learned sequence copies from a registered host buffer; after cuMemHostUnregister the
 * same calls copy from pageable memory, which the driver stages. Results must follow. */
static int p1(void)
{
    CUstream s = stream();
    CUdeviceptr d = dalloc(), t = dalloc();
    float *hb = aligned_alloc(4096, 4096), *out;
    float two = 2.0f, zero = 0.0f;
    int n = N, bad = 0;
    CHECK(cuMemAllocHost((void **)&out, N * sizeof(float)));
    CHECK(cuMemHostRegister(hb, 4096, 0));
    for (int i = 0; i < 24 && !bad; i++) {
        if (i == 12)
            CHECK(cuMemHostUnregister(hb));
        for (int j = 0; j < N; j++)
            hb[j] = (float)i;
        CHECK(launch("ag_fill", s, (void *[]){&t, &zero, &n}));
        CHECK(cuMemcpyHtoDAsync(d, hb, N * sizeof(float), s));
        CHECK(launch("ag_scale", s, (void *[]){&d, &two, &n}));
        CHECK(cuMemcpyDtoHAsync(out, d, N * sizeof(float), s));
        CHECK(cuStreamSynchronize(s));
        bad = out[0] != 2.0f * (float)i || out[N - 1] != 2.0f * (float)i;
        if (bad)
            return result(0, "iteration %d read %g, expected %g", i, out[0], 2.0f * (float)i);
    }
    return result(1, "24 iterations, registered then pageable");
}

/* 2: the program's own graph waits (event-wait node) for an event recorded on another
 * stream after work that the graph reads. A host node tells the host the graph ran;
 * the host waits for it without any CUDA call, then checks what the graph read. */
static int p2(void)
{
    CUstream a = stream(), b = stream();
    CUdeviceptr x = dalloc(), y = dalloc(), t = dalloc();
    float zero = 0.0f;
    CUevent e;
    CUgraph g;
    CUgraphExec ex;
    CUgraphNode wait, add, host;
    int n = N;
    CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CHECK(cuGraphCreate(&g, 0));
    CHECK(cuGraphAddEventWaitNode(&wait, g, NULL, 0, e));
    CUDA_KERNEL_NODE_PARAMS kp = {0};
    kp.func = K("ag_add");
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1, kp.blockDimX = N, kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = (void *[]){&y, &x, &x, &n};
    CHECK(cuGraphAddKernelNode(&add, g, &wait, 1, &kp));
    CUDA_HOST_NODE_PARAMS hp = {bump_flag, NULL};
    CHECK(cuGraphAddHostNode(&host, g, &add, 1, &hp));
    CHECK(cuGraphInstantiate(&ex, g, 0));
    for (int i = 1; i <= 16; i++) {
        float v = (float)i;
        CHECK(launch("ag_fill", a, (void *[]){&t, &zero, &n}));
        CHECK(launch("ag_fill", a, (void *[]){&x, &v, &n}));
        CHECK(cuEventRecord(e, a));
        CHECK(cuGraphLaunch(ex, b));
        CHECK(launch("ag_fill", a, (void *[]){&t, &zero, &n}));
        spin_for(i);
        CHECK(cuCtxSynchronize());
        if (first(y) != 2.0f * v)
            return result(0, "iteration %d: the graph read %g, expected %g", i, first(y) / 2.0f, v);
    }
    return result(1, "16 graph launches waited for their event");
}

/* AG_ADV_STEPS=1: each step of pattern 3 on stderr, to see where a real driver stops. */
static void step(const char *what, uint32_t i)
{
    static int on = -1;
    if (on < 0)
        on = getenv("AG_ADV_STEPS") != NULL;
    if (on)
        fprintf(stderr, "p3 %u: %s\n", i, what);
}

/* 3: one event recorded on two streams. Stream a records it in the middle of a sequence,
 * then the per-thread default stream records it behind a closed gate, so that is the
 * record any later query or wait refers to. The gate is a kernel (ag_spin_until) that
 * spins until the host has written at least i into a word of mapped page-locked memory:
 * no host function (a real driver may run them all on one thread, so a gate there can
 * block what the host waits for) and no stream memory wait (on the H200 one held the
 * hardware queue that stream a's work shared: cuStreamSynchronize(a) never returned).
 * Iteration i waits for word >= i; the word holds i - 1 until the host opens it.
 * Every kernel runs once before the first gate closes: with lazy module loading (the
 * default since CUDA 12.2) a kernel's first launch loads it, and loading may wait for the
 * whole context, so a first launch on stream a behind a spinning kernel that waits for the
 * host deadlocks (Programming Guide, "Lazy Loading": concurrent execution). On the H200 the
 * program hung there with and without the library until it warmed up. */
static void p3_warm_up(CUdeviceptr dgate, CUdeviceptr x, CUdeviceptr y)
{
    float one = 1.0f;
    int n = N;
    uint32_t open = 0;
    CHECK(launch("ag_spin_until", CU_STREAM_PER_THREAD, (void *[]){&dgate, &open}));
    CHECK(launch("ag_fill", CU_STREAM_PER_THREAD, (void *[]){&x, &one, &n}));
    CHECK(launch("ag_scale", CU_STREAM_PER_THREAD, (void *[]){&x, &one, &n}));
    CHECK(launch("ag_add", CU_STREAM_PER_THREAD, (void *[]){&y, &x, &x, &n}));
    CHECK(cuCtxSynchronize());
}

static int p3(void)
{
    CUstream a = stream();
    CUdeviceptr x = dalloc(), w = dalloc(), y = dalloc(), dgate;
    CUevent e;
    float one = 1.0f;
    int n = N;
    uint32_t *gate;
    CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CHECK(cuMemHostAlloc((void **)&gate, sizeof *gate, CU_MEMHOSTALLOC_DEVICEMAP));
    CHECK(cuMemHostGetDevicePointer(&dgate, gate, 0));
    __atomic_store_n(gate, 0, __ATOMIC_SEQ_CST);
    p3_warm_up(dgate, x, y);
    for (uint32_t i = 1; i <= 16; i++) {
        float v = (float)i;
        step("gate", i);
        CHECK(launch("ag_spin_until", CU_STREAM_PER_THREAD, (void *[]){&dgate, &i}));
        step("fill a", i);
        CHECK(launch("ag_fill", a, (void *[]){&x, &one, &n}));
        CHECK(cuEventRecord(e, a));
        CHECK(launch("ag_fill", CU_STREAM_PER_THREAD, (void *[]){&w, &v, &n}));
        CHECK(cuEventRecord(e, CU_STREAM_PER_THREAD));
        CHECK(launch("ag_scale", a, (void *[]){&x, &one, &n}));
        step("sync a", i);
        CHECK(cuStreamSynchronize(a));
        step("query", i);
        CUresult q = cuEventQuery(e);
        CHECK(cuStreamWaitEvent(a, e, 0));
        CHECK(launch("ag_add", a, (void *[]){&y, &w, &w, &n}));
        step("open", i);
        __atomic_store_n(gate, i, __ATOMIC_SEQ_CST); /* open: the GPU polls the word */
        CHECK(cuCtxSynchronize());
        step("synced", i);
        if (q != CUDA_ERROR_NOT_READY)
            return result(0, "iteration %u: query of the gated record answered %s", i, name_of(q));
        if (first(y) != 2.0f * v)
            return result(0, "iteration %u: the waiter read %g, expected %g", i, first(y) / 2.0f, v);
    }
    CHECK(cuMemFreeHost(gate));
    return result(1, "16 iterations, queries and waits used the latest record");
}

/* 4: kernels that record events through launch attributes (programmatic and launch
 * completion events) behind a gate: neither event can be complete before the gate opens. */
static int p4(void)
{
    CUstream s = stream();
    CUdeviceptr x = dalloc();
    CUevent pe, ce;
    float v = 1.0f;
    int n = N;
    CHECK(cuEventCreate(&pe, CU_EVENT_DISABLE_TIMING));
    CHECK(cuEventCreate(&ce, CU_EVENT_DISABLE_TIMING));
    CUlaunchAttribute at[2];
    memset(at, 0, sizeof at);
    at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
    at[0].value.programmaticEvent.event = pe;
    at[1].id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
    at[1].value.launchCompletionEvent.event = ce;
    CUlaunchConfig cfg = {1, 1, 1, N, 1, 1, 0, s, NULL, 1};
    for (int i = 0; i < 16; i++) {
        gate_set(0);
        CHECK(cuLaunchHostFunc(s, gate_wait, NULL));
        cfg.attrs = &at[0];
        CHECK(cuLaunchKernelEx(&cfg, K("ag_fill"), (void *[]){&x, &v, &n}, NULL));
        cfg.attrs = &at[1];
        CHECK(cuLaunchKernelEx(&cfg, K("ag_scale"), (void *[]){&x, &v, &n}, NULL));
        CUresult qp = cuEventQuery(pe), qc = cuEventQuery(ce);
        gate_set(1);
        CHECK(cuStreamSynchronize(s));
        if (qp != CUDA_ERROR_NOT_READY || qc != CUDA_ERROR_NOT_READY)
            return result(0, "iteration %d: programmatic event %s, completion event %s", i, name_of(qp), name_of(qc));
        CHECK(cuEventQuery(pe));
        CHECK(cuEventQuery(ce));
    }
    return result(1, "16 iterations, both events pending behind the gate");
}

/* 5: another thread captures its own stream again and again while this one runs an
 * order-dependent sequence; every result must be that of the program's order. */
static atomic_int p5_done;
static void *p5_capturer(void *arg)
{
    CUstream s;
    CUdeviceptr d = *(CUdeviceptr *)arg;
    float v = 5.0f;
    int n = N;
    CHECK(cuCtxSetCurrent(ctx));
    s = stream();
    while (!atomic_load(&p5_done)) {
        CUgraph g;
        CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
        CHECK(launch("ag_fill", s, (void *[]){&d, &v, &n}));
        CHECK(cuStreamEndCapture(s, &g));
        CHECK(cuGraphDestroy(g));
    }
    return NULL;
}

static int p5(void)
{
    CUstream s = stream();
    CUdeviceptr x = dalloc(), y = dalloc(), other = dalloc();
    float one = 1.0f, three = 3.0f, *out;
    int n = N, rc = 0;
    pthread_t t;
    CHECK(cuMemAllocHost((void **)&out, sizeof(float)));
    if (pthread_create(&t, NULL, p5_capturer, &other))
        return result(0, "no thread");
    for (int i = 0; i < 3000 && rc == 0; i++) {
        CHECK(launch("ag_fill", s, (void *[]){&x, &one, &n}));
        CHECK(launch("ag_scale", s, (void *[]){&x, &three, &n}));
        CHECK(launch("ag_add", s, (void *[]){&y, &x, &x, &n}));
        CHECK(cuMemcpyDtoHAsync(out, y, sizeof(float), s));
        CHECK(cuStreamSynchronize(s));
        if (*out != 6.0f)
            rc = result(0, "iteration %d read %g, expected 6", i, *out);
    }
    atomic_store(&p5_done, 1);
    pthread_join(t, NULL);
    return rc ? rc : result(1, "3000 iterations beside a capturing thread");
}

/* 6: cuLaunchKernelEx with numAttrs > 0 and attrs NULL, and a NULL kernelParams entry,
 * after the same launch was learned: the driver answers CUDA_ERROR_INVALID_VALUE. */
static int p6(void)
{
    CUstream s = stream();
    CUdeviceptr x = dalloc();
    float v = 1.0f;
    int n = N;
    CUlaunchConfig cfg = {1, 1, 1, N, 1, 1, 0, s, NULL, 0};
    for (int i = 0; i < 12; i++) {
        CHECK(cuLaunchKernelEx(&cfg, K("ag_fill"), (void *[]){&x, &v, &n}, NULL));
        CHECK(cuLaunchKernelEx(&cfg, K("ag_scale"), (void *[]){&x, &v, &n}, NULL));
        CHECK(cuStreamSynchronize(s));
    }
    cfg.numAttrs = 1;
    CUresult a = cuLaunchKernelEx(&cfg, K("ag_fill"), (void *[]){&x, &v, &n}, NULL);
    cfg.numAttrs = 0;
    CHECK(cuLaunchKernelEx(&cfg, K("ag_fill"), (void *[]){&x, &v, &n}, NULL));
    CUresult b = cuLaunchKernelEx(&cfg, K("ag_scale"), (void *[]){&x, NULL, &n}, NULL);
    CHECK(cuStreamSynchronize(s));
    return result(a == CUDA_ERROR_INVALID_VALUE && b == CUDA_ERROR_INVALID_VALUE, "attrs NULL: %s, NULL parameter: %s",
                  name_of(a), name_of(b));
}

/* 7: exit() from a signal handler while the main thread launches a graph in a loop. */
static atomic_long p7_launches;
static pthread_t p7_main;
static void p7_exit(int sig)
{
    (void)sig;
    exit(0);
}
static void p7_report(void)
{
    char msg[64];
    int n = snprintf(msg, sizeof msg, "result: pattern 7 ok exited from the handler\n");
    ssize_t w = write(1, msg, (size_t)n);
    (void)w;
}
static void *p7_killer(void *arg)
{
    (void)arg;
    while (atomic_load(&p7_launches) < 3000)
        ;
    pthread_kill(p7_main, SIGUSR1);
    return NULL;
}

static int p7(void)
{
    CUstream s = stream();
    CUdeviceptr c = dalloc();
    CUgraph g;
    CUgraphExec ex;
    CUgraphNode k;
    pthread_t t;
    CUDA_KERNEL_NODE_PARAMS kp = {0};
    kp.func = K("ag_inc");
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1, kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = (void *[]){&c};
    CHECK(cuGraphCreate(&g, 0));
    CHECK(cuGraphAddKernelNode(&k, g, NULL, 0, &kp));
    CHECK(cuGraphInstantiate(&ex, g, 0));
    fflush(stdout);
    atexit(p7_report);
    p7_main = pthread_self();
    signal(SIGUSR1, p7_exit);
    if (pthread_create(&t, NULL, p7_killer, NULL))
        return result(0, "no thread");
    for (;;) {
        for (int i = 0; i < 100; i++) {
            CHECK(launch("ag_inc", s, (void *[]){&c}));
            CHECK(cuGraphLaunch(ex, s));
            atomic_fetch_add(&p7_launches, 1);
        }
        CHECK(cuStreamSynchronize(s));
    }
}

/* 8 and 12: a sequence that ends with a host function the host waits for by spinning,
 * without a CUDA call. 8 runs it where no thread can be created any more. */
static int host_wait_loop(CUstream s, CUdeviceptr c, long iters)
{
    long base = atomic_load(&flag);
    int before, count;
    CHECK(cuMemcpyDtoH(&before, c, sizeof before));
    for (long i = 1; i <= iters; i++) {
        CHECK(launch("ag_inc", s, (void *[]){&c}));
        CHECK(cuLaunchHostFunc(s, bump_flag, NULL));
        spin_for(base + i);
    }
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemcpyDtoH(&count, c, sizeof count));
    count -= before;
    return result(count == iters, "%ld host waits, counter %d", iters, count);
}

static void *nothing(void *arg)
{
    return arg;
}

static int p8(char **argv)
{
    /* Thread stacks take the stack limit's size: with 256 MiB stacks, an address-space
     * limit a little above what is mapped lets malloc work but no thread start. */
    struct rlimit st, as;
    getrlimit(RLIMIT_STACK, &st);
    if (st.rlim_cur == RLIM_INFINITY || st.rlim_cur < (256u << 20)) {
        st.rlim_cur = 256u << 20;
        if (st.rlim_max != RLIM_INFINITY && st.rlim_max < st.rlim_cur)
            return result(1, "not expressible here (stack limit)");
        if (setrlimit(RLIMIT_STACK, &st) == 0)
            execv("/proc/self/exe", argv);
        return result(1, "not expressible here (re-exec)");
    }
    CUstream s = stream();
    CUdeviceptr c = dalloc();
    /* The driver's own threads start now, before the limit. */
    CHECK(launch("ag_inc", s, (void *[]){&c}));
    CHECK(cuLaunchHostFunc(s, bump_flag, NULL));
    CHECK(cuStreamSynchronize(s));
    as.rlim_cur = as.rlim_max = (rlim_t)vm_kib("VmSize") * 1024 + (96u << 20);
    pthread_t t;
    if (setrlimit(RLIMIT_AS, &as) || pthread_create(&t, NULL, nothing, NULL) == 0)
        return result(1, "not expressible here (threads still start)");
    return host_wait_loop(s, c, 300);
}

/* 9: after a device fault every call returns the sticky error, learned launches too. */
static int p9(void)
{
    CUstream s = stream();
    CUdeviceptr x = dalloc();
    float v = 2.0f;
    int n = N;
    int *null = NULL;
    for (int i = 0; i < 12; i++) {
        CHECK(launch("ag_fill", s, (void *[]){&x, &v, &n}));
        CHECK(launch("ag_scale", s, (void *[]){&x, &v, &n}));
        CHECK(launch("ag_scale", s, (void *[]){&x, &v, &n}));
        CHECK(cuStreamSynchronize(s));
    }
    CHECK(launch("ag_fault", s, (void *[]){&null}));
    CUresult sync = cuStreamSynchronize(s);
    CUresult l1 = launch("ag_fill", s, (void *[]){&x, &v, &n});
    CUresult l2 = launch("ag_scale", s, (void *[]){&x, &v, &n});
    CUresult l3 = launch("ag_scale", s, (void *[]){&x, &v, &n});
    CUresult sync2 = cuStreamSynchronize(s);
    int ok = sync != CUDA_SUCCESS && l1 == sync && l2 == sync && l3 == sync && sync2 == sync;
    return result(ok, "sync %s, launches %s %s %s, sync %s", name_of(sync), name_of(l1), name_of(l2), name_of(l3),
                  name_of(sync2));
}

/* 10: a learned memset and copy on memory freed since: the driver refuses them at the call. */
static int p10(void)
{
    CUstream s = stream();
    CUdeviceptr x = dalloc(), d = dalloc(), y = dalloc();
    float v = 2.0f;
    int n = N;
    for (int i = 0; i < 12; i++) {
        CHECK(launch("ag_fill", s, (void *[]){&x, &v, &n}));
        CHECK(cuMemsetD32Async(d, 0x3f800000u, N, s));
        CHECK(cuMemcpyDtoDAsync(y, d, N * sizeof(float), s));
        CHECK(cuStreamSynchronize(s));
    }
    CHECK(cuMemFree(d));
    CHECK(launch("ag_fill", s, (void *[]){&x, &v, &n}));
    CUresult set = cuMemsetD32Async(d, 0x3f800000u, N, s);
    CUresult copy = cuMemcpyDtoDAsync(y, d, N * sizeof(float), s);
    CUresult sync = cuStreamSynchronize(s);
    return result(set == CUDA_ERROR_INVALID_VALUE && copy == CUDA_ERROR_INVALID_VALUE && sync == CUDA_SUCCESS,
                  "memset %s, copy %s, sync %s", name_of(set), name_of(copy), name_of(sync));
}

/* 11: stream and module churn must not grow memory without bound. The figures go to
 * stderr; the result says whether growth stayed under the bounds. */
static int p11(void)
{
    CUdeviceptr c = dalloc();
    long rss0 = 0, vm0 = 0;
    for (int i = 0; i < 2200; i++) {
        if (i == 200)
            rss0 = vm_kib("VmRSS"), vm0 = vm_kib("VmSize");
        CUstream s = stream();
        for (int j = 0; j < 4; j++)
            CHECK(launch("ag_inc", s, (void *[]){&c}));
        CHECK(cuStreamSynchronize(s));
        CHECK(cuStreamDestroy(s));
    }
    long srss = vm_kib("VmRSS") - rss0, svm = vm_kib("VmSize") - vm0;
    for (int i = 0; i < 1020; i++) {
        if (i == 20)
            rss0 = vm_kib("VmRSS"), vm0 = vm_kib("VmSize");
        CUmodule m;
        CUfunction k;
        CHECK(cuModuleLoadData(&m, image));
        CHECK(cuModuleGetFunction(&k, m, "ag_inc"));
        CHECK(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, NULL, (void *[]){&c}, NULL));
        CHECK(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, NULL, (void *[]){&c}, NULL));
        CHECK(cuCtxSynchronize());
        CHECK(cuModuleUnload(m));
    }
    long mrss = vm_kib("VmRSS") - rss0, mvm = vm_kib("VmSize") - vm0;
    fprintf(stderr, "pattern 11: 2000 streams: +%ld KiB resident, +%ld KiB mapped; 1000 modules: +%ld KiB resident, +%ld KiB mapped\n",
            srss, svm, mrss, mvm);
    /* Resident memory: bounds far above what the driver itself keeps (the stand-in keeps
     * every destroyed handle's small record), far below a table per stream or module.
     * Mapped memory is only reported: thread stacks and malloc arenas make it jump. */
    int ok = srss < 4096 && mrss < 4096;
    return result(ok, "%s", ok ? "resident memory bounded over 2000 streams and 1000 modules" : "memory grows with churn");
}

/* 13: more live sequences than AUTOGRAPH_MAX_GRAPHS (the test sets it to 2): results must
 * hold; tests/adversary.bats checks the library's instantiation count. */
static int p13(void)
{
    CUstream s[6];
    CUdeviceptr x[6];
    int n = N;
    for (int j = 0; j < 6; j++)
        s[j] = stream(), x[j] = dalloc();
    for (int i = 0; i < 200; i++) {
        for (int j = 0; j < 6; j++) {
            float v = (float)(j + 1), two = 2.0f;
            CHECK(launch("ag_fill", s[j], (void *[]){&x[j], &v, &n}));
            CHECK(launch("ag_scale", s[j], (void *[]){&x[j], &two, &n}));
            CHECK(launch("ag_scale", s[j], (void *[]){&x[j], &two, &n}));
            CHECK(cuStreamSynchronize(s[j]));
        }
    }
    for (int j = 0; j < 6; j++)
        if (first(x[j]) != 4.0f * (float)(j + 1))
            return result(0, "stream %d read %g", j, first(x[j]));
    return result(1, "6 streams x 200 iterations");
}

/* 14: a stable loop of many distinct segments; tests/adversary.bats checks that the
 * library makes the same decisions on every run, wherever the heap happens to be. */
static int p14(void)
{
    CUstream s = stream();
    CUdeviceptr x[8];
    int n = N;
    float two = 2.0f, one = 1.0f;
    for (int j = 0; j < 8; j++)
        x[j] = dalloc();
    float want[8] = {0};
    for (int i = 0; i < 12; i++)
        for (int seg = 0; seg < 96; seg++) {
            CUdeviceptr *a = &x[seg % 8], *b = &x[(seg / 8) % 8];
            want[seg % 8] = 1.0f;
            want[(seg / 8) % 8] = 2.0f * (want[seg % 8] + want[seg % 8]);
            CHECK(cuLaunchKernel(K("ag_fill"), 1 + (unsigned)seg % 3, 1, 1, N, 1, 1, 0, s, (void *[]){a, &one, &n},
                                 NULL));
            CHECK(launch("ag_add", s, (void *[]){b, a, a, &n}));
            CHECK(launch("ag_scale", s, (void *[]){b, &two, &n}));
            CHECK(cuStreamSynchronize(s));
        }
    for (int j = 0; j < 8; j++)
        if (first(x[j]) != want[j])
            return result(0, "buffer %d read %g, expected %g", j, first(x[j]), want[j]);
    return result(1, "12 iterations of 96 segments");
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "--pattern") || (pattern = atoi(argv[2])) < 1 || pattern > 14) {
        fprintf(stderr, "usage: %s --pattern N   (N = 1..14; PTX from env AG_KERNELS_PTX)\n", argv[0]);
        return 2;
    }
    const char *ptx = getenv("AG_KERNELS_PTX");
    if (!ptx || !*ptx) {
        fprintf(stderr, "adversary: set AG_KERNELS_PTX to the test kernels' PTX\n");
        return 2;
    }
    image = read_file(ptx);
    signal(SIGALRM, on_alarm);
    alarm(pattern == 12 ? 40 : 30);
    CUdevice dev;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, image));
    switch (pattern) {
    case 1: return p1();
    case 2: return p2();
    case 3: return p3();
    case 4: return p4();
    case 5: return p5();
    case 6: return p6();
    case 7: return p7();
    case 8: return p8(argv);
    case 9: return p9();
    case 10: return p10();
    case 11: return p11();
    case 12: return host_wait_loop(stream(), dalloc(), 300);
    case 13: return p13();
    default: return p14();
    }
}
