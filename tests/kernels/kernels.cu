/* Test kernels for libautograph. nvcc compiles this file to PTX; on a GPU the PTX is
 * loaded as is, and in CI the fakecuda stand-in reads the .entry names from the same
 * PTX and runs C implementations of these kernels (tests/fakecuda/kernels.c), so the
 * names, parameter lists and arithmetic here and there must stay identical. */
#include "ag_kernels.h"

extern "C" __global__ void ag_fill(float *p, float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v;
}

extern "C" __global__ void ag_axpy(float *y, const float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += a * x[i];
}

extern "C" __global__ void ag_add(float *out, const float *a, const float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a[i] + b[i];
}

extern "C" __global__ void ag_scale(float *p, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] *= s;
}

extern "C" __global__ void ag_iota(int *p, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = base + i;
}

extern "C" __global__ void ag_stencil(float *out, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (i == 0 || i == n - 1)
        out[i] = in[i];
    else
        out[i] = 0.5f * (in[i - 1] + in[i + 1]);
}

extern "C" __global__ void ag_inc(int *counter)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        counter[0] += 1;
}

/* A gate on the GPU: one thread spins until the host has written at least value into
 * mapped page-locked memory. Unlike a stream memory wait it holds no hardware queue, so
 * other streams' work is not stuck behind it (tests/progs/adversary.c, pattern 3). */
extern "C" __global__ void ag_spin_until(const volatile unsigned *flag, unsigned value)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        while (*flag < value)
            __nanosleep(1000);
}

extern "C" __global__ void ag_mix(float *out, int n, char c, double d, short s, long long k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] += (float)(c + d + s + k) * 0.001f;
}

extern "C" __global__ void ag_big(float *out, struct ag_big_arg a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] += a.v[i % AG_BIG_ARG_FLOATS];
}

/* One thread sums serially so that the result is bit-identical to the C version. */
extern "C" __global__ void ag_sum(const float *x, float *out, int n)
{
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    float acc = 0.0f;
    for (int i = 0; i < n; i++)
        acc += x[i];
    out[0] = acc;
}

/* Writes through p: given NULL it makes the device fault (an illegal address), which
 * the context keeps as its sticky error; the stand-in models exactly that case. */
extern "C" __global__ void ag_fault(int *p)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        p[0] = 1;
}
