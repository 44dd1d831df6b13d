// jacobi - an iterative 2-D Jacobi stencil written like a naive application:
// everything runs on the legacy default stream, the two grids ping-pong
// (sweep g reads grid g%2 and writes the other), and every --check-every K
// sweeps a residual ||new - old|| is reduced on the GPU and brought back with
// a blocking cudaMemcpy to decide on convergence (--tol). The repeating unit
// is therefore "K sweeps + 2 reduction kernels + a synchronous copy", whose
// kernel arguments alternate when K is odd. Graph mode captures one such
// block of K sweeps and the reduction (on a created stream, since the legacy
// stream cannot be captured) and launches it on the default stream.
#include <pthread.h>

#include <thread>

#include "common.h"

static const char *USAGE =
    "usage: jacobi [--iters SWEEPS] [--warmup BLOCKS] [--check-every K] [--size S]\n"
    "              [--tol T] [--mode eager|graph] [--check]\n"
    "  SWEEPS must be a multiple of K; warm-up runs BLOCKS blocks of K sweeps;\n"
    "  T > 0 stops the timed loop once the residual drops to T or below.";

static const int RES_BLOCKS = 264;
static const int RES_THREADS = 256;

__global__ void jacobi_sweep(const float *__restrict__ in, float *__restrict__ out, int s)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (x < s - 1 && y < s - 1) {
        size_t i = (size_t)y * s + x;
        out[i] = 0.25f * (((in[i - s] + in[i + s]) + in[i - 1]) + in[i + 1]);
    }
}

// Fixed-shape tree reduction in shared memory: deterministic results.
__device__ void block_reduce_store(double acc, double *dst)
{
    __shared__ double sh[RES_THREADS];
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int w = RES_THREADS / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *dst = sh[0];
}

__global__ void residual_partial(const float *a, const float *b, size_t n, double *partial)
{
    double acc = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double d = (double)a[i] - (double)b[i];
        acc += d * d;
    }
    block_reduce_store(acc, &partial[blockIdx.x]);
}

__global__ void residual_final(const double *partial, int n, double *out)
{
    double acc = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        acc += partial[i];
    block_reduce_store(acc, out);
}

// CPU reference: identical float order, rows split over threads.
struct CpuJacobi {
    int s;
    std::vector<float> grid[2];

    void sweeps(long first, int count)
    {
        unsigned nt = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
        pthread_barrier_t barrier;
        pthread_barrier_init(&barrier, nullptr, nt);
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < nt; ++t)
            threads.emplace_back([&, t] {
                int y0 = 1 + (int)((long)(s - 2) * t / nt);
                int y1 = 1 + (int)((long)(s - 2) * (t + 1) / nt);
                for (long g = first; g < first + count; ++g) {
                    const float *in = grid[g & 1].data();
                    float *out = grid[(g + 1) & 1].data();
                    for (int y = y0; y < y1; ++y)
                        for (int x = 1; x < s - 1; ++x) {
                            size_t i = (size_t)y * s + x;
                            out[i] = 0.25f * (((in[i - s] + in[i + s]) + in[i - 1]) + in[i + 1]);
                        }
                    pthread_barrier_wait(&barrier);
                }
            });
        for (auto &t : threads)
            t.join();
        pthread_barrier_destroy(&barrier);
    }

    double residual() const
    {
        double acc = 0.0;
        for (size_t i = 0; i < grid[0].size(); ++i) {
            double d = (double)grid[0][i] - (double)grid[1][i];
            acc += d * d;
        }
        return sqrt(acc);
    }
};

int main(int argc, char **argv)
{
    Options opt(argc, argv, USAGE);
    long iters = opt.get_int("--iters", 40000, 1);
    long warmup = opt.get_int("--warmup", 2);
    int k = (int)opt.get_int("--check-every", 50, 1);
    int s = (int)opt.get_int("--size", 1024, 3);
    double tol = opt.get_double("--tol", 0.0);
    std::string mode = opt.get_choice("--mode", {"eager", "graph"});
    bool check = opt.flag("--check");
    opt.finish();
    if (iters % k) {
        fprintf(stderr, "--iters (%ld) must be a multiple of --check-every (%d)\n", iters, k);
        return 2;
    }
    bool graph = mode == "graph";
    size_t cells = (size_t)s * s;

    Rng rng(2024);
    std::vector<float> init(cells);
    rng.fill(init, 0.0f, 1.0f);

    float *grid[2];
    double *partial, *res_dev;
    for (auto &g : grid) {
        CHECK(cudaMalloc(&g, cells * sizeof(float)));
        CHECK(cudaMemcpy(g, init.data(), cells * sizeof(float), cudaMemcpyHostToDevice));
    }
    CHECK(cudaMalloc(&partial, RES_BLOCKS * sizeof(double)));
    CHECK(cudaMalloc(&res_dev, sizeof(double)));

    dim3 block(32, 8);
    dim3 blocks((s - 2 + block.x - 1) / block.x, (s - 2 + block.y - 1) / block.y);
    // Block b starts at sweep b*k; its parity selects the buffer roles.
    auto enqueue_block = [&](cudaStream_t st, int parity) {
        for (int i = 0; i < k; ++i) {
            int in = (parity + i) & 1;
            LAUNCH(jacobi_sweep, blocks, block, st, grid[in], grid[in ^ 1], s);
        }
        LAUNCH(residual_partial, RES_BLOCKS, RES_THREADS, st, grid[0], grid[1], cells, partial);
        LAUNCH(residual_final, 1, RES_THREADS, st, partial, RES_BLOCKS, res_dev);
    };

    cudaGraphExec_t exec[2] = {nullptr, nullptr};
    if (graph) {
        cudaStream_t cap;
        CHECK(cudaStreamCreate(&cap));
        for (int p = 0; p < (k % 2 ? 2 : 1); ++p) {
            begin_capture(cap);
            enqueue_block(cap, p);
            exec[p] = end_capture(cap);
        }
        CHECK(cudaStreamDestroy(cap));
    }

    std::vector<double> residuals;
    long graph_launches = 0, memcpys = 0;
    auto run_block = [&](long b) {
        int parity = (int)((b * k) & 1);
        if (graph) {
            CHECK(cudaGraphLaunch(exec[parity], 0));
            ++graph_launches;
        } else {
            enqueue_block(0, parity);
        }
        double sum_sq;
        CHECK(cudaMemcpy(&sum_sq, res_dev, sizeof(double), cudaMemcpyDeviceToHost));
        ++memcpys;
        residuals.push_back(sqrt(sum_sq));
        return residuals.back();
    };

    long b = 0;
    for (; b < warmup; ++b)
        run_block(b);
    CHECK(cudaDeviceSynchronize());
    double t0 = now_ms();
    bool converged = false;
    while (b < warmup + iters / k && !converged)
        converged = run_block(b++) <= tol;
    CHECK(cudaDeviceSynchronize());
    double total_ms = now_ms() - t0;
    long timed_sweeps = (b - warmup) * k;

    std::vector<float> out(cells);
    CHECK(cudaMemcpy(out.data(), grid[(b * k) & 1], cells * sizeof(float),
                     cudaMemcpyDeviceToHost));

    CheckState state = CHECK_SKIPPED;
    if (check) {
        CpuJacobi ref{s, {init, init}};
        std::vector<double> ref_res;
        for (long i = 0; i < b; ++i) {
            ref.sweeps(i * k, k);
            ref_res.push_back(ref.residual());
        }
        std::vector<float> res_f(residuals.begin(), residuals.end());
        bool ok = compare("grid", out, ref.grid[(b * k) & 1], 1e-6);
        ok = compare("residuals", res_f, ref_res, 1e-6) && ok;
        state = ok ? CHECK_PASS : CHECK_FAIL;
    }

    std::string fields = fmt("size=%d check_every=%d memcpys=%ld converged=%d", s, k, memcpys,
                             (int)converged);
    if (graph)
        fields += fmt(" graph_launches=%ld captured_kernels=%lld", graph_launches,
                      g_kernels_captured);
    fields += fmt(" residual=%.6e checksum=%.6e", residuals.back(), checksum(out));

    for (auto e : exec)
        if (e)
            CHECK(cudaGraphExecDestroy(e));
    for (auto g : grid)
        CHECK(cudaFree(g));
    CHECK(cudaFree(partial));
    CHECK(cudaFree(res_dev));
    return report("jacobi", mode.c_str(), timed_sweeps, fields, state, total_ms);
}
