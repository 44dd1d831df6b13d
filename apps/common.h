// common.h - helpers shared by the libautograph test programs in apps/:
// CUDA error checking, a launch counter, option parsing, deterministic
// pseudo-random data, host timing, result comparison and the two output lines
// (`result:` and `timing:`) that scripts/bench parses and compares.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                          \
    do {                                                                     \
        cudaError_t err_ = (call);                                           \
        if (err_ != cudaSuccess) {                                           \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,    \
                    #call, cudaGetErrorString(err_));                        \
            exit(2);                                                         \
        }                                                                    \
    } while (0)

// Kernel launches submitted eagerly vs. recorded into a stream capture.
static long long g_kernels_launched = 0;
static long long g_kernels_captured = 0;
static bool g_capturing = false;

// Launch a kernel, check the launch and count it.
#define LAUNCH(kernel, grid, block, stream, ...)                             \
    do {                                                                     \
        kernel<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__);               \
        CHECK(cudaGetLastError());                                           \
        if (g_capturing)                                                     \
            ++g_kernels_captured;                                            \
        else                                                                 \
            ++g_kernels_launched;                                            \
    } while (0)

static inline void begin_capture(cudaStream_t s)
{
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    g_capturing = true;
}

static inline cudaGraphExec_t end_capture(cudaStream_t s)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamEndCapture(s, &graph));
    g_capturing = false;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphDestroy(graph));
    return exec;
}

// Minimal command-line parser: every argument must be consumed by a get_*
// call before finish(), otherwise the usage text is printed and we exit 2.
class Options {
public:
    Options(int argc, char **argv, const char *usage)
        : args_(argv + 1, argv + argc), used_(args_.size(), false), usage_(usage)
    {
        if (flag("--help") || flag("-h")) {
            printf("%s\n", usage_);
            exit(0);
        }
    }

    bool flag(const char *name)
    {
        for (size_t i = 0; i < args_.size(); ++i)
            if (!used_[i] && args_[i] == name) {
                used_[i] = true;
                return true;
            }
        return false;
    }

    long get_int(const char *name, long def, long min_value = 0)
    {
        const char *v = value(name);
        if (!v)
            return def;
        char *end;
        long x = strtol(v, &end, 10);
        if (*end || x < min_value)
            fail(name, v);
        return x;
    }

    double get_double(const char *name, double def)
    {
        const char *v = value(name);
        if (!v)
            return def;
        char *end;
        double x = strtod(v, &end);
        if (*end)
            fail(name, v);
        return x;
    }

    // Returns one of the allowed values (the first is the default).
    std::string get_choice(const char *name, std::vector<std::string> allowed)
    {
        const char *v = value(name);
        if (!v)
            return allowed[0];
        for (const auto &a : allowed)
            if (a == v)
                return a;
        fail(name, v);
        return "";
    }

    void finish() const
    {
        for (size_t i = 0; i < args_.size(); ++i)
            if (!used_[i]) {
                fprintf(stderr, "unknown argument '%s'\n%s\n", args_[i].c_str(), usage_);
                exit(2);
            }
    }

private:
    const char *value(const char *name)
    {
        for (size_t i = 0; i < args_.size(); ++i)
            if (!used_[i] && args_[i] == name) {
                if (i + 1 >= args_.size())
                    fail(name, "(missing)");
                used_[i] = used_[i + 1] = true;
                return args_[i + 1].c_str();
            }
        return nullptr;
    }

    [[noreturn]] void fail(const char *name, const char *v) const
    {
        fprintf(stderr, "bad value for %s: %s\n%s\n", name, v, usage_);
        exit(2);
    }

    std::vector<std::string> args_;
    std::vector<bool> used_;
    const char *usage_;
};

// Deterministic pseudo-random numbers (splitmix64).
class Rng {
public:
    explicit Rng(uint64_t seed) : s_(seed) {}
    uint64_t next()
    {
        uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    float uniform(float lo, float hi)
    {
        return lo + (hi - lo) * (float)((next() >> 40) * (1.0 / 16777216.0));
    }
    void fill(std::vector<float> &v, float lo, float hi)
    {
        for (auto &x : v)
            x = uniform(lo, hi);
    }

private:
    uint64_t s_;
};

static inline double now_ms()
{
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

static inline double checksum(const std::vector<float> &v)
{
    double s = 0.0;
    for (float x : v)
        s += x;
    return s;
}

// max|got - ref| / max|ref| <= tol; details go to stderr.
template <typename T>
static bool compare(const char *what, const std::vector<float> &got, const std::vector<T> &ref,
                    double tol)
{
    double max_err = 0.0, max_ref = 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
        max_err = fmax(max_err, fabs((double)got[i] - (double)ref[i]));
        max_ref = fmax(max_ref, fabs((double)ref[i]));
    }
    double rel = max_ref > 0 ? max_err / max_ref : max_err;
    bool ok = rel <= tol;
    fprintf(stderr, "check %s: max_rel_err=%.3e tol=%.1e %s\n", what, rel, tol, ok ? "ok" : "FAIL");
    return ok;
}

enum CheckState { CHECK_SKIPPED, CHECK_PASS, CHECK_FAIL };

// Prints the two final lines and returns the process exit code.
// `fields` holds the program's deterministic fields ("checksum=... ...").
static inline int report(const char *app, const char *mode, long iters, const std::string &fields,
                         CheckState check, double total_ms)
{
    static const char *names[] = {"skipped", "pass", "FAIL"};
    printf("result: app=%s mode=%s iters=%ld kernels_launched=%lld %s check=%s\n", app, mode,
           iters, g_kernels_launched, fields.c_str(), names[check]);
    // time_per_iter_us repeats us_per_iter under the name issue 9 gives it.
    double us = iters > 0 ? total_ms * 1e3 / iters : 0.0;
    printf("timing: us_per_iter=%.3f total_ms=%.3f time_per_iter_us=%.3f\n", us, total_ms, us);
    fflush(stdout);
    return check == CHECK_FAIL ? 1 : 0;
}

// printf into a std::string.
template <typename... A>
static std::string fmt(const char *f, A... a)
{
    char buf[512];
    snprintf(buf, sizeof buf, f, a...);
    return buf;
}
