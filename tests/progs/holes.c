/* Programs aimed at the engine's assumptions (issue 8): each `holes PATTERN` runs one
 * situation in which a program could observe a difference, and prints what it observed
 * (data, return codes, memory growth) so that a run with and a run without the library
 * can be compared line by line. Runs unchanged on a GPU and on the fakecuda stand-in.
 *   unpinned      a learned copy from a registered buffer, then the buffer unregistered
 *                 and reused as pageable memory (pattern 1)
 *   freed         a learned memset whose buffer is freed: the driver's error at the call
 *                 (pattern 10)
 *   null-args     cuLaunchKernelEx with numAttrs > 0 and attrs NULL, and a NULL entry in
 *                 kernelParams, after a loop that taught the engine both launches (6)
 *   attr-event    a launch that records an event through a launch attribute (4)
 *   stream-churn N   N cycles of stream create, launches, destroy (pattern 11)
 *   module-churn N   N cycles of module load, launch, unload (pattern 11); both print
 *                 the resident growth after the first tenth of the cycles on stderr
 *   exit-signal   exit() from a SIGALRM handler while the loop replays graphs (7)
 * Every call is checked: a failure prints the call and error and exits 2, except where
 * the return code is what is observed (it is printed). */
#define _GNU_SOURCE
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define CHECK(call) check((call), #call, __LINE__)

static void check(CUresult rc, const char *call, int line)
{
    if (rc == CUDA_SUCCESS)
        return;
    const char *name = NULL;
    if (cuGetErrorName(rc, &name) != CUDA_SUCCESS || !name)
        name = "?";
    fprintf(stderr, "holes.c:%d: %s failed: %s (%d)\n", line, call, name, (int)rc);
    exit(2);
}

static const char *err(CUresult rc)
{
    const char *name = NULL;
    return cuGetErrorName(rc, &name) == CUDA_SUCCESS && name ? name : "?";
}

enum { N = 256 };
static char *image;
static CUmodule mod;
static CUfunction f_fill, f_scale, f_add, f_inc;
static CUstream s;

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0)
        exit(2);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len)
        exit(2);
    buf[len] = 0;
    fclose(f);
    return buf;
}

static void fill(CUdeviceptr p, float v)
{
    int n = N;
    CHECK(cuLaunchKernel(f_fill, 4, 1, 1, 64, 1, 1, 0, s, (void *[]){&p, &v, &n}, NULL));
}

static void scale(CUdeviceptr p, float v)
{
    int n = N;
    CHECK(cuLaunchKernel(f_scale, 4, 1, 1, 64, 1, 1, 0, s, (void *[]){&p, &v, &n}, NULL));
}

static double sum(CUdeviceptr p)
{
    float h[N];
    CHECK(cuMemcpyDtoH(h, p, sizeof h));
    double t = 0;
    for (int i = 0; i < N; i++)
        t += h[i];
    return t;
}

static long rss_kb(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2)
        exit(2);
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Pattern 1: while registered the host writes the buffer only after a sync; once it is
 * pageable again it rewrites it right after the copy call, as pageable copies allow. */
static void unpinned(void)
{
    CUdeviceptr d;
    static float host[N];
    CHECK(cuMemAlloc(&d, sizeof host));
    CHECK(cuMemHostRegister(host, sizeof host, 0));
    for (int it = 0; it < 20; it++) {
        if (it == 10)
            CHECK(cuMemHostUnregister(host));
        for (int i = 0; i < N; i++)
            host[i] = (float)it;
        fill(d, 0.0f);
        CHECK(cuMemcpyHtoDAsync(d, host, sizeof host, s));
        if (it >= 10)
            memset(host, 0, sizeof host); /* allowed: a pageable copy read it at the call */
        scale(d, 2.0f);
        CHECK(cuStreamSynchronize(s));
        printf("unpinned: it=%d sum=%.0f\n", it, sum(d));
    }
}

/* Pattern 10: after the free, each memset of the freed buffer must fail at the call. */
static void freed(void)
{
    CUdeviceptr a, b;
    CHECK(cuMemAlloc(&a, N * 4));
    CHECK(cuMemAlloc(&b, N * 4));
    for (int it = 0; it < 12; it++) {
        if (it == 6)
            CHECK(cuMemFree(b));
        fill(a, 1.0f);
        CUresult rc = cuMemsetD32Async(b, 7, N, s);
        scale(a, 3.0f);
        CUresult sync = cuStreamSynchronize(s);
        printf("freed: it=%d memset=%s sync=%s sum=%.0f\n", it, err(rc), err(sync), sum(a));
    }
}

/* Pattern 6: the driver refuses both launches; the library must neither crash nor hold them. */
static void null_args(void)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, N * 4));
    int n = N;
    float v = 2.0f;
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    for (int it = 0; it < 10; it++) {
        CUlaunchConfig cfg = {4, 1, 1, 64, 1, 1, 0, s, &attr, 1};
        void *params[] = {&d, &v, &n};
        fill(d, 1.0f);
        CUresult ex = cuLaunchKernelEx(&cfg, f_scale, params, NULL);
        if (it >= 5) {
            cfg.attrs = NULL;
            ex = cuLaunchKernelEx(&cfg, f_scale, params, NULL);
        }
        void *holey[] = {&d, it >= 5 ? NULL : &v, &n};
        CUresult plain = cuLaunchKernel(f_scale, 4, 1, 1, 64, 1, 1, 0, s, holey, NULL);
        CHECK(cuStreamSynchronize(s));
        printf("null-args: it=%d ex=%s plain=%s sum=%.0f\n", it, err(ex), err(plain), sum(d));
    }
}

/* Pattern 4: the launch completion event is recorded by every launch, graphed or not. */
static void attr_event(void)
{
    CUdeviceptr d;
    CUevent ev;
    CHECK(cuMemAlloc(&d, N * 4));
    CHECK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    int n = N;
    float v = 2.0f;
    for (int it = 0; it < 10; it++) {
        CUlaunchAttribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
        attr.value.launchCompletionEvent.event = ev;
        CUlaunchConfig cfg = {4, 1, 1, 64, 1, 1, 0, s, &attr, 1};
        fill(d, 1.0f);
        CHECK(cuLaunchKernelEx(&cfg, f_scale, (void *[]){&d, &v, &n}, NULL));
        scale(d, 0.5f);
        CHECK(cuStreamSynchronize(s));
        printf("attr-event: it=%d sum=%.0f\n", it, sum(d));
    }
    CHECK(cuEventSynchronize(ev));
}

static void stream_churn(long cycles)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, N * 4));
    long before = 0;
    for (long c = 0; c < cycles; c++) {
        CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        for (int it = 0; it < 3; it++) {
            fill(d, 1.0f);
            scale(d, 2.0f);
            CHECK(cuStreamSynchronize(s));
        }
        CHECK(cuStreamDestroy(s));
        if (c == cycles / 10)
            before = rss_kb(); /* after allocators and tables reached their working size */
    }
    printf("stream-churn: cycles=%ld sum=%.0f\n", cycles, sum(d));
    fprintf(stderr, "growth_kb=%ld\n", rss_kb() - before);
}

static void module_churn(long cycles)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, N * 4));
    long before = 0;
    for (long c = 0; c < cycles; c++) {
        CUmodule m;
        CUfunction f;
        CHECK(cuModuleLoadData(&m, image));
        CHECK(cuModuleGetFunction(&f, m, "ag_fill"));
        int n = N;
        float v = (float)(c % 7);
        CHECK(cuLaunchKernel(f, 4, 1, 1, 64, 1, 1, 0, s, (void *[]){&d, &v, &n}, NULL));
        CHECK(cuStreamSynchronize(s));
        CHECK(cuModuleUnload(m));
        if (c == cycles / 10)
            before = rss_kb();
    }
    printf("module-churn: cycles=%ld sum=%.0f\n", cycles, sum(d));
    fprintf(stderr, "growth_kb=%ld\n", rss_kb() - before);
}

static void on_alarm(int sig)
{
    (void)sig;
    exit(0);
}

/* Pattern 7: the handler exits wherever the loop is, inside the library as likely as not. */
static void exit_signal(void)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, N * 4));
    signal(SIGALRM, on_alarm);
    struct itimerval t = {{0, 0}, {0, 20000}};
    setitimer(ITIMER_REAL, &t, NULL);
    for (;;) {
        fill(d, 1.0f);
        scale(d, 2.0f);
        scale(d, 0.5f);
        CHECK(cuStreamSynchronize(s));
    }
}

int main(int argc, char **argv)
{
    const char *ptx = getenv("AG_KERNELS_PTX");
    if (argc < 2 || !ptx) {
        fprintf(stderr, "usage: %s unpinned|freed|null-args|attr-event|exit-signal|"
                        "stream-churn N|module-churn N   (PTX from env AG_KERNELS_PTX)\n", argv[0]);
        return 2;
    }
    image = read_file(ptx);
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, image));
    CHECK(cuModuleGetFunction(&f_fill, mod, "ag_fill"));
    CHECK(cuModuleGetFunction(&f_scale, mod, "ag_scale"));
    CHECK(cuModuleGetFunction(&f_add, mod, "ag_add"));
    CHECK(cuModuleGetFunction(&f_inc, mod, "ag_inc"));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    const char *p = argv[1];
    long count = argc > 2 ? atol(argv[2]) : 100;
    if (!strcmp(p, "unpinned"))
        unpinned();
    else if (!strcmp(p, "freed"))
        freed();
    else if (!strcmp(p, "null-args"))
        null_args();
    else if (!strcmp(p, "attr-event"))
        attr_event();
    else if (!strcmp(p, "stream-churn"))
        stream_churn(count);
    else if (!strcmp(p, "module-churn"))
        module_churn(count);
    else if (!strcmp(p, "exit-signal"))
        exit_signal();
    else
        return 2;
    return 0;
}
