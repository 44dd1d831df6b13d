// long_kernels - a few long, compute-bound kernels per iteration (--n
// kernels, each a chain of --work dependent FMAs over 64 Mi floats, ~2 ms on
// an H200). Launch overhead is negligible here, so graphing can neither help
// nor may it hurt: libautograph should match eager time within noise.
#include "common.h"

static const char *USAGE =
    "usage: long_kernels [--iters N] [--warmup N] [--n K] [--work R] [--elems E]\n"
    "                    [--mode eager|graph] [--check]";

static const int SAMPLES = 1024;  // elements recomputed on the CPU by --check

__global__ void fma_chain(float *x, size_t n, float a, float b, int work)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = x[i];
        for (int r = 0; r < work; ++r)
            v = __fmaf_rn(v, a, b);
        x[i] = v;
    }
}

int main(int argc, char **argv)
{
    Options opt(argc, argv, USAGE);
    long iters = opt.get_int("--iters", 20, 1);
    long warmup = opt.get_int("--warmup", 2);
    int n = (int)opt.get_int("--n", 4, 1);
    int work = (int)opt.get_int("--work", 1000, 1);
    size_t elems = (size_t)opt.get_int("--elems", 64L << 20, SAMPLES);
    std::string mode = opt.get_choice("--mode", {"eager", "graph"});
    bool check = opt.flag("--check");
    opt.finish();
    bool graph = mode == "graph";

    // a slightly below 1 keeps values bounded without forgetting the input.
    Rng rng(99);
    std::vector<float> a(n), b(n), init(elems);
    rng.fill(a, 1.0f - 1e-5f, 1.0f - 5e-6f);
    rng.fill(b, -1e-3f, 1e-3f);
    rng.fill(init, -1.0f, 1.0f);

    float *d_x;
    CHECK(cudaMalloc(&d_x, elems * sizeof(float)));
    CHECK(cudaMemcpy(d_x, init.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));

    int grid = (int)std::min<size_t>((elems + 255) / 256, 1u << 20);
    auto enqueue_iteration = [&](cudaStream_t s) {
        for (int k = 0; k < n; ++k)
            LAUNCH(fma_chain, grid, 256, s, d_x, elems, a[k], b[k], work);
    };

    cudaGraphExec_t exec = nullptr;
    if (graph) {
        begin_capture(stream);
        enqueue_iteration(stream);
        exec = end_capture(stream);
    }

    long graph_launches = 0;
    auto run_iteration = [&]() {
        if (graph) {
            CHECK(cudaGraphLaunch(exec, stream));
            ++graph_launches;
        } else {
            enqueue_iteration(stream);
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

    std::vector<float> out(elems);
    CHECK(cudaMemcpy(out.data(), d_x, elems * sizeof(float), cudaMemcpyDeviceToHost));

    CheckState state = CHECK_SKIPPED;
    if (check) {
        // Recompute SAMPLES evenly spread elements with the same FMA chain.
        std::vector<float> got(SAMPLES), ref(SAMPLES);
        for (int s = 0; s < SAMPLES; ++s) {
            size_t i = s * (elems / SAMPLES) + (size_t)s * 7919 % (elems / SAMPLES);
            float v = init[i];
            for (long it = 0; it < warmup + iters; ++it)
                for (int k = 0; k < n; ++k)
                    for (int r = 0; r < work; ++r)
                        v = fmaf(v, a[k], b[k]);
            got[s] = out[i];
            ref[s] = v;
        }
        state = compare("samples", got, ref, 1e-6) ? CHECK_PASS : CHECK_FAIL;
    }

    std::string fields = fmt("n=%d work=%d elems=%zu", n, work, elems);
    if (graph)
        fields += fmt(" graph_launches=%ld captured_kernels=%lld", graph_launches,
                      g_kernels_captured);
    fields += fmt(" checksum=%.6e", checksum(out));

    if (exec)
        CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(d_x));
    return report("long_kernels", mode.c_str(), iters, fields, state, total_ms);
}
