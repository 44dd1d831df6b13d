/* Engine scenarios for tests/engine_*.bats: one loop of kernel launches per thread, on
 * its own stream and buffers, shaped by flags into the situations the engine must get
 * right (stable, changing shape / pointer / arguments, ping-pong, barriers in the
 * middle, the program's own capture, exit or host spinning with work held). Linked
 * against libcuda directly; runs unchanged with and without libautograph, on a GPU or
 * on the fakecuda stand-in. Output, identical with and without the library:
 *   result: thread=T a=HASH b=HASH c=HASH d=HASH ix=HASH [e=HASH with --head or --sync-copies]
 *   counts: launches=N hostfns=N graph_launches=N
 *   exit: hostfns=N mapped=N          (--exit-held only, printed by an atexit handler)
 * Every call is checked: a failure prints the call and error name and exits 2. */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static const char usage[] =
    "usage: %s [options]   (PTX from env AG_KERNELS_PTX)\n"
    "  --iters N             iterations (default 20)\n"
    "  --kernels K           launches per iteration (default 5, at least 2)\n"
    "  --n N                 elements per buffer (default 256)\n"
    "  --sync iter|none      cuStreamSynchronize after each iteration (default iter)\n"
    "  --stream legacy|created|nonblocking   stream of each thread (default created)\n"
    "  --threads T           T threads, each with its own stream and buffers (default 1)\n"
    "  --pingpong            even and odd iterations swap the stencil's in/out buffers\n"
    "  --shape-change-at N   the second kernel's grid grows from iteration N\n"
    "  --ptr-change-at N     the add's output switches from buffer b to d from iteration N\n"
    "  --arg-change-every    scalar arguments change every iteration\n"
    "  --barrier-mid         cuMemAlloc/cuMemFree and cuFuncSetAttribute mid-iteration\n"
    "  --capture             capture one iteration into the program's own graph, then\n"
    "                        launch that graph after every eager iteration\n"
    "  --exit-held           after the loop, half an iteration (a host function and\n"
    "                        ag_inc on host-mapped memory first), then exit(0) unsynced\n"
    "  --held-then sync|query|event|ctx   like --exit-held, but the half iteration is\n"
    "                        followed by that wait (stream sync, polling cuStreamQuery, a\n"
    "                        timing event recorded and synchronized, context sync), then\n"
    "                        prints what the host sees (observed: hostfns=N mapped=N)\n"
    "  --settle-at N         with --variants, iterations from N on launch as iteration 0\n"
    "                        does: a stream that never repeats, then a loop\n"
    "  --gap-us U            host work of U microseconds after every launch (like Python)\n"
    "  --ex-attr             the axpy goes through cuLaunchKernelEx with a priority attribute\n"
    "                        whose unused union bytes differ on every launch (as on a stack)\n"
    "  --variants V          iteration i launches its first kernel with i %% V extra blocks:\n"
    "                        V segments that differ in shape, taken in turn\n"
    "  --spin                end each iteration with ag_inc on host-mapped memory and\n"
    "                        wait for it by spinning on the host (no CUDA sync)\n"
    "  --spin-every N        as --spin, but wait only at the end of every Nth iteration\n"
    "  --copy-rotate R       end each iteration by copying c to d through one of R\n"
    "                        scratch buffers in turn (as a caching allocator hands out\n"
    "                        temporaries): device copies whose addresses change\n"
    "  --copy-bad-at N       with --copy-rotate, iteration N copies from an address that\n"
    "                        is no allocation; prints the call's status (copy-bad: rc=N)\n"
    "  --head H              each iteration starts with H fills of buffer e, each of its\n"
    "                        own grid: work that does not repeat inside the iteration\n"
    "  --upload              each iteration starts by copying its input from pageable host\n"
    "                        memory (cuMemcpyHtoDAsync), overwritten as soon as the call\n"
    "                        returns, and adding it into c\n"
    "  --readback            each iteration ends by copying 64 bytes of c to pageable host\n"
    "                        memory (cuMemcpyDtoHAsync) and reading them at once, as\n"
    "                        cuBLAS returns a dot product; printed as r= in the result\n"
    "  --sync-copies         each iteration ends with a synchronous set of e (cuMemsetD32)\n"
    "                        and a synchronous device-to-device copy of c to d (cuMemcpyDtoD)\n"
    "  --sync-at N           with --sync none, one stream synchronization after iteration N\n"
    "                        (as a benchmark does after its warmup)\n"
    "  --distinct            every launch is the axpy, each position with its own scalar\n"
    "                        (apps/tiny_kernels): one shape, a period of --kernels launches\n";

static struct {
    long iters, kernels, n, threads, shape_at, ptr_at;
    int sync_iter, stream_kind, pingpong, arg_every, barrier_mid, capture, exit_held, spin;
    const char *held_then;
    long gap_us;
    int ex_attr;
    long variants, settle_at;
    long copy_rotate, copy_bad_at, head;
    int upload, sync_copies, readback;
    long sync_at;
    int distinct;
    long spin_every;
} opt = {20, 5, 256, 1, -1, -1, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 1, -1, 0, -1, 0, 0, 0, 0, -1, 0, 1};

enum { STREAM_LEGACY, STREAM_CREATED, STREAM_NONBLOCKING };

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
            opt.kernels = number(a, v, 2, 100000), i++;
        else if (!strcmp(a, "--n"))
            opt.n = number(a, v, 4, 1 << 24), i++;
        else if (!strcmp(a, "--threads"))
            opt.threads = number(a, v, 1, 256), i++;
        else if (!strcmp(a, "--shape-change-at"))
            opt.shape_at = number(a, v, 0, 10000000), i++;
        else if (!strcmp(a, "--ptr-change-at"))
            opt.ptr_at = number(a, v, 0, 10000000), i++;
        else if (!strcmp(a, "--sync") && v && (!strcmp(v, "iter") || !strcmp(v, "none")))
            opt.sync_iter = !strcmp(v, "iter"), i++;
        else if (!strcmp(a, "--stream") && v && !strcmp(v, "legacy"))
            opt.stream_kind = STREAM_LEGACY, i++;
        else if (!strcmp(a, "--stream") && v && !strcmp(v, "created"))
            opt.stream_kind = STREAM_CREATED, i++;
        else if (!strcmp(a, "--stream") && v && !strcmp(v, "nonblocking"))
            opt.stream_kind = STREAM_NONBLOCKING, i++;
        else if (!strcmp(a, "--pingpong"))
            opt.pingpong = 1;
        else if (!strcmp(a, "--arg-change-every"))
            opt.arg_every = 1;
        else if (!strcmp(a, "--barrier-mid"))
            opt.barrier_mid = 1;
        else if (!strcmp(a, "--capture"))
            opt.capture = 1;
        else if (!strcmp(a, "--exit-held"))
            opt.exit_held = 1;
        else if (!strcmp(a, "--held-then") && v &&
                 (!strcmp(v, "sync") || !strcmp(v, "query") || !strcmp(v, "event") || !strcmp(v, "ctx")))
            opt.held_then = v, opt.exit_held = 1, i++;
        else if (!strcmp(a, "--spin"))
            opt.spin = 1;
        else if (!strcmp(a, "--spin-every"))
            opt.spin = 1, opt.spin_every = number(a, v, 1, 1000000), i++;
        else if (!strcmp(a, "--ex-attr"))
            opt.ex_attr = 1;
        else if (!strcmp(a, "--variants"))
            opt.variants = number(a, v, 1, 4096), i++;
        else if (!strcmp(a, "--settle-at"))
            opt.settle_at = number(a, v, 0, 10000000), i++;
        else if (!strcmp(a, "--gap-us"))
            opt.gap_us = number(a, v, 0, 1000000), i++;
        else if (!strcmp(a, "--copy-rotate"))
            opt.copy_rotate = number(a, v, 1, 64), i++;
        else if (!strcmp(a, "--copy-bad-at"))
            opt.copy_bad_at = number(a, v, 0, 10000000), i++;
        else if (!strcmp(a, "--head"))
            opt.head = number(a, v, 1, 64), i++;
        else if (!strcmp(a, "--upload"))
            opt.upload = 1;
        else if (!strcmp(a, "--readback"))
            opt.readback = 1;
        else if (!strcmp(a, "--sync-copies"))
            opt.sync_copies = 1;
        else if (!strcmp(a, "--distinct"))
            opt.distinct = 1;
        else if (!strcmp(a, "--sync-at"))
            opt.sync_at = number(a, v, 0, 10000000), i++;
        else {
            fprintf(stderr, usage, argv[0]);
            exit(2);
        }
    }
    if (opt.capture && (opt.stream_kind == STREAM_LEGACY || opt.exit_held || opt.spin)) {
        fprintf(stderr, "--capture needs a created stream, without --exit-held or --spin\n");
        exit(2);
    }
    if (opt.copy_bad_at >= 0 && !opt.copy_rotate) {
        fprintf(stderr, "--copy-bad-at needs --copy-rotate\n");
        exit(2);
    }
    if (opt.exit_held && (opt.threads != 1 || opt.spin)) {
        fprintf(stderr, "--exit-held needs one thread, without --spin\n");
        exit(2);
    }
}

static CUcontext ctx;
static CUfunction f_fill, f_axpy, f_scale, f_stencil, f_add, f_iota, f_inc;

/* Host functions and host-mapped memory: what --exit-held and --spin observe. */
static volatile long hostfn_calls;
static volatile int *mapped; /* one int per thread, host-mapped */
static CUdeviceptr mapped_dev;
static long launches_total, graph_launches_total;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void CUDA_CB count_hostfn(void *arg)
{
    (void)arg;
    __atomic_add_fetch(&hostfn_calls, 1, __ATOMIC_RELAXED);
}

static void print_exit_state(void)
{
    /* No CUDA call here: only what held work, if it ran, changed on the host. */
    int m = 0;
    for (long t = 0; t < opt.threads; t++)
        m += __atomic_load_n(&mapped[t], __ATOMIC_ACQUIRE);
    printf("exit: hostfns=%ld mapped=%d\n", __atomic_load_n(&hostfn_calls, __ATOMIC_RELAXED), m);
    fflush(stdout);
}

struct worker {
    long id;
    CUstream s;
    CUdeviceptr a, b, c, d, e, ix, inc, up, scratch[64];
    float *host; /* --upload's pageable input */
    unsigned long long readback; /* --readback: a hash of every value read back */
    long launches, graph_launches;
    char result[256];
};

static void launch(struct worker *w, CUfunction f, unsigned grid, void **args)
{
    CHECK(cuLaunchKernel(f, grid, 1, 1, 64, 1, 1, 0, w->s, args, NULL));
    w->launches++;
}

/* Kernel j of iteration it: axpy, stencil, scale, add, iota, repeating. The first kernel
 * never changes (so a known sequence starts); --shape-change-at changes the stencil's
 * grid, --ptr-change-at the add's output (b, then d), --arg-change-every the scale
 * factor and the iota base; --pingpong swaps the stencil's buffers every iteration. */
static void kernel(struct worker *w, long it, long j)
{
    int n = (int)opt.n;
    unsigned grid = (unsigned)((opt.n + 63) / 64);
    if (j == 1 && opt.shape_at >= 0 && it >= opt.shape_at)
        grid += 1; /* a different launch shape; the kernels bound-check n */
    if (j == 0 && (opt.settle_at < 0 || it < opt.settle_at))
        grid += (unsigned)(it % opt.variants);
    int odd = opt.pingpong && (it & 1);
    CUdeviceptr in = odd ? w->c : w->a, out = odd ? w->a : w->c;
    CUdeviceptr x = opt.ptr_at >= 0 && it >= opt.ptr_at ? w->d : w->b;
    float alpha = 0.25f;
    float half = opt.arg_every ? 0.5f + 0.0625f * (float)(it % 5) : 0.5f;
    int base = opt.arg_every ? (int)it : 7;
    if (opt.distinct) {
        float a = 1e-6f * (float)(j + 1);
        void *args[] = {&in, &w->b, &a, &n};
        launch(w, f_axpy, (unsigned)((opt.n + 63) / 64), args);
        return;
    }
    switch (j % 5) {
    case 0: {
        void *args[] = {&in, &w->b, &alpha, &n};
        if (opt.ex_attr) {
            CUlaunchAttribute attr;
            memset(&attr, (int)(it * 5 + j) & 0xff, sizeof attr);
            attr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
            attr.value.priority = 0;
            CUlaunchConfig cfg = {grid, 1, 1, 64, 1, 1, 0, w->s, &attr, 1};
            CHECK(cuLaunchKernelEx(&cfg, f_axpy, args, NULL));
            w->launches++;
        } else {
            launch(w, f_axpy, grid, args);
        }
        break;
    }
    case 1: {
        void *args[] = {&out, &in, &n};
        launch(w, f_stencil, grid, args);
        break;
    }
    case 2: {
        void *args[] = {&in, &half, &n};
        launch(w, f_scale, grid, args);
        break;
    }
    case 3: {
        void *args[] = {&x, &in, &out, &n};
        launch(w, f_add, grid, args);
        break;
    }
    default: {
        void *args[] = {&w->ix, &base, &n};
        launch(w, f_iota, grid, args);
        break;
    }
    }
}

static void inc_mapped(struct worker *w)
{
    void *args[] = {&w->inc};
    CHECK(cuLaunchKernel(f_inc, 1, 1, 1, 1, 1, 1, 0, w->s, args, NULL));
    w->launches++;
}

static void barrier(long it)
{
    CUdeviceptr tmp;
    CHECK(cuMemAlloc(&tmp, 256));
    CHECK(cuMemFree(tmp));
    CHECK(cuFuncSetAttribute(f_scale, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             (int)(it & 1) * 1024));
}

static void fill(struct worker *w, CUdeviceptr p, float v);

/* --copy-rotate: c to d through the iteration's scratch buffer; --copy-bad-at: from an
 * address no allocation has, whose status the program prints and survives. */
static void rotate_copy(struct worker *w, long it)
{
    size_t bytes = (size_t)opt.n * 4;
    CUdeviceptr tmp = w->scratch[it % opt.copy_rotate];
    CHECK(cuMemcpyDtoDAsync(tmp, w->c, bytes, w->s));
    if (it == opt.copy_bad_at) {
        CUresult rc = cuMemcpyDtoDAsync(w->d, (CUdeviceptr)64, bytes, w->s);
        printf("copy-bad: rc=%d\n", (int)rc);
        return;
    }
    CHECK(cuMemcpyDtoDAsync(w->d, tmp, bytes, w->s));
}

/* --head: fills of e whose grids differ from one another and from every later launch. */
static void head(struct worker *w, long it)
{
    int n = (int)opt.n;
    for (long h = 0; h < opt.head; h++) {
        float v = (float)(h + it % 3);
        void *args[] = {&w->e, &v, &n};
        launch(w, f_fill, (unsigned)(opt.n + 63) / 64 + 1 + (unsigned)h, args);
    }
}

/* --upload: a step's input from pageable memory (a token, a position) added into c. The
 * buffer is overwritten as soon as the call returns, which the driver allows: it reads
 * pageable memory before returning. */
static void upload(struct worker *w, long it)
{
    int n = (int)opt.n;
    for (long i = 0; i < opt.n; i++)
        w->host[i] = (float)(it % 7) * 0.125f + (float)i * 0.001f;
    CHECK(cuMemcpyHtoDAsync(w->up, w->host, (size_t)opt.n * 4, w->s));
    memset(w->host, 0xff, (size_t)opt.n * 4);
    void *args[] = {&w->c, &w->c, &w->up, &n};
    launch(w, f_add, (unsigned)(opt.n + 63) / 64, args);
}

/* --readback: a small result read back into pageable memory; the call returns once the
 * copy is done, so the values are read as soon as it returns, and the buffer then
 * overwritten (a stale or late copy changes the hash). */
static void readback(struct worker *w)
{
    float out[16];
    CHECK(cuMemcpyDtoHAsync(out, w->c, sizeof out, w->s));
    for (size_t i = 0; i < sizeof out; i++)
        w->readback = (w->readback ^ ((unsigned char *)out)[i]) * 1099511628211ull;
    memset(out, 0xff, sizeof out);
}

/* --sync-copies: a synchronous set and a synchronous device-to-device copy; neither waits
 * for the host: they are ordered on the legacy stream. */
static void sync_copies(struct worker *w)
{
    CHECK(cuMemsetD32(w->e, 7, (size_t)opt.n));
    CHECK(cuMemcpyDtoD(w->d, w->c, (size_t)opt.n * 4));
}

/* --exit-held: each iteration starts with a host function and ag_inc on mapped memory,
 * so that a held prefix of it changes the host. --spin: it ends with that ag_inc. */
static void iteration(struct worker *w, long it)
{
    long k = opt.kernels;
    if (opt.exit_held) {
        CHECK(cuLaunchHostFunc(w->s, count_hostfn, NULL));
        inc_mapped(w);
    }
    head(w, it);
    if (opt.upload)
        upload(w, it);
    for (long j = 0; j < k; j++) {
        if (opt.barrier_mid && j == k / 2)
            barrier(it);
        if (opt.spin && j == k - 1)
            inc_mapped(w);
        else
            kernel(w, it, j);
        if (opt.gap_us)
            usleep((useconds_t)opt.gap_us);
    }
    if (opt.copy_rotate)
        rotate_copy(w, it);
    if (opt.sync_copies)
        sync_copies(w);
    if (opt.readback)
        readback(w);
}

static unsigned long long hash_buf(CUdeviceptr p, size_t bytes)
{
    unsigned char *h = malloc(bytes);
    if (!h)
        exit(2);
    CHECK(cuMemcpyDtoH(h, p, bytes));
    unsigned long long x = 1469598103934665603ull;
    for (size_t i = 0; i < bytes; i++)
        x = (x ^ h[i]) * 1099511628211ull;
    free(h);
    return x;
}

static void fill(struct worker *w, CUdeviceptr p, float v)
{
    int n = (int)opt.n;
    void *args[] = {&p, &v, &n};
    launch(w, f_fill, (unsigned)((opt.n + 63) / 64), args);
}

static void *run(void *arg)
{
    struct worker *w = arg;
    size_t bytes = (size_t)opt.n * 4;
    CHECK(cuCtxSetCurrent(ctx));
    if (opt.stream_kind == STREAM_LEGACY)
        w->s = NULL;
    else
        CHECK(cuStreamCreate(&w->s, opt.stream_kind == STREAM_NONBLOCKING ? CU_STREAM_NON_BLOCKING
                                                                          : CU_STREAM_DEFAULT));
    CHECK(cuMemAlloc(&w->a, bytes));
    CHECK(cuMemAlloc(&w->b, bytes));
    CHECK(cuMemAlloc(&w->c, bytes));
    CHECK(cuMemAlloc(&w->d, bytes));
    CHECK(cuMemAlloc(&w->ix, bytes));
    if (opt.head || opt.sync_copies)
        CHECK(cuMemAlloc(&w->e, bytes));
    if (opt.upload) {
        CHECK(cuMemAlloc(&w->up, bytes));
        if (!(w->host = malloc(bytes)))
            exit(2);
    }
    for (long r = 0; r < opt.copy_rotate; r++)
        CHECK(cuMemAlloc(&w->scratch[r], bytes));
    w->inc = mapped_dev + (CUdeviceptr)(w->id * sizeof(int));
    fill(w, w->a, 1.0f + (float)w->id);
    fill(w, w->b, 0.5f);
    fill(w, w->c, 0.0f);
    fill(w, w->d, -2.0f);
    if (opt.head || opt.sync_copies)
        fill(w, w->e, 0.0f);
    CHECK(cuStreamSynchronize(w->s));

    CUgraphExec own = NULL;
    if (opt.capture) {
        CUgraph g;
        CHECK(cuStreamBeginCapture(w->s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        iteration(w, 1000000);
        CHECK(cuStreamEndCapture(w->s, &g));
        CHECK(cuGraphInstantiateWithFlags(&own, g, 0));
        CHECK(cuGraphDestroy(g));
        w->launches -= opt.kernels; /* captured, not launched (no --spin here) */
    }

    for (long it = 0; it < opt.iters; it++) {
        iteration(w, it);
        if (own) {
            CHECK(cuGraphLaunch(own, w->s));
            w->graph_launches++;
        }
        if (opt.spin) {
            /* Wait for this iteration's last kernel without telling the driver. */
            while ((it + 1) % opt.spin_every == 0 &&
                   __atomic_load_n(&mapped[w->id], __ATOMIC_ACQUIRE) < it + 1)
                ;
        } else if (opt.sync_iter || it == opt.sync_at) {
            CHECK(cuStreamSynchronize(w->s));
        }
    }
    if (opt.held_then) {
        /* Half an iteration held, then a wait that must see it done. */
        CHECK(cuLaunchHostFunc(w->s, count_hostfn, NULL));
        inc_mapped(w);
        for (long j = 0; j < opt.kernels / 2; j++)
            kernel(w, opt.iters, j);
        if (!strcmp(opt.held_then, "sync")) {
            CHECK(cuStreamSynchronize(w->s));
        } else if (!strcmp(opt.held_then, "query")) {
            CUresult rc;
            while ((rc = cuStreamQuery(w->s)) == CUDA_ERROR_NOT_READY)
                ;
            CHECK(rc);
        } else if (!strcmp(opt.held_then, "event")) {
            CUevent ev;
            CHECK(cuEventCreate(&ev, CU_EVENT_DEFAULT));
            CHECK(cuEventRecord(ev, w->s));
            CHECK(cuEventSynchronize(ev));
            CHECK(cuEventDestroy(ev));
        } else {
            CHECK(cuCtxSynchronize());
        }
        printf("observed: hostfns=%ld mapped=%d\n", __atomic_load_n(&hostfn_calls, __ATOMIC_RELAXED),
               __atomic_load_n(&mapped[w->id], __ATOMIC_ACQUIRE));
    } else if (opt.exit_held && w->id == 0) {
        /* Half an iteration: the engine holds it as the start of a known sequence. */
        CHECK(cuLaunchHostFunc(w->s, count_hostfn, NULL));
        inc_mapped(w);
        for (long j = 0; j < opt.kernels / 2; j++)
            kernel(w, opt.iters, j);
        pthread_mutex_lock(&count_lock);
        launches_total += w->launches;
        pthread_mutex_unlock(&count_lock);
        printf("counts: launches=%ld hostfns=%ld graph_launches=%ld\n", launches_total,
               opt.iters + 1, graph_launches_total + w->graph_launches);
        fflush(stdout);
        exit(0);
    }
    CHECK(cuStreamSynchronize(w->s));
    int len = snprintf(w->result, sizeof w->result,
                       "result: thread=%ld a=%016llx b=%016llx c=%016llx d=%016llx ix=%016llx", w->id,
                       hash_buf(w->a, bytes), hash_buf(w->b, bytes), hash_buf(w->c, bytes),
                       hash_buf(w->d, bytes), hash_buf(w->ix, bytes));
    if (opt.head || opt.sync_copies)
        len += snprintf(w->result + len, sizeof w->result - (size_t)len, " e=%016llx", hash_buf(w->e, bytes));
    if (opt.readback)
        snprintf(w->result + len, sizeof w->result - (size_t)len, " r=%016llx", w->readback);
    if (own)
        CHECK(cuGraphExecDestroy(own));
    free(w->host);
    pthread_mutex_lock(&count_lock);
    launches_total += w->launches;
    graph_launches_total += w->graph_launches;
    pthread_mutex_unlock(&count_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    const char *ptx = getenv("AG_KERNELS_PTX");
    if (!ptx) {
        fprintf(stderr, usage, argv[0]);
        return 2;
    }
    char *image = read_file(ptx);
    CUdevice dev;
    CUmodule mod;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, image));
    free(image);
    CHECK(cuModuleGetFunction(&f_fill, mod, "ag_fill"));
    CHECK(cuModuleGetFunction(&f_axpy, mod, "ag_axpy"));
    CHECK(cuModuleGetFunction(&f_scale, mod, "ag_scale"));
    CHECK(cuModuleGetFunction(&f_stencil, mod, "ag_stencil"));
    CHECK(cuModuleGetFunction(&f_add, mod, "ag_add"));
    CHECK(cuModuleGetFunction(&f_iota, mod, "ag_iota"));
    CHECK(cuModuleGetFunction(&f_inc, mod, "ag_inc"));
    void *host;
    CHECK(cuMemHostAlloc(&host, (size_t)opt.threads * sizeof(int), CU_MEMHOSTALLOC_DEVICEMAP));
    memset(host, 0, (size_t)opt.threads * sizeof(int));
    mapped = host;
    CHECK(cuMemHostGetDevicePointer(&mapped_dev, host, 0));
    if (opt.exit_held && !opt.held_then)
        atexit(print_exit_state); /* before any work: runs after the library's exit flush */

    struct worker *w = calloc((size_t)opt.threads, sizeof *w);
    pthread_t *tid = calloc((size_t)opt.threads, sizeof *tid);
    if (!w || !tid)
        return 2;
    for (long t = 0; t < opt.threads; t++) {
        w[t].id = t;
        if (opt.threads == 1)
            run(&w[t]);
        else if (pthread_create(&tid[t], NULL, run, &w[t]) != 0)
            return 2;
    }
    for (long t = 0; opt.threads > 1 && t < opt.threads; t++)
        pthread_join(tid[t], NULL);
    CHECK(cuCtxSynchronize());
    for (long t = 0; t < opt.threads; t++)
        printf("%s\n", w[t].result);
    printf("counts: launches=%ld hostfns=%ld graph_launches=%ld\n", launches_total,
           (long)hostfn_calls, graph_launches_total);
    return 0;
}
