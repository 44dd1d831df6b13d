// multi_device - the tiny-kernel loop on every visible device from one process,
// with peer copies between them: each iteration, device d runs --n accum kernels
// on its buffer, reading what the previous device sent it last iteration, then
// copies its buffer to the next device (cudaMemcpyPeerAsync on its own stream);
// every device's stream is synchronized at the end of the iteration. Peer access is
// enabled between every pair that supports it; with --peer-read the last kernel of
// each device reads the previous device's inbox directly (needs peer access).
// The streams, one per device, are printed on stderr ("stream: dev=D ptr=P"), so
// that AUTOGRAPH_LOG=debug lines ("stream P: ... graph built") can be matched to a
// device. With one GPU the loop runs on it alone, the peer copy being to itself.
#include "accum.cuh"
#include "common.h"

#include <array>

static const char *USAGE =
    "usage: multi_device [--iters N] [--warmup N] [--n K] [--devices D] [--peer-read] [--check]";

static const int N = 1024;
static const int BLOCK = 256;
static const int MAX_DEV = 16;

struct Dev {
    cudaStream_t s;
    float *y, *in[2];
};

int main(int argc, char **argv)
{
    Options opt(argc, argv, USAGE);
    long iters = opt.get_int("--iters", 1000, 1);
    long warmup = opt.get_int("--warmup", 20);
    int n = (int)opt.get_int("--n", 20, 1);
    int want = (int)opt.get_int("--devices", MAX_DEV, 1);
    bool peer_read = opt.flag("--peer-read");
    bool check = opt.flag("--check");
    opt.finish();

    int ndev = 0;
    CHECK(cudaGetDeviceCount(&ndev));
    ndev = std::min(std::min(ndev, want), MAX_DEV);

    Rng rng(4242);
    std::vector<std::vector<float>> init(ndev, std::vector<float>(N));
    for (auto &v : init)
        rng.fill(v, 0.0f, 1.0f);
    // Per device constants, so that no two devices compute the same thing.
    std::vector<std::vector<float>> b(ndev, std::vector<float>(n)), c(ndev, std::vector<float>(n));
    for (int d = 0; d < ndev; ++d) {
        rng.fill(b[d], -4e-3f, 4e-3f);
        rng.fill(c[d], 1e-3f, 2e-3f);
    }

    std::vector<Dev> dev(ndev);
    const size_t bytes = N * sizeof(float);
    for (int d = 0; d < ndev; ++d) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaStreamCreate(&dev[d].s));
        CHECK(cudaMalloc(&dev[d].y, bytes));
        CHECK(cudaMemcpy(dev[d].y, init[d].data(), bytes, cudaMemcpyHostToDevice));
        for (auto &p : dev[d].in) {
            CHECK(cudaMalloc(&p, bytes));
            CHECK(cudaMemset(p, 0, bytes));
        }
        fprintf(stderr, "stream: dev=%d ptr=%p\n", d, (void *)dev[d].s);
    }
    int peer_pairs = 0;
    for (int d = 0; d < ndev; ++d) {
        CHECK(cudaSetDevice(d));
        for (int e = 0; e < ndev; ++e) {
            int can = 0;
            if (e == d)
                continue;
            CHECK(cudaDeviceCanAccessPeer(&can, d, e));
            if (can) {
                CHECK(cudaDeviceEnablePeerAccess(e, 0));
                ++peer_pairs;
            } else if (peer_read) {
                fprintf(stderr, "multi_device: --peer-read needs peer access from device %d to %d\n", d, e);
                return 2;
            }
        }
    }

    // Iteration it on device d reads in[q] (sent last iteration) and sends into the
    // next device's in[p]: the buffers read in an iteration are not written in it.
    long peer_copies = 0;
    auto run_iteration = [&](long it) {
        int p = (int)(it & 1), q = p ^ 1;
        for (int d = 0; d < ndev; ++d) {
            Dev &x = dev[d], &next = dev[(d + 1) % ndev], &prev = dev[(d + ndev - 1) % ndev];
            CHECK(cudaSetDevice(d));
            for (int k = 0; k < n; ++k) {
                const float *src = peer_read && k == n - 1 ? prev.in[q] : x.in[q];
                LAUNCH(accum_kernel, N / BLOCK, BLOCK, x.s, x.y, src, b[d][k], c[d][k], N);
            }
            CHECK(cudaMemcpyPeerAsync(next.in[p], (d + 1) % ndev, x.y, d, bytes, x.s));
            ++peer_copies;
        }
        for (int d = 0; d < ndev; ++d) {
            CHECK(cudaSetDevice(d));
            CHECK(cudaStreamSynchronize(dev[d].s));
        }
    };

    long it = 0;
    for (; it < warmup; ++it)
        run_iteration(it);
    double t0 = now_ms();
    for (; it < warmup + iters; ++it)
        run_iteration(it);
    double total_ms = now_ms() - t0;

    std::vector<std::vector<float>> out(ndev, std::vector<float>(N));
    uint64_t hash = 1469598103934665603ull; // FNV-1a over every device's buffer, in order
    for (int d = 0; d < ndev; ++d) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaMemcpy(out[d].data(), dev[d].y, bytes, cudaMemcpyDeviceToHost));
        const unsigned char *u = (const unsigned char *)out[d].data();
        for (size_t i = 0; i < bytes; ++i)
            hash = (hash ^ u[i]) * 1099511628211ull;
    }

    CheckState state = CHECK_SKIPPED;
    if (check) {
        // The same float operations in the same order, on the CPU.
        std::vector<std::vector<float>> y = init;
        std::vector<std::array<std::vector<float>, 2>> in(ndev);
        for (auto &a : in)
            a = {std::vector<float>(N, 0.0f), std::vector<float>(N, 0.0f)};
        for (long i = 0; i < warmup + iters; ++i) {
            int p = (int)(i & 1), q = p ^ 1;
            for (int d = 0; d < ndev; ++d) {
                int pv = (d + ndev - 1) % ndev;
                for (int k = 0; k < n; ++k) {
                    const std::vector<float> &src = peer_read && k == n - 1 ? in[pv][q] : in[d][q];
                    for (int e = 0; e < N; ++e)
                        y[d][e] = accum_ref(y[d][e], src[e], b[d][k], c[d][k]);
                }
            }
            for (int d = 0; d < ndev; ++d)
                in[(d + 1) % ndev][p] = y[d];
        }
        bool ok = true;
        for (int d = 0; d < ndev; ++d)
            ok = compare(fmt("device%d", d).c_str(), out[d], y[d], 0.0) && ok;
        state = ok ? CHECK_PASS : CHECK_FAIL;
    }

    for (int d = 0; d < ndev; ++d) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaStreamDestroy(dev[d].s));
        CHECK(cudaFree(dev[d].y));
        for (auto p : dev[d].in)
            CHECK(cudaFree(p));
    }
    std::string fields = fmt("devices=%d n=%d peer_read=%d peer_pairs=%d peer_copies=%ld hash=%016llx", ndev, n,
                             (int)peer_read, peer_pairs, peer_copies, (unsigned long long)hash);
    return report("multi_device", "eager", iters, fields, state, total_ms);
}
