// tiny_kernels - a launch-bound loop: every iteration launches --n tiny
// kernels on 1024 floats with fixed per-kernel constants, so the launch
// sequence repeats exactly. Kernel time is ~1-2 us, so eager runs measure CPU
// launch overhead; the hand-written graph mode (one captured iteration,
// replayed) is the best case libautograph can aim for. --sync iter adds a
// stream synchronization per iteration, --pingpong swaps the two buffers every
// iteration (two alternating argument sets), --stream default uses the legacy
// default stream instead of a created one.
#include "accum.cuh"
#include "common.h"

static const char *USAGE =
    "usage: tiny_kernels [--iters N] [--warmup N] [--n K] [--mode eager|graph]\n"
    "                    [--sync none|iter] [--pingpong] [--stream created|default] [--check]";

static const int N = 1024;
static const int BLOCK = 256;

int main(int argc, char **argv)
{
    Options opt(argc, argv, USAGE);
    long iters = opt.get_int("--iters", 1000, 1);
    long warmup = opt.get_int("--warmup", 20);
    int n = (int)opt.get_int("--n", 100, 1);
    std::string mode = opt.get_choice("--mode", {"eager", "graph"});
    std::string sync = opt.get_choice("--sync", {"none", "iter"});
    bool pingpong = opt.flag("--pingpong");
    std::string stream_kind = opt.get_choice("--stream", {"created", "default"});
    bool check = opt.flag("--check");
    opt.finish();
    bool graph = mode == "graph";

    Rng rng(12345);
    std::vector<float> host[2] = {std::vector<float>(N), std::vector<float>(N)};
    rng.fill(host[0], 0.0f, 1.0f);
    rng.fill(host[1], 0.0f, 1.0f);
    std::vector<float> b(n), c(n);
    rng.fill(b, -4e-3f, 4e-3f);
    rng.fill(c, 1e-3f, 2e-3f);

    float *dev[2];
    for (int i = 0; i < 2; ++i) {
        CHECK(cudaMalloc(&dev[i], N * sizeof(float)));
        CHECK(cudaMemcpy(dev[i], host[i].data(), N * sizeof(float), cudaMemcpyHostToDevice));
    }
    cudaStream_t stream = 0;
    if (stream_kind == "created")
        CHECK(cudaStreamCreate(&stream));

    // Iteration `it` reads buffer p and updates buffer 1-p, p = parity with --pingpong.
    auto parity = [&](long it) { return pingpong ? (int)(it & 1) : 0; };
    auto enqueue_iteration = [&](cudaStream_t s, int p) {
        for (int k = 0; k < n; ++k)
            LAUNCH(accum_kernel, N / BLOCK, BLOCK, s, dev[1 - p], dev[p], b[k], c[k], N);
    };

    // Graph mode: one graph per parity; the legacy stream cannot be captured,
    // so capture on a created stream and launch on the chosen one.
    cudaGraphExec_t exec[2] = {nullptr, nullptr};
    if (graph) {
        cudaStream_t cap = stream;
        if (cap == 0)
            CHECK(cudaStreamCreate(&cap));
        for (int p = 0; p < (pingpong ? 2 : 1); ++p) {
            begin_capture(cap);
            enqueue_iteration(cap, p);
            exec[p] = end_capture(cap);
        }
        if (cap != stream)
            CHECK(cudaStreamDestroy(cap));
    }

    long graph_launches = 0;
    auto run_iteration = [&](long it) {
        if (graph) {
            CHECK(cudaGraphLaunch(exec[parity(it)], stream));
            ++graph_launches;
        } else {
            enqueue_iteration(stream, parity(it));
        }
        if (sync == "iter")
            CHECK(cudaStreamSynchronize(stream));
    };

    long it = 0;
    for (; it < warmup; ++it)
        run_iteration(it);
    CHECK(cudaDeviceSynchronize());
    double t0 = now_ms();
    for (; it < warmup + iters; ++it)
        run_iteration(it);
    CHECK(cudaStreamSynchronize(stream));
    double total_ms = now_ms() - t0;

    std::vector<float> out[2] = {std::vector<float>(N), std::vector<float>(N)};
    for (int i = 0; i < 2; ++i)
        CHECK(cudaMemcpy(out[i].data(), dev[i], N * sizeof(float), cudaMemcpyDeviceToHost));

    CheckState state = CHECK_SKIPPED;
    if (check) {
        std::vector<float> ref[2] = {host[0], host[1]};
        for (long i = 0; i < warmup + iters; ++i) {
            int p = parity(i);
            for (int k = 0; k < n; ++k)
                for (int e = 0; e < N; ++e)
                    ref[1 - p][e] = accum_ref(ref[1 - p][e], ref[p][e], b[k], c[k]);
        }
        bool ok = compare("buffer0", out[0], ref[0], 1e-6);
        ok = compare("buffer1", out[1], ref[1], 1e-6) && ok;
        state = ok ? CHECK_PASS : CHECK_FAIL;
    }

    std::string fields = fmt("n=%d sync=%s pingpong=%d stream=%s", n, sync.c_str(), (int)pingpong,
                             stream_kind.c_str());
    if (graph)
        fields += fmt(" graph_launches=%ld captured_kernels=%lld", graph_launches,
                      g_kernels_captured);
    fields += fmt(" checksum=%.6e", checksum(out[0]) + checksum(out[1]));

    for (auto e : exec)
        if (e)
            CHECK(cudaGraphExecDestroy(e));
    if (stream)
        CHECK(cudaStreamDestroy(stream));
    for (auto d : dev)
        CHECK(cudaFree(d));
    return report("tiny_kernels", mode.c_str(), iters, fields, state, total_ms);
}
