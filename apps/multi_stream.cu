// multi_stream - a fork/join pattern across two created streams, repeated
// every iteration:
//   s1: k1; record e1 | s2: wait e1; k2; record e2 | s1: wait e2; k3
// The repeating unit spans two streams and two events, so a graph of it must
// keep the cross-stream dependencies. Each kernel reads what the previous one
// wrote (A -> B -> A), so a lost dependency changes the result. Graph mode
// captures one iteration starting on s1 (s2 joins through e1 and rejoins
// through e2) and launches the graph on s1.
#include "accum.cuh"
#include "common.h"

static const char *USAGE =
    "usage: multi_stream [--iters N] [--warmup N] [--mode eager|graph] [--check]";

static const int N = 1024;
static const int BLOCK = 256;

int main(int argc, char **argv)
{
    Options opt(argc, argv, USAGE);
    long iters = opt.get_int("--iters", 10000, 1);
    long warmup = opt.get_int("--warmup", 20);
    std::string mode = opt.get_choice("--mode", {"eager", "graph"});
    bool check = opt.flag("--check");
    opt.finish();
    bool graph = mode == "graph";

    Rng rng(31337);
    std::vector<float> host_a(N), host_b(N), b(3), c(3);
    rng.fill(host_a, 0.0f, 1.0f);
    rng.fill(host_b, 0.0f, 1.0f);
    rng.fill(b, -4e-3f, 4e-3f);
    rng.fill(c, 1e-3f, 2e-3f);

    float *d_a, *d_b;
    CHECK(cudaMalloc(&d_a, N * sizeof(float)));
    CHECK(cudaMalloc(&d_b, N * sizeof(float)));
    CHECK(cudaMemcpy(d_a, host_a.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, host_b.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaStreamCreate(&s2));
    cudaEvent_t e1, e2;
    CHECK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));

    auto enqueue_iteration = [&]() {
        LAUNCH(accum_kernel, N / BLOCK, BLOCK, s1, d_a, d_b, b[0], c[0], N);
        CHECK(cudaEventRecord(e1, s1));
        CHECK(cudaStreamWaitEvent(s2, e1, 0));
        LAUNCH(accum_kernel, N / BLOCK, BLOCK, s2, d_b, d_a, b[1], c[1], N);
        CHECK(cudaEventRecord(e2, s2));
        CHECK(cudaStreamWaitEvent(s1, e2, 0));
        LAUNCH(accum_kernel, N / BLOCK, BLOCK, s1, d_a, d_b, b[2], c[2], N);
    };

    cudaGraphExec_t exec = nullptr;
    if (graph) {
        begin_capture(s1);
        enqueue_iteration();
        exec = end_capture(s1);
    }

    long graph_launches = 0;
    auto run_iteration = [&]() {
        if (graph) {
            CHECK(cudaGraphLaunch(exec, s1));
            ++graph_launches;
        } else {
            enqueue_iteration();
        }
    };

    for (long i = 0; i < warmup; ++i)
        run_iteration();
    CHECK(cudaDeviceSynchronize());
    double t0 = now_ms();
    for (long i = 0; i < iters; ++i)
        run_iteration();
    CHECK(cudaDeviceSynchronize());
    double total_ms = now_ms() - t0;

    std::vector<float> out_a(N), out_b(N);
    CHECK(cudaMemcpy(out_a.data(), d_a, N * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(out_b.data(), d_b, N * sizeof(float), cudaMemcpyDeviceToHost));

    CheckState state = CHECK_SKIPPED;
    if (check) {
        std::vector<float> ra = host_a, rb = host_b;
        for (long i = 0; i < warmup + iters; ++i)
            for (int e = 0; e < N; ++e) {
                ra[e] = accum_ref(ra[e], rb[e], b[0], c[0]);
                rb[e] = accum_ref(rb[e], ra[e], b[1], c[1]);
                ra[e] = accum_ref(ra[e], rb[e], b[2], c[2]);
            }
        bool ok = compare("A", out_a, ra, 1e-6);
        ok = compare("B", out_b, rb, 1e-6) && ok;
        state = ok ? CHECK_PASS : CHECK_FAIL;
    }

    std::string fields;
    if (graph)
        fields = fmt("graph_launches=%ld captured_kernels=%lld ", graph_launches,
                     g_kernels_captured);
    fields += fmt("checksum=%.6e", checksum(out_a) + checksum(out_b));

    if (exec)
        CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaEventDestroy(e1));
    CHECK(cudaEventDestroy(e2));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    return report("multi_stream", mode.c_str(), iters, fields, state, total_ms);
}
