/* Self-test of the fakecuda stand-in: drives libcuda.so.1 through the public driver API
 * the way libautograph and the test programs will (kernels from the PTX given in argv[1],
 * handle rules, copies, events, graphs, capture, cuGetProcAddress) and compares every
 * result with values computed here. Exits non-zero at the first mismatch. */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/ag_kernels.h"

/* Written against CUDA 13's names; CUDA 13 gave the newest variants the plain names, so
 * with 12.x headers the same calls need the explicit suffix or the older argument list. */
#if CUDA_VERSION >= 13000
#define CAPTURE_INFO cuStreamGetCaptureInfo
#define CTX_CREATE(pctx, flags, dev) cuCtxCreate(pctx, NULL, flags, dev)
#define CTX_CREATE_NEWEST cuCtxCreate
#else
#define CAPTURE_INFO cuStreamGetCaptureInfo_v3
#define CTX_CREATE(pctx, flags, dev) cuCtxCreate(pctx, flags, dev)
/* What a caller of CUDA 12.8 is handed for "cuCtxCreate": 12.5's _v4 where the header
 * declares it (the stand-in has no _v3, so before 12.5: _v2, the header's cuCtxCreate). */
#if CUDA_VERSION >= 12050
#define CTX_CREATE_NEWEST cuCtxCreate_v4
#else
#define CTX_CREATE_NEWEST cuCtxCreate
#endif
#endif

static int checks;

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "fakecuda selftest: %s:%d: ", __FILE__, __LINE__);                         \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        exit(1);                                                                                   \
    } while (0)
#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond))                                                                               \
            FAIL("check failed: %s", #cond);                                                       \
        checks++;                                                                                  \
    } while (0)
#define RC(want, call)                                                                             \
    do {                                                                                           \
        CUresult rc_ = (call);                                                                     \
        if (rc_ != (want))                                                                         \
            FAIL("%s returned %d, expected %d", #call, (int)rc_, (int)(want));                     \
        checks++;                                                                                  \
    } while (0)
#define OK(call) RC(CUDA_SUCCESS, call)

#define N 1000
#define NB(n) (((n) + 255) / 256)

static CUmodule mod;
static CUlibrary lib;
static const char *ptx_path;

static CUfunction fn(const char *name)
{
    CUfunction f;
    OK(cuModuleGetFunction(&f, mod, name));
    return f;
}

static void launch(CUfunction f, unsigned n, CUstream s, void **params)
{
    OK(cuLaunchKernel(f, NB(n), 1, 1, 256, 1, 1, 0, s, params, NULL));
}

static void get(float *h, CUdeviceptr d, size_t n)
{
    OK(cuMemcpyDtoH(h, d, n * sizeof *h));
}

static void expect_all(const float *h, size_t n, float v)
{
    for (size_t i = 0; i < n; i++)
        if (h[i] != v)
            FAIL("element %zu is %g, expected %g", i, h[i], v);
    checks++;
}

static void test_kernels(void)
{
    CUdeviceptr x, y, z, ci;
    float hx[N], hy[N], hz[N];
    int hi[N], n = N;
    OK(cuMemAlloc(&x, N * sizeof(float)));
    OK(cuMemAlloc(&y, N * sizeof(float)));
    OK(cuMemAlloc(&z, N * sizeof(float)));
    OK(cuMemAlloc(&ci, N * sizeof(int)));

    float v = 2.0f;
    launch(fn("ag_fill"), N, NULL, (void *[]){&x, &v, &n});
    get(hx, x, N);
    expect_all(hx, N, 2.0f);

    v = 1.0f;
    launch(fn("ag_fill"), N, NULL, (void *[]){&y, &v, &n});
    float a = 3.0f;
    launch(fn("ag_axpy"), N, NULL, (void *[]){&y, &x, &a, &n});
    get(hy, y, N);
    expect_all(hy, N, 7.0f);

    launch(fn("ag_add"), N, NULL, (void *[]){&z, &x, &y, &n});
    get(hz, z, N);
    expect_all(hz, N, 9.0f);

    float s = 0.5f;
    launch(fn("ag_scale"), N, NULL, (void *[]){&z, &s, &n});
    get(hz, z, N);
    expect_all(hz, N, 4.5f);

    int base = 10;
    launch(fn("ag_iota"), N, NULL, (void *[]){&ci, &base, &n});
    OK(cuMemcpyDtoH(hi, ci, sizeof hi));
    for (int i = 0; i < N; i++)
        EXPECT(hi[i] == 10 + i);

    for (int i = 0; i < N; i++)
        hx[i] = (float)(i * i % 17);
    OK(cuMemcpyHtoD(x, hx, sizeof hx));
    launch(fn("ag_stencil"), N, NULL, (void *[]){&y, &x, &n});
    get(hy, y, N);
    EXPECT(hy[0] == hx[0] && hy[N - 1] == hx[N - 1]);
    for (int i = 1; i < N - 1; i++)
        if (hy[i] != 0.5f * (hx[i - 1] + hx[i + 1]))
            FAIL("stencil element %d", i);

    OK(cuMemsetD32(ci, 0, 1));
    for (int i = 0; i < 5; i++)
        OK(cuLaunchKernel(fn("ag_inc"), 8, 1, 1, 128, 1, 1, 0, NULL, (void *[]){&ci}, NULL));
    OK(cuMemcpyDtoH(hi, ci, sizeof(int)));
    EXPECT(hi[0] == 5);

    v = 1.0f;
    launch(fn("ag_fill"), N, NULL, (void *[]){&z, &v, &n});
    char c = 3;
    double d = 0.25;
    short sh = -7;
    long long k = 1000000;
    launch(fn("ag_mix"), N, NULL, (void *[]){&z, &n, &c, &d, &sh, &k});
    get(hz, z, N);
    expect_all(hz, N, 1.0f + (float)(c + d + sh + k) * 0.001f);

    /* The same launch through an `extra` buffer laid out by the C ABI. */
    struct {
        CUdeviceptr out;
        int n;
        char c;
        double d;
        short s;
        long long k;
    } packed = {z, n, c, d, sh, k};
    size_t size = sizeof packed;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    OK(cuLaunchKernel(fn("ag_mix"), NB(N), 1, 1, 256, 1, 1, 0, NULL, NULL, extra));
    get(hz, z, N);
    expect_all(hz, N, (1.0f + (float)(c + d + sh + k) * 0.001f) + (float)(c + d + sh + k) * 0.001f);

    struct ag_big_arg big;
    for (int i = 0; i < AG_BIG_ARG_FLOATS; i++)
        big.v[i] = (float)i;
    OK(cuMemsetD32(z, 0, N));
    launch(fn("ag_big"), N, NULL, (void *[]){&z, &big, &n});
    get(hz, z, N);
    for (int i = 0; i < N; i++)
        if (hz[i] != (float)(i % 64))
            FAIL("ag_big element %d", i);

    for (int i = 0; i < N; i++)
        hx[i] = 1.0f / (float)(i + 1);
    OK(cuMemcpyHtoD(x, hx, sizeof hx));
    OK(cuLaunchKernel(fn("ag_sum"), 4, 1, 1, 256, 1, 1, 0, NULL, (void *[]){&x, &z, &n}, NULL));
    float acc = 0.0f, got;
    for (int i = 0; i < N; i++)
        acc += hx[i];
    OK(cuMemcpyDtoH(&got, z, sizeof got));
    EXPECT(got == acc);

    /* Launch validation. */
    CUfunction f = fn("ag_fill");
    void *p[] = {&x, &v, &n};
    RC(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 1025, 1, 1, 0, NULL, p, NULL));
    RC(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 32, 32, 2, 0, NULL, p, NULL));
    RC(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 0, 1, 1, 32, 1, 1, 0, NULL, p, NULL));
    RC(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 228 * 1024, NULL, p, NULL));
    RC(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    RC(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel((CUfunction)&n, 1, 1, 1, 32, 1, 1, 0, NULL, p, NULL));

    CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_PRIORITY, .value.priority = 0};
    CUlaunchConfig cfg = {NB(N), 1, 1, 256, 1, 1, 0, NULL, &attr, 1};
    v = 6.0f;
    OK(cuLaunchKernelEx(&cfg, f, p, NULL));
    get(hx, x, N);
    expect_all(hx, N, 6.0f);
    v = 8.0f;
    OK(cuLaunchCooperativeKernel(f, NB(N), 1, 1, 256, 1, 1, 0, NULL, p));
    get(hx, x, N);
    expect_all(hx, N, 8.0f);

    OK(cuMemFree(x));
    OK(cuMemFree(y));
    OK(cuMemFree(z));
    OK(cuMemFree(ci));
    RC(CUDA_ERROR_INVALID_VALUE, cuMemFree(ci));
}

static void test_handles(void)
{
    CUkernel k;
    CUfunction f, kf;
    size_t off, size;
    const char *name;
    OK(cuLibraryGetKernel(&k, lib, "ag_mix"));
    OK(cuKernelGetFunction(&kf, k));
    f = fn("ag_mix");
    RC(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, mod, "ag_missing"));
    RC(CUDA_ERROR_NOT_FOUND, cuLibraryGetKernel(&k, lib, "ag_missing"));
    OK(cuLibraryGetKernel(&k, lib, "ag_mix"));
    f = fn("ag_mix");

    static const size_t offs[] = {0, 8, 12, 16, 24, 32}, sizes[] = {8, 4, 1, 8, 2, 8};
    for (size_t i = 0; i < 6; i++) {
        OK(cuKernelGetParamInfo(k, i, &off, &size));
        EXPECT(off == offs[i] && size == sizes[i]);
        OK(cuFuncGetParamInfo(f, i, &off, &size));
        EXPECT(off == offs[i] && size == sizes[i]);
    }
    RC(CUDA_ERROR_INVALID_VALUE, cuKernelGetParamInfo(k, 6, &off, &size));
    RC(CUDA_ERROR_INVALID_VALUE, cuFuncGetParamInfo(f, 6, &off, &size));
    RC(CUDA_ERROR_INVALID_HANDLE, cuKernelGetParamInfo((CUkernel)f, 0, &off, &size));
    RC(CUDA_ERROR_INVALID_HANDLE, cuFuncGetParamInfo((CUfunction)k, 0, &off, &size));

    CUkernel kb;
    OK(cuLibraryGetKernel(&kb, lib, "ag_big"));
    OK(cuKernelGetParamInfo(kb, 1, &off, &size));
    EXPECT(off == 8 && size == 256);
    OK(cuKernelGetParamInfo(kb, 2, &off, &size));
    EXPECT(off == 264 && size == 4);

    OK(cuFuncGetName(&name, f));
    EXPECT(strcmp(name, "ag_mix") == 0);
    OK(cuKernelGetName(&name, k));
    EXPECT(strcmp(name, "ag_mix") == 0);
    CUmodule m;
    OK(cuFuncGetModule(&m, f));
    EXPECT(m == mod);
#if CUDA_VERSION >= 12050
    CUlibrary l;
    OK(cuKernelGetLibrary(&l, k));
    EXPECT(l == lib);
#endif
    int regs;
    OK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
    EXPECT(regs == 1024);

    /* A CUkernel cast to CUfunction launches, as cudart 13 does it. */
    CUdeviceptr x;
    float h[N], v = 4.0f;
    int n = N;
    OK(cuMemAlloc(&x, sizeof h));
    CUkernel kfill;
    OK(cuLibraryGetKernel(&kfill, lib, "ag_fill"));
    launch((CUfunction)kfill, N, NULL, (void *[]){&x, &v, &n});
    get(h, x, N);
    expect_all(h, N, 4.0f);
    OK(cuMemFree(x));
}

static void test_memory(void)
{
    CUdeviceptr d, d2, pitched;
    size_t pitch, base_size, freeb, total;
    float *pinned, host[N], back[N];
    CUdeviceptr base;
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    OK(cuMemAlloc(&d, sizeof host));
    OK(cuMemAlloc(&d2, sizeof host));
    OK(cuMemGetInfo(&freeb, &total));
    EXPECT(freeb < total);
    OK(cuMemGetAddressRange(&base, &base_size, d + 40));
    EXPECT(base == d && base_size == sizeof host);

    OK(cuMemAllocHost((void **)&pinned, sizeof host));
    unsigned mt;
    OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 4));
    EXPECT(mt == CU_MEMORYTYPE_DEVICE);
    OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)pinned));
    EXPECT(mt == CU_MEMORYTYPE_HOST);
    RC(CUDA_ERROR_INVALID_VALUE, cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)host));
    OK(cuMemHostRegister(host, sizeof host, 0));
    OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)host));
    EXPECT(mt == CU_MEMORYTYPE_HOST);
    CUdeviceptr mapped;
    OK(cuMemHostGetDevicePointer(&mapped, host, 0));
    EXPECT(mapped == (CUdeviceptr)host);
    RC(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister(host, 16, 0));
    OK(cuMemHostUnregister(host));
    RC(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(host));
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_IS_MANAGED};
    CUdeviceptr start;
    size_t rsize;
    int managed;
    OK(cuPointerGetAttributes(4, attrs, (void *[]){&mt, &start, &rsize, &managed}, d + 8));
    EXPECT(mt == CU_MEMORYTYPE_DEVICE && start == d && rsize == sizeof host && managed == 0);
    OK(cuPointerGetAttributes(1, attrs, (void *[]){&mt}, (CUdeviceptr)back));
    EXPECT(mt == 0);

    CUstream s;
    OK(cuStreamCreate(&s, 0));
    OK(cuMemcpyHtoDAsync(d, host, sizeof host, s));
    OK(cuMemcpyDtoDAsync(d2, d, sizeof host, s));
    OK(cuMemcpyDtoHAsync(pinned, d2, sizeof host, s));
    OK(cuStreamSynchronize(s));
    EXPECT(memcmp(pinned, host, sizeof host) == 0);
    OK(cuMemcpy(d2, (CUdeviceptr)host, 16));
    OK(cuMemcpyDtoD(d, d2, sizeof host));
    OK(cuMemcpyAsync((CUdeviceptr)back, d, sizeof host, s));
    EXPECT(memcmp(back, host, sizeof host) == 0);
    CUcontext ctx;
    OK(cuCtxGetCurrent(&ctx));
    OK(cuMemcpyPeer(d2, ctx, d, ctx, sizeof host));
    RC(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(d + sizeof host - 4, host, 8));

    /* 2D: a 10x7 float tile, host -> pitched device -> host. */
    OK(cuMemAllocPitch(&pitched, &pitch, 10 * sizeof(float), 7, 4));
    EXPECT(pitch >= 10 * sizeof(float));
    CUDA_MEMCPY2D c2 = {0};
    c2.srcMemoryType = CU_MEMORYTYPE_HOST, c2.srcHost = host, c2.srcPitch = 10 * sizeof(float);
    c2.dstMemoryType = CU_MEMORYTYPE_DEVICE, c2.dstDevice = pitched, c2.dstPitch = pitch;
    c2.WidthInBytes = 10 * sizeof(float), c2.Height = 7;
    OK(cuMemcpy2D(&c2));
    memset(back, 0, sizeof back);
    CUDA_MEMCPY2D r2 = {0};
    r2.srcMemoryType = CU_MEMORYTYPE_DEVICE, r2.srcDevice = pitched, r2.srcPitch = pitch;
    r2.dstMemoryType = CU_MEMORYTYPE_UNIFIED, r2.dstDevice = (CUdeviceptr)back, r2.dstPitch = 10 * sizeof(float);
    r2.WidthInBytes = 10 * sizeof(float), r2.Height = 7;
    OK(cuMemcpy2DAsync(&r2, s));
    EXPECT(memcmp(back, host, 70 * sizeof(float)) == 0);
    CUDA_MEMCPY3D c3 = {0};
    c3.srcMemoryType = CU_MEMORYTYPE_DEVICE, c3.srcDevice = pitched, c3.srcPitch = pitch, c3.srcY = 1;
    c3.dstMemoryType = CU_MEMORYTYPE_HOST, c3.dstHost = back, c3.dstPitch = 10 * sizeof(float);
    c3.WidthInBytes = 10 * sizeof(float), c3.Height = 2, c3.Depth = 1;
    OK(cuMemcpy3D(&c3));
    EXPECT(memcmp(back, host + 10, 20 * sizeof(float)) == 0);
    c3.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    RC(CUDA_ERROR_NOT_SUPPORTED, cuMemcpy3D(&c3));

    /* memsets */
    unsigned char b[64];
    unsigned short w[32];
    unsigned u[16];
    OK(cuMemsetD8(d, 0xab, 64));
    OK(cuMemcpyDtoH(b, d, 64));
    for (int i = 0; i < 64; i++)
        EXPECT(b[i] == 0xab);
    OK(cuMemsetD16Async(d, 0x1234, 32, s));
    OK(cuMemcpyDtoH(w, d, 64));
    for (int i = 0; i < 32; i++)
        EXPECT(w[i] == 0x1234);
    OK(cuMemsetD32Async(d, 0xdeadbeef, 16, NULL));
    OK(cuMemcpyDtoH(u, d, 64));
    for (int i = 0; i < 16; i++)
        EXPECT(u[i] == 0xdeadbeef);
    OK(cuMemsetD2D32(pitched, pitch, 7u, 10, 7));
    OK(cuMemsetD2D8Async(pitched + pitch, pitch, 1, 4, 1, s));
    OK(cuMemcpy2D(&r2));
    unsigned word[3];
    memcpy(&word[0], &back[0], 4), memcpy(&word[1], &back[10], 4), memcpy(&word[2], &back[69], 4);
    EXPECT(word[0] == 7u && word[1] == 0x01010101u && word[2] == 7u);
    OK(cuMemsetD2D16(pitched, pitch, 2, 20, 7));
    RC(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(d + 2, 0, 1));

    OK(cuStreamDestroy(s));
    OK(cuMemFreeHost(pinned));
    OK(cuMemFree(d));
    OK(cuMemFree(d2));
    OK(cuMemFree(pitched));
}

static int host_calls;
static void host_fn(void *user)
{
    host_calls += *(int *)user;
}

static void test_streams_events(void)
{
    CUstream s, sp;
    CUevent e0, e1, nt;
    unsigned flags;
    int prio, one = 1;
    float ms;
    OK(cuStreamCreateWithPriority(&sp, 0, -3));
    OK(cuStreamGetPriority(sp, &prio));
    EXPECT(prio == -3);
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    OK(cuStreamGetFlags(s, &flags));
    EXPECT(flags == CU_STREAM_NON_BLOCKING);
    CUcontext c1, c2;
    OK(cuStreamGetCtx(s, &c1));
    OK(cuCtxGetCurrent(&c2));
    EXPECT(c1 == c2);
    unsigned long long id1, id2;
    OK(cuStreamGetId(s, &id1));
    OK(cuStreamGetId(sp, &id2));
    EXPECT(id1 != id2);
    OK(cuStreamQuery(s));

    OK(cuEventCreate(&e0, 0));
    OK(cuEventCreate(&e1, CU_EVENT_BLOCKING_SYNC));
    OK(cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING));
    RC(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, e0, e1));
    OK(cuEventRecord(e0, s));
    OK(cuLaunchHostFunc(s, host_fn, &one));
    OK(cuStreamWaitEvent(sp, e0, 0));
    OK(cuEventRecordWithFlags(e1, sp, 0));
    OK(cuEventRecord(nt, s));
    OK(cuEventSynchronize(e1));
    OK(cuEventQuery(e1));
    OK(cuEventElapsedTime(&ms, e0, e1));
    EXPECT(ms > 0.0f);
    RC(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, e0, nt));
    OK(cuStreamSynchronize(s));
    EXPECT(host_calls == 1);
    OK(cuStreamSynchronize(NULL));
    OK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    OK(cuCtxSynchronize());
    OK(cuEventDestroy(e0));
    RC(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(e0, s));
    OK(cuEventDestroy(e1));
    OK(cuEventDestroy(nt));
    /* A stream memory wait on mapped page-locked memory: met at once here; the
     * asynchronous test makes one wait for the host. Pageable memory is refused. */
    uint32_t *word, pageable = 0;
    CUdeviceptr dword;
    OK(cuMemHostAlloc((void **)&word, sizeof *word, CU_MEMHOSTALLOC_DEVICEMAP));
    OK(cuMemHostGetDevicePointer(&dword, word, 0));
    *word = 5;
    OK(cuStreamWaitValue32(s, dword, 5, CU_STREAM_WAIT_VALUE_EQ));
    OK(cuStreamWaitValue32(s, dword, 3, CU_STREAM_WAIT_VALUE_GEQ));
    OK(cuStreamWaitValue32(CU_STREAM_PER_THREAD, dword, 4, CU_STREAM_WAIT_VALUE_AND));
    OK(cuStreamSynchronize(s));
    RC(CUDA_ERROR_INVALID_VALUE, cuStreamWaitValue32(s, (CUdeviceptr)(uintptr_t)&pageable, 0, 0));
    RC(CUDA_ERROR_INVALID_VALUE, cuStreamWaitValue32(s, dword, 0, 0x10));
    OK(cuMemFreeHost(word));
    OK(cuStreamDestroy(s));
    RC(CUDA_ERROR_INVALID_HANDLE, cuStreamSynchronize(s));
    OK(cuStreamDestroy(sp));
    /* Handles are reused, as the driver does: a drained stream's record goes to the next
     * stream (at once in synchronous mode; in asynchronous mode once its worker ended). */
    CUstream r;
    OK(cuStreamCreate(&r, 0));
    const char *async = getenv("AG_FAKE_ASYNC");
    if (!async || strcmp(async, "1") != 0)
        EXPECT(r == s || r == sp);
    OK(cuStreamGetFlags(r, &flags));
    EXPECT(flags == 0);
    OK(cuStreamQuery(r));
    OK(cuStreamDestroy(r));
}

static void test_graphs(void)
{
    CUgraph g, g2;
    CUgraphExec ex;
    CUgraphNode nset, nfill, ncopy, nhost, nfill2, ncopy2, nset2, nhost2;
    CUdeviceptr d;
    float h[N];
    int n = N, two = 2;
    float v = 3.0f;
    OK(cuMemAlloc(&d, sizeof h));
    OK(cuGraphCreate(&g, 0));

    CUDA_MEMSET_NODE_PARAMS ms = {d, 0, 0, 4, N, 1};
    OK(cuGraphAddMemsetNode(&nset, g, NULL, 0, &ms, NULL));
    CUDA_KERNEL_NODE_PARAMS kp = {0};
    CUkernel kfill;
    OK(cuLibraryGetKernel(&kfill, lib, "ag_fill"));
    kp.func = (CUfunction)kfill;
    kp.gridDimX = NB(N), kp.gridDimY = 1, kp.gridDimZ = 1, kp.blockDimX = 256, kp.blockDimY = 1, kp.blockDimZ = 1;
    kp.kernelParams = (void *[]){&d, &v, &n};
    RC(CUDA_ERROR_INVALID_VALUE, cuGraphAddKernelNode(&nfill, g, &nset, 1, &kp));
    kp.func = NULL, kp.kern = kfill;
    OK(cuGraphAddKernelNode(&nfill, g, &nset, 1, &kp));
    v = 100.0f; /* argument values were copied at add time */
    CUDA_MEMCPY3D cp = {0};
    cp.srcMemoryType = CU_MEMORYTYPE_DEVICE, cp.srcDevice = d;
    cp.dstMemoryType = CU_MEMORYTYPE_HOST, cp.dstHost = h;
    cp.WidthInBytes = sizeof h, cp.Height = 1, cp.Depth = 1;
    OK(cuGraphAddMemcpyNode(&ncopy, g, &nfill, 1, &cp, NULL));
    CUDA_HOST_NODE_PARAMS hp = {host_fn, &two};
    OK(cuGraphAddHostNode(&nhost, g, &ncopy, 1, &hp));
    CUgraphNodeType type;
    OK(cuGraphNodeGetType(nfill, &type));
    EXPECT(type == CU_GRAPH_NODE_TYPE_KERNEL);
    size_t count = 0;
    OK(cuGraphGetNodes(g, NULL, &count));
    EXPECT(count == 4);
    CUDA_KERNEL_NODE_PARAMS got;
    OK(cuGraphKernelNodeGetParams(nfill, &got));
    EXPECT(got.kern == kfill && *(float *)got.kernelParams[1] == 3.0f);
    CUkernelNodeAttrValue av = {0};
    av.priority = 1;
    OK(cuGraphKernelNodeSetAttribute(nfill, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &av));
    memset(&av, 0, sizeof av);
    OK(cuGraphKernelNodeGetAttribute(nfill, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &av));
    EXPECT(av.priority == 1);

    OK(cuGraphInstantiateWithFlags(&ex, g, 0));
    /* The exec is a snapshot: editing the graph afterwards does not change it. */
    CUgraphNode extra;
    OK(cuGraphAddEmptyNode(&extra, g, &nhost, 1));
    host_calls = 0;
    memset(h, 0, sizeof h);
    OK(cuGraphLaunch(ex, NULL));
    OK(cuCtxSynchronize());
    expect_all(h, N, 3.0f);
    EXPECT(host_calls == 2);
    OK(cuGraphLaunch(ex, CU_STREAM_PER_THREAD));
    OK(cuCtxSynchronize());
    EXPECT(host_calls == 4);

    v = 5.0f;
    kp.kernelParams = (void *[]){&d, &v, &n};
    OK(cuGraphExecKernelNodeSetParams(ex, nfill, &kp));
    OK(cuGraphLaunch(ex, NULL));
    OK(cuCtxSynchronize());
    expect_all(h, N, 5.0f);

    /* Same topology, new values: cuGraphExecUpdate succeeds and copies them. */
    OK(cuGraphCreate(&g2, 0));
    OK(cuGraphAddMemsetNode(&nset2, g2, NULL, 0, &ms, NULL));
    v = 9.0f;
    OK(cuGraphAddKernelNode(&nfill2, g2, &nset2, 1, &kp));
    OK(cuGraphAddMemcpyNode(&ncopy2, g2, &nfill2, 1, &cp, NULL));
    OK(cuGraphAddHostNode(&nhost2, g2, &ncopy2, 1, &hp));
    CUgraphExecUpdateResultInfo info;
    OK(cuGraphExecUpdate(ex, g2, &info));
    EXPECT(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
    OK(cuGraphLaunch(ex, NULL));
    OK(cuCtxSynchronize());
    expect_all(h, N, 9.0f);
    /* g gained a node after instantiation: the topology differs. */
    RC(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, cuGraphExecUpdate(ex, g, &info));
    EXPECT(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);

    CUgraphExec ex2;
    CUDA_GRAPH_INSTANTIATE_PARAMS ip = {0};
    OK(cuGraphInstantiateWithParams(&ex2, g, &ip));
    EXPECT(ip.result_out == CUDA_GRAPH_INSTANTIATE_SUCCESS);
    OK(cuGraphExecDestroy(ex2));
    RC(CUDA_ERROR_INVALID_VALUE, cuGraphLaunch(ex2, NULL));

    OK(cuGraphExecDestroy(ex));
    OK(cuGraphDestroy(g));
    OK(cuGraphDestroy(g2));
    OK(cuMemFree(d));
}

static void test_capture(void)
{
    CUstream s, s2;
    CUgraph g;
    CUgraphExec ex;
    CUdeviceptr d;
    CUevent fork, joinev;
    float h[N];
    int n = N, one = 1;
    float v = 1.0f, a = 2.0f;
    OK(cuMemAlloc(&d, sizeof h));
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    OK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    OK(cuEventCreate(&joinev, CU_EVENT_DISABLE_TIMING));
    OK(cuMemsetD32(d, 0, N));

    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUstreamCaptureStatus st;
    cuuint64_t id;
    OK(cuStreamIsCapturing(s, &st));
    EXPECT(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    OK(CAPTURE_INFO(s, &st, &id, NULL, NULL, NULL, NULL));
    EXPECT(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    launch(fn("ag_fill"), N, s, (void *[]){&d, &v, &n});
    OK(cuEventRecord(fork, s));
    OK(cuStreamWaitEvent(s2, fork, 0));
    launch(fn("ag_scale"), N, s2, (void *[]){&d, &a, &n});
    OK(cuEventRecord(joinev, s2));
    OK(cuStreamWaitEvent(s, joinev, 0));
    OK(cuMemcpyDtoHAsync(h, d, sizeof h, s));
    OK(cuLaunchHostFunc(s, host_fn, &one));
    size_t ndeps;
    const CUgraphNode *deps;
    OK(CAPTURE_INFO(s, &st, NULL, NULL, &deps, NULL, &ndeps));
    EXPECT(ndeps == 1);
    OK(cuStreamEndCapture(s, &g));

    /* Nothing ran during capture. */
    float first;
    OK(cuMemcpyDtoH(&first, d, sizeof first));
    EXPECT(first == 0.0f);
    size_t count = 0;
    OK(cuGraphGetNodes(g, NULL, &count));
    EXPECT(count == 4);
    OK(cuGraphInstantiate(&ex, g, 0));
    host_calls = 0;
    OK(cuGraphLaunch(ex, s));
    OK(cuStreamSynchronize(s));
    expect_all(h, N, 2.0f);
    EXPECT(host_calls == 1);

    /* A synchronizing call during a global capture fails and invalidates it. */
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    RC(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuCtxSynchronize());
    OK(cuStreamIsCapturing(s, &st));
    EXPECT(st == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    CUgraph bad;
    RC(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, cuStreamEndCapture(s, &bad));
    EXPECT(bad == NULL);
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    RC(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuStreamSynchronize(s));
    RC(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, cuStreamEndCapture(s, &bad));
    /* Relaxed mode allows it. */
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    OK(cuCtxSynchronize());
    OK(cuStreamEndCapture(s, &bad));
    OK(cuGraphDestroy(bad));
    RC(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL));

    OK(cuGraphExecDestroy(ex));
    OK(cuGraphDestroy(g));
    OK(cuEventDestroy(fork));
    OK(cuEventDestroy(joinev));
    OK(cuStreamDestroy(s));
    OK(cuStreamDestroy(s2));
    OK(cuMemFree(d));
}

static void test_proc_address(void)
{
    void *p, *q;
    CUdriverProcAddressQueryResult st;
    OK(cuGetProcAddress("cuLaunchKernel", &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
    EXPECT(p == (void *)cuLaunchKernel && st == CU_GET_PROC_ADDRESS_SUCCESS);
    OK(cuGetProcAddress("cuLaunchKernel", &q, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    EXPECT(q != p && q != NULL);
    OK(cuGetProcAddress("cuGetProcAddress", &p, 12000, 0, NULL));
    EXPECT(p == (void *)cuGetProcAddress);
    OK(cuGetProcAddress("cuMemAlloc", &p, 12000, 0, &st));
    EXPECT(p == (void *)cuMemAlloc);
    OK(cuGetProcAddress("cuGraphInstantiate", &p, 12000, 0, &st));
    EXPECT(p == (void *)cuGraphInstantiate);
    OK(cuGetProcAddress("cuCtxCreate", &p, 12080, 0, &st));
    EXPECT(p == (void *)CTX_CREATE_NEWEST);
    OK(cuGetProcAddress("cuStreamGetCaptureInfo", &p, 12030, 0, &st));
    EXPECT(p == (void *)CAPTURE_INFO);
    RC(CUDA_ERROR_NOT_FOUND, cuGetProcAddress("cuNoSuchThing", &p, 12000, 0, &st));
    EXPECT(st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && p == NULL);

    /* The per-thread launch and copy treat a NULL stream as the per-thread stream. */
    typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  CUstream, void **, void **);
    typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
    OK(cuGetProcAddress("cuMemcpyHtoD", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    CUdeviceptr d;
    float h[N], v = 7.0f;
    int n = N;
    OK(cuMemAlloc(&d, sizeof h));
    OK(((launch_fn)q)(fn("ag_fill"), NB(N), 1, 1, 256, 1, 1, 0, NULL, (void *[]){&d, &v, &n}, NULL));
    get(h, d, N);
    expect_all(h, N, 7.0f);
    h[0] = 1.0f;
    OK(((htod_fn)p)(d, h, sizeof(float)));
    get(h, d, 2);
    EXPECT(h[0] == 1.0f && h[1] == 7.0f);
    OK(cuMemFree(d));
}

static void test_contexts(void)
{
    CUcontext c, cur, popped;
    CUdevice dev;
    unsigned flags;
    int active;
    OK(CTX_CREATE(&c, 0, 0));
    OK(cuCtxGetCurrent(&cur));
    EXPECT(cur == c);
    OK(cuCtxGetDevice(&dev));
    EXPECT(dev == 0);
    OK(cuCtxPopCurrent(&popped));
    EXPECT(popped == c);
    OK(cuCtxPushCurrent(c));
    OK(cuCtxDestroy(c));
    OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
    EXPECT(active == 1);
    OK(cuCtxGetCurrent(&cur));
    EXPECT(cur != c);
}

/* Each thread needs its own current context; all share the module and the lock. */
static void *worker(void *arg)
{
    CUcontext ctx;
    CUdeviceptr d;
    CUfunction f = arg;
    float h[N], v;
    int n = N;
    if (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx != NULL)
        return "new thread already has a context";
    if (cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) || cuMemAlloc(&d, sizeof h))
        return "context setup failed";
    for (int i = 0; i < 50; i++) {
        v = (float)i;
        if (cuLaunchKernel(f, NB(N), 1, 1, 256, 1, 1, 0, CU_STREAM_PER_THREAD, (void *[]){&d, &v, &n}, NULL) ||
            cuMemcpyDtoH(h, d, sizeof h) || h[N - 1] != v)
            return "launch or copy failed";
    }
    if (cuMemFree(d) || cuDevicePrimaryCtxRelease(0))
        return "cleanup failed";
    return NULL;
}

static void test_threads(void)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        EXPECT(pthread_create(&t[i], NULL, worker, fn("ag_fill")) == 0);
    for (int i = 0; i < 4; i++) {
        void *err;
        EXPECT(pthread_join(t[i], &err) == 0);
        if (err)
            FAIL("thread %d: %s", i, (const char *)err);
    }
}

/* ---- execution semantics: faults, launch-attribute events, event nodes, contexts --------- */

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open = 1;
static pthread_t host_thread;

/* Blocks its stream until gate_set(1): asynchronous mode only, where it runs on a worker. */
static void gate_wait(void *arg)
{
    (void)arg;
    host_thread = pthread_self();
    pthread_mutex_lock(&gate_lock);
    while (!gate_open)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
}

static void gate_set(int open)
{
    pthread_mutex_lock(&gate_lock);
    gate_open = open;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
}

/* Both modes: a faulting kernel gives its context the sticky error (and only it); events
 * recorded through launch attributes; freed memory refused at the call; a CUkernel runs
 * in its stream's context without a current one, a CUfunction does not. */
static void test_semantics(void)
{
    CUcontext c, primary, popped;
    CUmodule m;
    CUfunction fault, fill = fn("ag_fill");
    CUstream s;
    CUdeviceptr d, gone;
    int *null = NULL, n = N;
    float v = 4.0f, h[N];
    OK(cuCtxGetCurrent(&primary));
    OK(CTX_CREATE(&c, 0, 0));
    OK(cuModuleLoad(&m, ptx_path));
    OK(cuModuleGetFunction(&fault, m, "ag_fault"));
    OK(cuLaunchKernel(fault, 1, 1, 1, 1, 1, 1, 0, NULL, (void *[]){&null}, NULL));
    RC(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
    RC(CUDA_ERROR_ILLEGAL_ADDRESS, cuLaunchKernel(fault, 1, 1, 1, 1, 1, 1, 0, NULL, (void *[]){&null}, NULL));
    RC(CUDA_ERROR_ILLEGAL_ADDRESS, cuMemAlloc(&d, 16));
    OK(cuCtxDestroy(c));
    OK(cuCtxSetCurrent(primary));
    OK(cuMemAlloc(&d, sizeof h));

    CUevent pe, ce, bad;
    OK(cuEventCreate(&pe, CU_EVENT_DISABLE_TIMING));
    OK(cuEventCreate(&ce, CU_EVENT_DISABLE_TIMING));
    OK(cuEventCreate(&bad, 0));
    OK(cuEventDestroy(bad));
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUlaunchAttribute at[2];
    memset(at, 0, sizeof at);
    at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
    at[0].value.programmaticEvent.event = pe;
    at[1].id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
    at[1].value.launchCompletionEvent.event = ce;
    CUlaunchConfig cfg = {NB(N), 1, 1, 256, 1, 1, 0, s, at, 2};
    OK(cuLaunchKernelEx(&cfg, fill, (void *[]){&d, &v, &n}, NULL));
    OK(cuEventSynchronize(pe));
    OK(cuEventSynchronize(ce));
    get(h, d, N);
    expect_all(h, N, 4.0f);
    at[1].value.launchCompletionEvent.event = bad;
    RC(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernelEx(&cfg, fill, (void *[]){&d, &v, &n}, NULL));
    at[1].value.launchCompletionEvent.event = ce;

    OK(cuMemAlloc(&gone, 64));
    OK(cuMemFree(gone));
    RC(CUDA_ERROR_INVALID_VALUE, cuMemsetD32Async(gone, 0, 16, s));
    RC(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoDAsync(d, gone, 64, s));

    CUkernel k;
    OK(cuLibraryGetKernel(&k, lib, "ag_fill"));
    v = 6.0f;
    OK(cuCtxPopCurrent(&popped));
    EXPECT(popped == primary);
    OK(cuLaunchKernel((CUfunction)k, NB(N), 1, 1, 256, 1, 1, 0, s, (void *[]){&d, &v, &n}, NULL));
    RC(CUDA_ERROR_INVALID_CONTEXT, cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, NULL, (void *[]){&d, &v, &n}, NULL));
    RC(CUDA_ERROR_INVALID_CONTEXT, cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&d, &v, &n}, NULL));
    OK(cuCtxPushCurrent(primary));
    OK(cuStreamSynchronize(s));
    get(h, d, N);
    expect_all(h, N, 6.0f);

    OK(cuEventDestroy(pe));
    OK(cuEventDestroy(ce));
    OK(cuStreamDestroy(s));
    OK(cuMemFree(d));
}

/* Asynchronous mode only: work behind a blocked host function has not run, queries say
 * so, waits use the record that was the most recent at the wait, the legacy stream waits
 * for blocking streams only, graphs' event nodes and pageable copies behave as on a GPU. */
static void test_async(void)
{
    CUstream s1, s2, s3, blk;
    CUevent e;
    CUdeviceptr x, y;
    float h[N], one = 1.0f, nine = 9.0f, five = 5.0f;
    int n = N;
    OK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    OK(cuStreamCreate(&s3, CU_STREAM_NON_BLOCKING));
    OK(cuStreamCreate(&blk, 0));
    OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    OK(cuMemAlloc(&x, sizeof h));
    OK(cuMemAlloc(&y, sizeof h));

    gate_set(0);
    OK(cuLaunchHostFunc(s1, gate_wait, NULL));
    launch(fn("ag_fill"), N, s1, (void *[]){&x, &nine, &n});
    OK(cuEventRecord(e, s1));
    RC(CUDA_ERROR_NOT_READY, cuStreamQuery(s1));
    RC(CUDA_ERROR_NOT_READY, cuEventQuery(e));
    OK(cuStreamWaitEvent(s2, e, 0));
    launch(fn("ag_add"), N, s2, (void *[]){&y, &x, &x, &n});
    /* A later record on an idle stream: queries see it, the wait above does not. */
    OK(cuEventRecord(e, s3));
    OK(cuStreamSynchronize(s3));
    OK(cuEventQuery(e));
    RC(CUDA_ERROR_NOT_READY, cuStreamQuery(s2));
    /* The legacy stream waits for the blocking stream's gate, a non-blocking one does not. */
    CUdeviceptr w;
    OK(cuMemAlloc(&w, sizeof h));
    OK(cuLaunchHostFunc(blk, gate_wait, NULL));
    launch(fn("ag_fill"), N, NULL, (void *[]){&w, &one, &n});
    RC(CUDA_ERROR_NOT_READY, cuStreamQuery(NULL));
    launch(fn("ag_fill"), N, s3, (void *[]){&x, &five, &n});
    OK(cuStreamSynchronize(s3));
    /* A pageable source is read at the call. */
    float src[N];
    for (int i = 0; i < N; i++)
        src[i] = 3.0f;
    CUdeviceptr z;
    OK(cuMemAlloc(&z, sizeof src));
    OK(cuMemcpyHtoDAsync(z, src, sizeof src, s1));
    for (int i = 0; i < N; i++)
        src[i] = 0.0f;
    gate_set(1);
    OK(cuCtxSynchronize());
    EXPECT(!pthread_equal(host_thread, pthread_self()));
    get(h, w, N);
    expect_all(h, N, 1.0f);
    get(h, y, N);
    expect_all(h, N, 18.0f);
    get(h, z, N);
    expect_all(h, N, 3.0f);

    /* Graph event nodes: a record node records when the graph runs, a wait node waits
     * for the record that was the most recent at the launch. */
    CUgraph gr, gw;
    CUgraphExec er, ew;
    CUgraphNode nr, nw, nk;
    OK(cuGraphCreate(&gr, 0));
    OK(cuGraphAddEventRecordNode(&nr, gr, NULL, 0, e));
    OK(cuGraphInstantiate(&er, gr, 0));
    OK(cuGraphCreate(&gw, 0));
    OK(cuGraphAddEventWaitNode(&nw, gw, NULL, 0, e));
    CUDA_KERNEL_NODE_PARAMS kp = {0};
    kp.func = fn("ag_add");
    kp.gridDimX = NB(N), kp.gridDimY = kp.gridDimZ = 1, kp.blockDimX = 256, kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = (void *[]){&y, &x, &x, &n};
    OK(cuGraphAddKernelNode(&nk, gw, &nw, 1, &kp));
    OK(cuGraphInstantiate(&ew, gw, 0));
    gate_set(0);
    OK(cuLaunchHostFunc(s1, gate_wait, NULL));
    launch(fn("ag_fill"), N, s1, (void *[]){&x, &one, &n});
    OK(cuGraphLaunch(er, s1));
    RC(CUDA_ERROR_NOT_READY, cuEventQuery(e));
    OK(cuGraphLaunch(ew, s2));
    RC(CUDA_ERROR_NOT_READY, cuStreamQuery(s2));
    gate_set(1);
    OK(cuStreamSynchronize(s2));
    get(h, y, N);
    expect_all(h, N, 2.0f);
    OK(cuEventQuery(e));

    /* A stream memory wait holds its stream until the host writes the word; the host
     * is not blocked meanwhile, and the stream's later work runs after the write. */
    uint32_t *word;
    CUdeviceptr dword;
    OK(cuMemHostAlloc((void **)&word, sizeof *word, CU_MEMHOSTALLOC_DEVICEMAP));
    OK(cuMemHostGetDevicePointer(&dword, word, 0));
    *word = 0;
    OK(cuStreamWaitValue32(s1, dword, 1, CU_STREAM_WAIT_VALUE_GEQ));
    launch(fn("ag_fill"), N, s1, (void *[]){&x, &five, &n});
    RC(CUDA_ERROR_NOT_READY, cuStreamQuery(s1));
    get(h, x, N);
    expect_all(h, N, 1.0f);
    __atomic_store_n(word, 1, __ATOMIC_RELEASE);
    OK(cuStreamSynchronize(s1));
    get(h, x, N);
    expect_all(h, N, 5.0f);
    OK(cuMemFreeHost(word));

    OK(cuGraphExecDestroy(er));
    OK(cuGraphExecDestroy(ew));
    OK(cuGraphDestroy(gr));
    OK(cuGraphDestroy(gw));
    OK(cuEventDestroy(e));
    OK(cuStreamDestroy(s1));
    OK(cuStreamDestroy(s2));
    OK(cuStreamDestroy(s3));
    OK(cuStreamDestroy(blk));
    OK(cuMemFree(x));
    OK(cuMemFree(y));
    OK(cuMemFree(z));
    OK(cuMemFree(w));
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    int count, version, cc;
    char name[64];
    const char *ename;
    if (argc != 2) {
        fprintf(stderr, "usage: %s kernels.ptx\n", argv[0]);
        return 2;
    }
    alarm(120); /* a wait that never ends is a failure too */
    RC(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetCount(&count));
    OK(cuInit(0));
    OK(cuDriverGetVersion(&version));
    EXPECT(version == 13000);
    OK(cuDeviceGetCount(&count));
    EXPECT(count == 1);
    OK(cuDeviceGet(&dev, 0));
    OK(cuDeviceGetName(name, sizeof name, dev));
    EXPECT(strcmp(name, "autograph CPU stand-in") == 0);
    OK(cuDeviceGetAttribute(&cc, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    EXPECT(cc == 9);
    OK(cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &ename));
    EXPECT(strcmp(ename, "CUDA_ERROR_INVALID_VALUE") == 0);
    CUdeviceptr none;
    RC(CUDA_ERROR_INVALID_CONTEXT, cuMemAlloc(&none, 16));
    OK(cuDevicePrimaryCtxRetain(&ctx, dev));
    OK(cuCtxSetCurrent(ctx));

    ptx_path = argv[1];
    OK(cuModuleLoad(&mod, argv[1]));
    OK(cuLibraryLoadFromFile(&lib, argv[1], NULL, NULL, 0, NULL, NULL, 0));

    test_kernels();
    test_handles();
    test_memory();
    test_streams_events();
    test_graphs();
    test_capture();
    test_proc_address();
    test_contexts();
    test_threads();
    test_semantics();
    const char *async = getenv("AG_FAKE_ASYNC");
    if (async && strcmp(async, "1") == 0)
        test_async();

    OK(cuLibraryUnload(lib));
    CUkernel k;
    RC(CUDA_ERROR_INVALID_HANDLE, cuLibraryGetKernel(&k, lib, "ag_fill"));
    OK(cuModuleUnload(mod));
    OK(cuDevicePrimaryCtxRelease(dev));
    printf("fakecuda selftest: %d checks passed\n", checks);
    return 0;
}
