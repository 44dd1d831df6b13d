// mlp_cublas - batch-1 MLP inference: per layer one cublasSgemv (y = W x)
// followed by one bias+tanh kernel of our own, --layers layers of --width.
// Every forward pass is the same sequence of library-internal cuBLAS launches
// and our launches, so it shows whether libautograph also catches launches
// made from inside a vendor library (which uses its own launch paths).
// Graph mode captures one forward pass (cublasSetStream on the capturing
// stream) and replays it. kernels_launched counts only our own kernels;
// blas_calls counts the cuBLAS calls made eagerly.
#include <cublas_v2.h>

#include "common.h"

static const char *USAGE =
    "usage: mlp_cublas [--iters N] [--warmup N] [--layers L] [--width W]\n"
    "                  [--mode eager|graph] [--check]";

#define CHECK_BLAS(call)                                                     \
    do {                                                                     \
        cublasStatus_t st_ = (call);                                         \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                  \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,    \
                    #call, cublasGetStatusString(st_));                      \
            exit(2);                                                         \
        }                                                                    \
    } while (0)

__global__ void bias_tanh(float *y, const float *bias, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = tanhf(y[i] + bias[i]);
}

int main(int argc, char **argv)
{
    Options opt(argc, argv, USAGE);
    long iters = opt.get_int("--iters", 5000, 1);
    long warmup = opt.get_int("--warmup", 10);
    int layers = (int)opt.get_int("--layers", 8, 1);
    int width = (int)opt.get_int("--width", 512, 1);
    std::string mode = opt.get_choice("--mode", {"eager", "graph"});
    bool check = opt.flag("--check");
    opt.finish();
    bool graph = mode == "graph";

    // Weights of layer l are stored column-major as W^T (width x width), so
    // y = W x is gemv with CUBLAS_OP_T. Scale keeps activations O(1).
    Rng rng(777);
    float scale = 1.7f / sqrtf((float)width);
    std::vector<float> w((size_t)layers * width * width), bias((size_t)layers * width), x0(width);
    rng.fill(w, -scale, scale);
    rng.fill(bias, -0.1f, 0.1f);
    rng.fill(x0, -1.0f, 1.0f);

    float *d_w, *d_bias, *d_act;  // d_act holds layers+1 activation vectors
    CHECK(cudaMalloc(&d_w, w.size() * sizeof(float)));
    CHECK(cudaMalloc(&d_bias, bias.size() * sizeof(float)));
    CHECK(cudaMalloc(&d_act, (size_t)(layers + 1) * width * sizeof(float)));
    CHECK(cudaMemcpy(d_w, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_bias, bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_act, x0.data(), width * sizeof(float), cudaMemcpyHostToDevice));

    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    cublasHandle_t handle;
    CHECK_BLAS(cublasCreate(&handle));
    CHECK_BLAS(cublasSetStream(handle, stream));

    long blas_calls = 0, captured_blas_calls = 0;
    const float one = 1.0f, zero = 0.0f;
    auto forward = [&]() {
        for (int l = 0; l < layers; ++l) {
            const float *in = d_act + (size_t)l * width;
            float *out = d_act + (size_t)(l + 1) * width;
            CHECK_BLAS(cublasSgemv(handle, CUBLAS_OP_T, width, width, &one,
                                   d_w + (size_t)l * width * width, width, in, 1, &zero, out, 1));
            ++(g_capturing ? captured_blas_calls : blas_calls);
            LAUNCH(bias_tanh, (width + 255) / 256, 256, stream, out, d_bias + (size_t)l * width,
                   width);
        }
    };

    cudaGraphExec_t exec = nullptr;
    if (graph) {
        begin_capture(stream);
        forward();
        exec = end_capture(stream);
    }

    long graph_launches = 0;
    auto run_iteration = [&]() {
        if (graph) {
            CHECK(cudaGraphLaunch(exec, stream));
            ++graph_launches;
        } else {
            forward();
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

    std::vector<float> out(width);
    CHECK(cudaMemcpy(out.data(), d_act + (size_t)layers * width, width * sizeof(float),
                     cudaMemcpyDeviceToHost));

    CheckState state = CHECK_SKIPPED;
    if (check) {
        std::vector<double> act(x0.begin(), x0.end()), next(width);
        for (int l = 0; l < layers; ++l) {
            const float *wl = w.data() + (size_t)l * width * width;
            for (int j = 0; j < width; ++j) {
                double acc = 0.0;
                for (int i = 0; i < width; ++i)
                    acc += (double)wl[(size_t)j * width + i] * act[i];
                next[j] = tanh(acc + bias[(size_t)l * width + j]);
            }
            act.swap(next);
        }
        state = compare("output", out, act, 1e-4) ? CHECK_PASS : CHECK_FAIL;
    }

    std::string fields = fmt("layers=%d width=%d blas_calls=%ld", layers, width, blas_calls);
    if (graph)
        fields += fmt(" graph_launches=%ld captured_kernels=%lld captured_blas_calls=%ld",
                      graph_launches, g_kernels_captured, captured_blas_calls);
    fields += fmt(" checksum=%.6e", checksum(out));

    if (exec)
        CHECK(cudaGraphExecDestroy(exec));
    CHECK_BLAS(cublasDestroy(handle));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(d_w));
    CHECK(cudaFree(d_bias));
    CHECK(cudaFree(d_act));
    return report("mlp_cublas", mode.c_str(), iters, fields, state, total_ms);
}
