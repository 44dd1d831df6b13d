// never_repeat - the worst case for libautograph: a launch sequence that
// never repeats. Every launch passes its global launch index as an argument
// and the kernel (one of four) is picked pseudo-randomly, so no two windows
// of the stream are alike and nothing can be graphed. Eager only; comparing
// with and without the library measures pure interposition overhead.
#include "common.h"

static const char *USAGE =
    "usage: never_repeat [--iters N] [--warmup N] [--n K] [--check]\n"
    "  each iteration launches K kernels on 1024 floats";

static const int N = 1024;
static const int BLOCK = 256;
static const int KINDS = 4;

// The scalar step derived from the launch index, identical on host and device.
__host__ __device__ inline float step_of(unsigned idx)
{
    return (float)(idx & 1023u) * 1e-6f;
}

__global__ void k_add(float *y, unsigned idx)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = __fadd_rn(y[i], step_of(idx));
}

__global__ void k_sub_half(float *y, unsigned idx)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = __fsub_rn(y[i], 0.5f * step_of(idx));
}

__global__ void k_shrink(float *y, unsigned idx)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = __fmaf_rn(y[i], 1.0f - 0x1p-10f, step_of(idx));
}

__global__ void k_grow(float *y, unsigned idx)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = __fmaf_rn(y[i], 1.0f + 0x1p-10f, -step_of(idx));
}

static float apply_ref(int kind, float y, unsigned idx)
{
    float s = step_of(idx);
    switch (kind) {
    case 0: return y + s;
    case 1: return y - 0.5f * s;
    case 2: return fmaf(y, 1.0f - 0x1p-10f, s);
    default: return fmaf(y, 1.0f + 0x1p-10f, -s);
    }
}

int main(int argc, char **argv)
{
    Options opt(argc, argv, USAGE);
    long iters = opt.get_int("--iters", 1000, 1);
    long warmup = opt.get_int("--warmup", 20);
    int n = (int)opt.get_int("--n", 100, 1);
    bool check = opt.flag("--check");
    opt.finish();

    Rng rng(4242);
    std::vector<float> init(N);
    rng.fill(init, 0.0f, 1.0f);
    // The kernel order for every launch, drawn up front so it is not timed.
    std::vector<unsigned char> kinds((size_t)(warmup + iters) * n);
    for (auto &k : kinds)
        k = (unsigned char)(rng.next() % KINDS);

    float *d_y;
    CHECK(cudaMalloc(&d_y, N * sizeof(float)));
    CHECK(cudaMemcpy(d_y, init.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));

    unsigned idx = 0;
    auto run_iteration = [&]() {
        for (int k = 0; k < n; ++k, ++idx) {
            switch (kinds[idx]) {
            case 0: LAUNCH(k_add, N / BLOCK, BLOCK, stream, d_y, idx); break;
            case 1: LAUNCH(k_sub_half, N / BLOCK, BLOCK, stream, d_y, idx); break;
            case 2: LAUNCH(k_shrink, N / BLOCK, BLOCK, stream, d_y, idx); break;
            default: LAUNCH(k_grow, N / BLOCK, BLOCK, stream, d_y, idx); break;
            }
        }
    };

    for (long i = 0; i < warmup; ++i)
        run_iteration();
    CHECK(cudaDeviceSynchronize());
    double t0 = now_ms();
    for (long i = 0; i < iters; ++i)
        run_iteration();
    CHECK(cudaStreamSynchronize(stream));
    double total_ms = now_ms() - t0;

    std::vector<float> out(N);
    CHECK(cudaMemcpy(out.data(), d_y, N * sizeof(float), cudaMemcpyDeviceToHost));

    CheckState state = CHECK_SKIPPED;
    if (check) {
        std::vector<float> ref = init;
        for (unsigned i = 0; i < idx; ++i)
            for (auto &y : ref)
                y = apply_ref(kinds[i], y, i);
        state = compare("output", out, ref, 1e-6) ? CHECK_PASS : CHECK_FAIL;
    }

    std::string fields = fmt("n=%d checksum=%.6e", n, checksum(out));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(d_y));
    return report("never_repeat", "eager", iters, fields, state, total_ms);
}
