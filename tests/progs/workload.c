/* The test workload, shared by the three door binaries (drv.h): a deterministic mix of
 * kernel launches (cuLaunchKernel, optionally cuLaunchKernelEx), copies in every
 * direction from pinned and pageable host memory, memsets and synchronizations, run by
 * one or more threads, each on its own buffers and stream. It prints one result line per
 * thread (hashes of the buffers read back, so any change in the work shows) and one
 * line with what it submitted:
 *   counts: launches=N htod=N dtoh=N dtod=N memsets=N syncs=N
 * Every call is checked; a failure prints the call, file:line and error name, exit 2.
 * Runs unchanged on a GPU and on the fakecuda stand-in. */
#define _GNU_SOURCE
#include "drv.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/ag_kernels.h"

static const char usage[] =
    "usage: %s [options] [kernels.ptx]   (or env AG_KERNELS_PTX)\n"
    "  --iters N           iterations (default 20)\n"
    "  --kernels K         launches per iteration (default 8)\n"
    "  --sync iter|none    stream synchronize after each iteration (default iter)\n"
    "  --stream legacy|created   NULL stream or a created one per thread (default created)\n"
    "  --ex                every second launch through cuLaunchKernelEx\n"
    "  --ptds              per-thread default-stream entry points (NULL = per-thread stream)\n"
    "  --threads T         T threads, each with its own stream and buffers (default 1)\n"
    "  --load module|library   cuModuleLoadData or cuLibraryLoadData (default module)\n"
    "  --n N               elements per buffer (default 1000)\n"
    "  --exit-nosync       exit(0) right after launching, without synchronizing\n"
    "  --atexit N          an atexit handler launches N more kernels after main returns\n";

static struct drv D;

void drv_check(CUresult rc, const char *call, const char *file, int line)
{
    if (rc == CUDA_SUCCESS)
        return;
    const char *name = NULL;
    if (!D.GetErrorName || D.GetErrorName(rc, &name) != CUDA_SUCCESS || !name)
        name = "?";
    fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", file, line, call, name, (int)rc);
    exit(2);
}

/* ---- options --------------------------------------------------------------------- */

static struct {
    long iters, kernels, threads, n, atexit_launches;
    int sync_iter, created, ex, ptds, library, exit_nosync;
    const char *ptx;
} opt = {20, 8, 1, 1000, 0, 1, 1, 0, 0, 0, 0, NULL};

static long number(const char *prog, const char *flag, const char *v, long lo, long hi)
{
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || end == v || n < lo || n > hi) {
        fprintf(stderr, "%s: %s needs a number from %ld to %ld\n", prog, flag, lo, hi);
        exit(2);
    }
    return n;
}

static int choice(const char *prog, const char *flag, const char *v, const char *a, const char *b)
{
    if (v && strcmp(v, a) == 0)
        return 0;
    if (v && strcmp(v, b) == 0)
        return 1;
    fprintf(stderr, "%s: %s needs %s or %s\n", prog, flag, a, b);
    exit(2);
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--iters") == 0)
            opt.iters = number(argv[0], a, v, 0, 100000000), i++;
        else if (strcmp(a, "--kernels") == 0)
            opt.kernels = number(argv[0], a, v, 0, 100000), i++;
        else if (strcmp(a, "--threads") == 0)
            opt.threads = number(argv[0], a, v, 1, 256), i++;
        else if (strcmp(a, "--n") == 0)
            opt.n = number(argv[0], a, v, 1, 1 << 24), i++;
        else if (strcmp(a, "--atexit") == 0)
            opt.atexit_launches = number(argv[0], a, v, 1, 100000000), i++;
        else if (strcmp(a, "--sync") == 0)
            opt.sync_iter = !choice(argv[0], a, v, "iter", "none"), i++;
        else if (strcmp(a, "--stream") == 0)
            opt.created = choice(argv[0], a, v, "legacy", "created"), i++;
        else if (strcmp(a, "--load") == 0)
            opt.library = choice(argv[0], a, v, "module", "library"), i++;
        else if (strcmp(a, "--ex") == 0)
            opt.ex = 1;
        else if (strcmp(a, "--ptds") == 0)
            opt.ptds = 1;
        else if (strcmp(a, "--exit-nosync") == 0)
            opt.exit_nosync = 1;
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            printf(usage, argv[0]), exit(0);
        else if (a[0] != '-' && !opt.ptx)
            opt.ptx = a;
        else
            fprintf(stderr, usage, argv[0]), exit(2);
    }
    if (!opt.ptx)
        opt.ptx = getenv("AG_KERNELS_PTX");
    if (!opt.ptx || !*opt.ptx) {
        fprintf(stderr, "%s: no kernels PTX given (argument or AG_KERNELS_PTX)\n", argv[0]);
        exit(2);
    }
}

/* ---- what was submitted ---------------------------------------------------------- */

static unsigned long long n_launches, n_htod, n_dtoh, n_dtod, n_memsets, n_syncs;
#define COUNT(c) __atomic_add_fetch(&(c), 1, __ATOMIC_RELAXED)

static void print_counts(void)
{
    printf("counts: launches=%llu htod=%llu dtoh=%llu dtod=%llu memsets=%llu syncs=%llu\n",
           n_launches, n_htod, n_dtoh, n_dtod, n_memsets, n_syncs);
    fflush(stdout);
}

/* ---- kernels ----------------------------------------------------------------------- */

enum { K_FILL, K_AXPY, K_ADD, K_SCALE, K_STENCIL, K_MIX, K_BIG, K_INC, K_COUNT };
static const char *const kernel_names[K_COUNT] = {"ag_fill", "ag_axpy",    "ag_add", "ag_scale",
                                                   "ag_stencil", "ag_mix", "ag_big", "ag_inc"};
static CUfunction kfn[K_COUNT];
static CUcontext ctx;

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
        len += r;
        if (len + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "out of memory reading %s\n", path);
        exit(2);
    }
    buf[len] = '\0';
    return buf;
}

static void load_kernels(void)
{
    char *ptx = read_file(opt.ptx);
    if (opt.library) {
        CUlibrary lib;
        DRV_CHECK(D.LibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
        for (int k = 0; k < K_COUNT; k++) {
            CUkernel kern;
            DRV_CHECK(D.LibraryGetKernel(&kern, lib, kernel_names[k]));
            kfn[k] = (CUfunction)kern; /* as cudart does: a CUkernel launched as a CUfunction */
        }
    } else {
        CUmodule mod;
        DRV_CHECK(D.ModuleLoadData(&mod, ptx));
        for (int k = 0; k < K_COUNT; k++)
            DRV_CHECK(D.ModuleGetFunction(&kfn[k], mod, kernel_names[k]));
    }
    free(ptx);
}

static void launch(int k, unsigned n, CUstream s, void **params, int ex)
{
    unsigned grid = (n + 255) / 256;
    if (ex) {
        CUlaunchAttribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
        attr.value.priority = 0;
        CUlaunchConfig cfg = {.gridDimX = grid, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 256,
                              .blockDimY = 1, .blockDimZ = 1, .sharedMemBytes = 0, .hStream = s,
                              .attrs = &attr, .numAttrs = 1};
        DRV_CHECK(D.LaunchKernelEx(&cfg, kfn[k], params, NULL));
    } else {
        DRV_CHECK(D.LaunchKernel(kfn[k], grid, 1, 1, 256, 1, 1, 0, s, params, NULL));
    }
    COUNT(n_launches);
}

/* ---- one thread's work ----------------------------------------------------------- */

struct worker {
    int id;
    pthread_t thread;
    CUstream s;
    CUdeviceptr x, y, out, tmp, keep;
    float *pinned, *pageable;
    uint32_t h_out, h_keep, h_y;
    double sum_out;
};

static uint32_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

/* One step of the launch cycle: j is the launch's index within the iteration. */
static void step(struct worker *w, long it, long j)
{
    int n = (int)opt.n;
    float half = 0.5f, fv = 0.25f;
    char c = (char)(it % 7);
    double d = 0.25 * (double)j;
    short sh = (short)(it % 1000);
    long long ll = j - 3;
    struct ag_big_arg big;
    for (int i = 0; i < AG_BIG_ARG_FLOATS; i++)
        big.v[i] = 0.001f * (float)((i + it) % 13);
    int ex = opt.ex && (j % 2 == 1);
    switch ((it + j) % 7) {
    case 0: {
        void *p[] = {&w->y, &w->x, &half, &n};
        launch(K_AXPY, (unsigned)n, w->s, p, ex);
        break;
    }
    case 1: {
        void *p[] = {&w->y, &half, &n};
        launch(K_SCALE, (unsigned)n, w->s, p, ex);
        break;
    }
    case 2: {
        void *p[] = {&w->out, &w->x, &w->y, &n};
        launch(K_ADD, (unsigned)n, w->s, p, ex);
        break;
    }
    case 3: {
        void *p[] = {&w->tmp, &w->out, &n};
        launch(K_STENCIL, (unsigned)n, w->s, p, ex);
        break;
    }
    case 4: {
        void *p[] = {&w->tmp, &n, &c, &d, &sh, &ll};
        launch(K_MIX, (unsigned)n, w->s, p, ex);
        break;
    }
    case 5: {
        void *p[] = {&w->out, &big, &n};
        launch(K_BIG, (unsigned)n, w->s, p, ex);
        break;
    }
    default: {
        int half_n = n / 2;
        void *p[] = {&w->keep, &fv, &half_n};
        launch(K_FILL, (unsigned)half_n, w->s, p, ex);
        break;
    }
    }
}

static void *work(void *arg)
{
    struct worker *w = arg;
    size_t n = (size_t)opt.n, bytes = n * sizeof(float);
    DRV_CHECK(D.CtxSetCurrent(ctx));
    w->s = NULL;
    if (opt.created)
        DRV_CHECK(D.StreamCreate(&w->s, CU_STREAM_NON_BLOCKING));
    DRV_CHECK(D.MemAlloc(&w->x, bytes));
    DRV_CHECK(D.MemAlloc(&w->y, bytes));
    DRV_CHECK(D.MemAlloc(&w->out, bytes));
    DRV_CHECK(D.MemAlloc(&w->tmp, bytes));
    DRV_CHECK(D.MemAlloc(&w->keep, bytes));
    DRV_CHECK(D.MemAllocHost((void **)&w->pinned, bytes));
    w->pageable = malloc(bytes);
    if (!w->pageable) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < n; i++) {
        w->pageable[i] = (float)((i * 7 + (size_t)w->id * 13) % 101) / 101.0f;
        w->pinned[i] = (float)((i * 3 + (size_t)w->id) % 17) / 17.0f;
    }
    /* Pageable, synchronous; pinned, asynchronous on the thread's stream. */
    DRV_CHECK(D.MemcpyHtoD(w->x, w->pageable, bytes));
    COUNT(n_htod);
    DRV_CHECK(D.MemcpyHtoDAsync(w->y, w->pinned, bytes, w->s));
    COUNT(n_htod);
    DRV_CHECK(D.MemsetD8(w->tmp, 0, bytes));
    COUNT(n_memsets);
    DRV_CHECK(D.MemsetD32Async(w->out, 0, n, w->s));
    COUNT(n_memsets);
    DRV_CHECK(D.MemsetD32Async(w->keep, 0x3f800000u /* 1.0f */, n, w->s));
    COUNT(n_memsets);

    for (long it = 0; it < opt.iters; it++) {
        for (long j = 0; j < opt.kernels; j++)
            step(w, it, j);
        DRV_CHECK(D.MemcpyDtoDAsync(w->keep + bytes / 2, w->tmp, bytes / 2, w->s));
        COUNT(n_dtod);
        if (opt.sync_iter) {
            DRV_CHECK(D.StreamSynchronize(w->s));
            COUNT(n_syncs);
        }
    }
    if (opt.exit_nosync)
        return NULL;

    /* Read back: pinned asynchronously, pageable synchronously. */
    DRV_CHECK(D.MemcpyDtoHAsync(w->pinned, w->out, bytes, w->s));
    COUNT(n_dtoh);
    DRV_CHECK(D.StreamSynchronize(w->s));
    COUNT(n_syncs);
    w->h_out = fnv(w->pinned, bytes);
    w->sum_out = 0;
    for (size_t i = 0; i < n; i++)
        w->sum_out += w->pinned[i];
    DRV_CHECK(D.MemcpyDtoH(w->pageable, w->keep, bytes));
    COUNT(n_dtoh);
    w->h_keep = fnv(w->pageable, bytes);
    DRV_CHECK(D.MemcpyDtoH(w->pageable, w->y, bytes));
    COUNT(n_dtoh);
    w->h_y = fnv(w->pageable, bytes);

    DRV_CHECK(D.MemFree(w->x));
    DRV_CHECK(D.MemFree(w->y));
    DRV_CHECK(D.MemFree(w->out));
    DRV_CHECK(D.MemFree(w->tmp));
    DRV_CHECK(D.MemFree(w->keep));
    DRV_CHECK(D.MemFreeHost(w->pinned));
    free(w->pageable);
    if (w->s)
        DRV_CHECK(D.StreamDestroy(w->s));
    return NULL;
}

/* ---- work submitted after main returns --------------------------------------------- */

static CUdeviceptr atexit_counter;

static void at_exit_launches(void)
{
    void *p[] = {&atexit_counter};
    for (long i = 0; i < opt.atexit_launches; i++)
        launch(K_INC, 1, NULL, p, 0);
    DRV_CHECK(D.CtxSynchronize());
    COUNT(n_syncs);
    int counter = 0;
    DRV_CHECK(D.MemcpyDtoH(&counter, atexit_counter, sizeof counter));
    COUNT(n_dtoh);
    printf("atexit: counter=%d\n", counter);
    print_counts();
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    drv_open(&D, opt.ptds);
    CUdevice dev;
    DRV_CHECK(D.Init(0));
    DRV_CHECK(D.DeviceGet(&dev, 0));
    DRV_CHECK(D.PrimaryCtxRetain(&ctx, dev));
    DRV_CHECK(D.CtxSetCurrent(ctx));
    load_kernels();

    if (opt.atexit_launches) {
        DRV_CHECK(D.MemAlloc(&atexit_counter, sizeof(int)));
        DRV_CHECK(D.MemsetD8(atexit_counter, 0, sizeof(int)));
        COUNT(n_memsets);
        atexit(at_exit_launches);
    }

    struct worker *w = calloc((size_t)opt.threads, sizeof *w);
    if (!w) {
        fprintf(stderr, "out of memory\n");
        return 2;
    }
    for (int t = 0; t < opt.threads; t++)
        w[t].id = t;
    if (opt.threads == 1) {
        work(&w[0]);
    } else {
        for (int t = 0; t < opt.threads; t++)
            if (pthread_create(&w[t].thread, NULL, work, &w[t]) != 0) {
                fprintf(stderr, "pthread_create failed\n");
                return 2;
            }
        for (int t = 0; t < opt.threads; t++)
            pthread_join(w[t].thread, NULL);
    }

    if (opt.exit_nosync) {
        printf("result: not read back (exit without synchronize)\n");
        print_counts();
        exit(0);
    }
    for (int t = 0; t < opt.threads; t++)
        printf("result: thread=%d out=%08x keep=%08x y=%08x sum_out=%.6g\n", t, (unsigned)w[t].h_out,
               (unsigned)w[t].h_keep, (unsigned)w[t].h_y, w[t].sum_out);
    free(w);
    DRV_CHECK(D.CtxSynchronize());
    COUNT(n_syncs);
    if (!opt.atexit_launches) {
        DRV_CHECK(D.PrimaryCtxRelease(dev));
        print_counts();
    }
    return 0;
}
