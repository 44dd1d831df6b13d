/* Several devices from one process, for tests/multidev.bats: the tiny-kernel loop on
 * every device, each in its own context and stream, with a peer copy from each device to
 * the next every iteration; runs unchanged with and without libautograph, on GPUs or on
 * the fakecuda stand-in (AG_FAKE_DEVICES=N). Linked against libcuda directly.
 *
 * Iteration it on device d (p = it & 1): a += in[p^1] (what the previous device sent
 * last iteration), then scale and axpy kernels on a, optionally an axpy reading the
 * previous device's in[p^1] directly (--peer-access), then cuMemcpyPeerAsync of a into
 * the next device's in[p]. Each device's stream is synchronized at the end of the
 * iteration, so the buffers read in an iteration are never written in it.
 * With --threads each device is driven by a thread of its own (the threads meet at a
 * barrier after each iteration's synchronization instead).
 * --tail-held then launches the first half of one more iteration on every device and
 * calls cuCtxSynchronize from the last device's context before the final
 * synchronizations: work the library holds on one device is then submitted while another
 * device's context is current. --probe checks the stand-in's (and the driver's) rules
 * for several devices instead of running the loop.
 *
 * Output, identical with and without the library:
 *   devices: N
 *   result: dev=D hash=HASH
 *   counts: launches=N peer_copies=N
 * Every call is checked: a failure prints the call and the error name and exits 2. */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t */
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAX_DEV 16

static const char usage[] =
    "usage: %s [options]   (PTX from env AG_KERNELS_PTX)\n"
    "  --iters N             iterations (default 20)\n"
    "  --kernels K           launches per iteration and device (default 6, at least 2)\n"
    "  --n N                 elements per buffer (default 256)\n"
    "  --ctx primary|created each device's primary context, or one made by cuCtxCreate\n"
    "  --stream created|legacy   a created stream per device, or each context's legacy stream\n"
    "  --peer-access         enable peer access between all devices; each iteration also\n"
    "                        reads the previous device's memory from a kernel\n"
    "  --threads             one thread per device\n"
    "  --tail-held           half an iteration more on every device, then cuCtxSynchronize\n"
    "                        from the last device's context, then the final synchronizations\n"
    "  --probe               check the rules for several devices (needs 2 or more)\n";

static struct {
    long iters, kernels, n;
    int created_ctx, legacy, peer_access, tail_held, probe, threads;
} opt = {20, 6, 256, 0, 0, 0, 0, 0, 0};

static long number(const char *flag, const char *v, long lo, long hi)
{
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || end == v || n < lo || n > hi) {
        fprintf(stderr, "bad value for %s (%ld..%ld)\n", flag, lo, hi);
        exit(2);
    }
    return n;
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--iters"))
            opt.iters = number(a, v, 0, 10000000), i++;
        else if (!strcmp(a, "--kernels"))
            opt.kernels = number(a, v, 2, 10000), i++;
        else if (!strcmp(a, "--n"))
            opt.n = number(a, v, 4, 1 << 24), i++;
        else if (!strcmp(a, "--ctx") && v && (!strcmp(v, "primary") || !strcmp(v, "created")))
            opt.created_ctx = !strcmp(v, "created"), i++;
        else if (!strcmp(a, "--stream") && v && (!strcmp(v, "created") || !strcmp(v, "legacy")))
            opt.legacy = !strcmp(v, "legacy"), i++;
        else if (!strcmp(a, "--peer-access"))
            opt.peer_access = 1;
        else if (!strcmp(a, "--tail-held"))
            opt.tail_held = 1;
        else if (!strcmp(a, "--probe"))
            opt.probe = 1;
        else if (!strcmp(a, "--threads"))
            opt.threads = 1;
        else {
            fprintf(stderr, usage, argv[0]);
            exit(2);
        }
    }
    if (opt.threads && opt.tail_held) {
        fprintf(stderr, "--tail-held needs one thread\n");
        exit(2);
    }
}

struct dev {
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction add, scale, axpy, fill;
    CUstream s; /* NULL: the context's legacy stream */
    CUdeviceptr a, in[2];
};

static struct dev devs[MAX_DEV];
static int ndev;
static long launches, peer_copies;

static void make_context(struct dev *d, int ordinal)
{
    CHECK(cuDeviceGet(&d->dev, ordinal));
    if (opt.created_ctx) {
        /* CUDA 13 gave cuCtxCreate a parameters argument (12.x: cuCtxCreate_v4). */
#if CUDA_VERSION >= 13000
        CHECK(cuCtxCreate(&d->ctx, NULL, 0, d->dev));
#else
        CHECK(cuCtxCreate(&d->ctx, 0, d->dev));
#endif
    } else {
        CHECK(cuDevicePrimaryCtxRetain(&d->ctx, d->dev));
        CHECK(cuCtxSetCurrent(d->ctx));
    }
}

static void setup(void)
{
    const char *ptx_path = getenv("AG_KERNELS_PTX");
    if (!ptx_path) {
        fprintf(stderr, "AG_KERNELS_PTX is not set\n");
        exit(2);
    }
    void *ptx = read_file(ptx_path);
    CHECK(cuInit(0));
    CHECK(cuDeviceGetCount(&ndev));
    if (ndev > MAX_DEV)
        ndev = MAX_DEV;
    size_t bytes = (size_t)opt.n * sizeof(float);
    for (int i = 0; i < ndev; i++) {
        struct dev *d = &devs[i];
        make_context(d, i);
        CHECK(cuModuleLoadData(&d->mod, ptx));
        CHECK(cuModuleGetFunction(&d->add, d->mod, "ag_add"));
        CHECK(cuModuleGetFunction(&d->scale, d->mod, "ag_scale"));
        CHECK(cuModuleGetFunction(&d->axpy, d->mod, "ag_axpy"));
        CHECK(cuModuleGetFunction(&d->fill, d->mod, "ag_fill"));
        if (!opt.legacy)
            CHECK(cuStreamCreate(&d->s, CU_STREAM_DEFAULT));
        CHECK(cuMemAlloc(&d->a, bytes));
        for (int p = 0; p < 2; p++) {
            CHECK(cuMemAlloc(&d->in[p], bytes));
            CHECK(cuMemsetD32(d->in[p], 0, (size_t)opt.n));
        }
        float v = (float)(i + 1);
        int n = (int)opt.n;
        void *args[] = {&d->a, &v, &n};
        CHECK(cuLaunchKernel(d->fill, (unsigned)((opt.n + 63) / 64), 1, 1, 64, 1, 1, 0, d->s, args, NULL));
        CHECK(cuCtxSynchronize());
    }
    free(ptx);
    if (opt.peer_access)
        for (int i = 0; i < ndev; i++) {
            CHECK(cuCtxSetCurrent(devs[i].ctx));
            for (int j = 0; j < ndev; j++)
                if (j != i)
                    CHECK(cuCtxEnablePeerAccess(devs[j].ctx, 0));
        }
}

static void launch(struct dev *d, CUfunction f, void **args)
{
    CHECK(cuLaunchKernel(f, (unsigned)((opt.n + 63) / 64), 1, 1, 64, 1, 1, 0, d->s, args, NULL));
    __atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);
}

/* Kernel j of iteration it on device i (see the top of the file). */
static void kernel(int i, long it, long j)
{
    struct dev *d = &devs[i];
    struct dev *prev = &devs[(i + ndev - 1) % ndev];
    int n = (int)opt.n, q = (int)((it & 1) ^ 1);
    float half = 0.5f + 0.0625f * (float)i, quarter = 0.25f, eighth = 0.125f; /* no two devices alike */
    if (j == 0) {
        void *args[] = {&d->a, &d->a, &d->in[q], &n};
        launch(d, d->add, args);
    } else if (j == opt.kernels - 1 && opt.peer_access) {
        void *args[] = {&d->a, &prev->in[q], &eighth, &n};
        launch(d, d->axpy, args);
    } else if (j % 2) {
        void *args[] = {&d->a, &half, &n};
        launch(d, d->scale, args);
    } else {
        void *args[] = {&d->a, &d->in[q], &quarter, &n};
        launch(d, d->axpy, args);
    }
}

static void sync_device(struct dev *d)
{
    CHECK(cuCtxSetCurrent(d->ctx));
    if (d->s)
        CHECK(cuStreamSynchronize(d->s));
    else
        CHECK(cuCtxSynchronize());
}

/* Iteration it on device i, up to the peer copy to the next device. */
static void device_iteration(int i, long it)
{
    struct dev *d = &devs[i], *next = &devs[(i + 1) % ndev];
    CHECK(cuCtxSetCurrent(d->ctx));
    for (long j = 0; j < opt.kernels; j++)
        kernel(i, it, j);
    CHECK(cuMemcpyPeerAsync(next->in[(int)(it & 1)], next->ctx, d->a, d->ctx, (size_t)opt.n * sizeof(float), d->s));
    __atomic_add_fetch(&peer_copies, 1, __ATOMIC_RELAXED);
}

static pthread_barrier_t barrier;

static void *device_thread(void *arg)
{
    int i = (int)(intptr_t)arg;
    for (long it = 0; it < opt.iters; it++) {
        device_iteration(i, it);
        sync_device(&devs[i]);
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

static void loop(void)
{
    if (opt.threads) {
        pthread_t t[MAX_DEV];
        if (pthread_barrier_init(&barrier, NULL, (unsigned)ndev))
            exit(2);
        for (int i = 0; i < ndev; i++)
            if (pthread_create(&t[i], NULL, device_thread, (void *)(intptr_t)i))
                exit(2);
        for (int i = 0; i < ndev; i++)
            pthread_join(t[i], NULL);
        pthread_barrier_destroy(&barrier);
        return;
    }
    for (long it = 0; it < opt.iters; it++) {
        for (int i = 0; i < ndev; i++)
            device_iteration(i, it);
        for (int i = 0; i < ndev; i++)
            sync_device(&devs[i]);
    }
    if (opt.tail_held) {
        for (int i = 0; i < ndev; i++) {
            CHECK(cuCtxSetCurrent(devs[i].ctx));
            for (long j = 0; j < opt.kernels / 2; j++)
                kernel(i, opt.iters, j);
        }
        CHECK(cuCtxSynchronize());
        for (int i = 0; i < ndev; i++)
            sync_device(&devs[i]);
    }
}

static void report(void)
{
    size_t bytes = (size_t)opt.n * sizeof(float);
    float *h = malloc(bytes);
    if (!h)
        exit(2);
    printf("devices: %d\n", ndev);
    for (int i = 0; i < ndev; i++) {
        CHECK(cuCtxSetCurrent(devs[i].ctx));
        CHECK(cuMemcpyDtoH(h, devs[i].a, bytes));
        /* FNV-1a over the bytes: any difference in any element changes it. */
        uint64_t x = 1469598103934665603ull;
        for (size_t b = 0; b < bytes; b++)
            x = (x ^ ((unsigned char *)h)[b]) * 1099511628211ull;
        printf("result: dev=%d hash=%016llx\n", i, (unsigned long long)x);
    }
    printf("counts: launches=%ld peer_copies=%ld\n", launches, peer_copies);
    free(h);
}

/* ---- --probe: what the driver refuses or answers with several devices --------------- */

static int probe_failures;

static void expect_rc(const char *what, CUresult got, CUresult want)
{
    if (got == want) {
        printf("probe: %s: %s\n", what, check_name(got));
    } else {
        printf("probe: %s: got %s, expected %s\n", what, check_name(got), check_name(want));
        probe_failures++;
    }
}

static void expect_int(const char *what, long long got, long long want)
{
    if (got == want) {
        printf("probe: %s: %lld\n", what, got);
    } else {
        printf("probe: %s: got %lld, expected %lld\n", what, got, want);
        probe_failures++;
    }
}

static void probe(void)
{
    struct dev *d0 = &devs[0], *d1 = &devs[1];
    int n = (int)opt.n, v;
    float one = 1.0f;
    unsigned grid = (unsigned)((opt.n + 63) / 64);
    CUdevice dev;

    for (int i = 0; i < ndev; i++) {
        CHECK(cuCtxSetCurrent(devs[i].ctx));
        CHECK(cuCtxGetDevice(&dev));
        if (dev != i)
            expect_int("cuCtxGetDevice", dev, i);
        CHECK(cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, devs[i].a));
        if (v != i)
            expect_int("device ordinal of an allocation", v, i);
    }
    printf("probe: every context is on its device and owns its allocations\n");

    CHECK(cuDeviceCanAccessPeer(&v, 0, 1));
    expect_int("cuDeviceCanAccessPeer(0, 1)", v, 1);
    CHECK(cuDeviceCanAccessPeer(&v, 0, 0));
    expect_int("cuDeviceCanAccessPeer(0, 0)", v, 0);

    /* A stream belongs to its context: launching into it from another one is refused. */
    CHECK(cuCtxSetCurrent(d0->ctx));
    CUstream s1;
    CHECK(cuCtxSetCurrent(d1->ctx));
    CHECK(cuStreamCreate(&s1, CU_STREAM_DEFAULT));
    CHECK(cuCtxSetCurrent(d0->ctx));
    void *fill_args[] = {&d0->a, &one, &n};
    expect_rc("launch into another context's stream",
              cuLaunchKernel(d0->fill, grid, 1, 1, 64, 1, 1, 0, s1, fill_args, NULL), CUDA_ERROR_INVALID_HANDLE);

    /* Device 0 reading device 1's memory needs peer access first. */
    void *peer_args[] = {&d0->a, &d1->a, &one, &n};
    expect_rc("kernel reading a peer's memory without peer access",
              cuLaunchKernel(d0->axpy, grid, 1, 1, 64, 1, 1, 0, NULL, peer_args, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    expect_rc("cuCtxEnablePeerAccess", cuCtxEnablePeerAccess(d1->ctx, 0), CUDA_SUCCESS);
    expect_rc("cuCtxEnablePeerAccess again", cuCtxEnablePeerAccess(d1->ctx, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    expect_rc("kernel reading a peer's memory with peer access",
              cuLaunchKernel(d0->axpy, grid, 1, 1, 64, 1, 1, 0, NULL, peer_args, NULL), CUDA_SUCCESS);
    expect_rc("cuCtxDisablePeerAccess", cuCtxDisablePeerAccess(d1->ctx), CUDA_SUCCESS);
    expect_rc("cuCtxDisablePeerAccess again", cuCtxDisablePeerAccess(d1->ctx), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);

    /* A peer copy needs no peer access. */
    size_t bytes = (size_t)opt.n * sizeof(float);
    expect_rc("cuMemcpyPeer", cuMemcpyPeer(d1->in[0], d1->ctx, d0->a, d0->ctx, bytes), CUDA_SUCCESS);

    /* A stream outlives nothing: after its context is destroyed, launches into it fail. */
    CUcontext extra;
    CUstream se;
#if CUDA_VERSION >= 13000
    CHECK(cuCtxCreate(&extra, NULL, 0, d1->dev));
#else
    CHECK(cuCtxCreate(&extra, 0, d1->dev));
#endif
    CHECK(cuStreamCreate(&se, CU_STREAM_DEFAULT));
    CHECK(cuCtxDestroy(extra));
    CHECK(cuCtxSetCurrent(d0->ctx));
    expect_rc("launch into a stream of a destroyed context",
              cuLaunchKernel(d0->fill, grid, 1, 1, 64, 1, 1, 0, se, fill_args, NULL), CUDA_ERROR_CONTEXT_IS_DESTROYED);

    CHECK(cuCtxSynchronize());
    CHECK(cuCtxSetCurrent(d1->ctx));
    CHECK(cuStreamDestroy(s1));
    printf("probe: %s\n", probe_failures ? "FAILED" : "passed");
    if (probe_failures)
        exit(1);
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    setup();
    if (opt.probe) {
        if (ndev < 2) {
            fprintf(stderr, "--probe needs at least 2 devices\n");
            return 2;
        }
        probe();
        return 0;
    }
    loop();
    report();
    return 0;
}
