/* C implementations of the test kernels in tests/kernels/kernels.cu, for the fakecuda
 * stand-in. A module's PTX only tells which .entry names exist; this table supplies
 * their bodies and parameter layouts (C/PTX ABI: each parameter at its natural
 * alignment). Keep every body arithmetically identical to the CUDA version. */
#include "fake.h"

#include "../kernels/ag_kernels.h"

#include <sched.h>
#include <string.h>

#define ARG(k, args, i, var) memcpy(&(var), (args) + ag_fake_param_offset((k), (i)), sizeof(var))
#define PTR {sizeof(void *), _Alignof(void *)}
#define F32 {sizeof(float), _Alignof(float)}
#define I32 {sizeof(int), _Alignof(int)}

static unsigned long long limit(unsigned long long nthreads, int n)
{
    return n < 0 ? 0 : (unsigned long long)n < nthreads ? (unsigned long long)n : nthreads;
}

static void k_fill(const struct ag_fake_kdef *k, const unsigned char *a, unsigned long long nt)
{
    float *p;
    float v;
    int n;
    ARG(k, a, 0, p), ARG(k, a, 1, v), ARG(k, a, 2, n);
    for (unsigned long long i = 0; i < limit(nt, n); i++)
        p[i] = v;
}

static void k_axpy(const struct ag_fake_kdef *k, const unsigned char *a, unsigned long long nt)
{
    float *y;
    const float *x;
    float s;
    int n;
    ARG(k, a, 0, y), ARG(k, a, 1, x), ARG(k, a, 2, s), ARG(k, a, 3, n);
    for (unsigned long long i = 0; i < limit(nt, n); i++)
        y[i] += s * x[i];
}

static void k_add(const struct ag_fake_kdef *k, const unsigned char *a, unsigned long long nt)
{
    float *out;
    const float *x, *y;
    int n;
    ARG(k, a, 0, out), ARG(k, a, 1, x), ARG(k, a, 2, y), ARG(k, a, 3, n);
    for (unsigned long long i = 0; i < limit(nt, n); i++)
        out[i] = x[i] + y[i];
}

static void k_scale(const struct ag_fake_kdef *k, const unsigned char *a, unsigned long long nt)
{
    float *p;
    float s;
    int n;
    ARG(k, a, 0, p), ARG(k, a, 1, s), ARG(k, a, 2, n);
    for (unsigned long long i = 0; i < limit(nt, n); i++)
        p[i] *= s;
}

static void k_iota(const struct ag_fake_kdef *k, const unsigned char *a, unsigned long long nt)
{
    int *p;
    int base, n;
    ARG(k, a, 0, p), ARG(k, a, 1, base), ARG(k, a, 2, n);
    for (unsigned long long i = 0; i < limit(nt, n); i++)
        p[i] = base + (int)i;
}

/* Threads of one launch do not see each other's writes here; that holds on a GPU too
 * because out and in are distinct buffers. */
static void k_stencil(const struct ag_fake_kdef *k, const unsigned char *a, unsigned long long nt)
{
    float *out;
    const float *in;
    int n;
    ARG(k, a, 0, out), ARG(k, a, 1, in), ARG(k, a, 2, n);
    unsigned long long m = limit(nt, n);
    for (unsigned long long i = 0; i < m; i++)
        out[i] = (i == 0 || i == (unsigned long long)n - 1) ? in[i] : 0.5f * (in[i - 1] + in[i + 1]);
}

static void k_inc(const struct ag_fake_kdef *k, const unsigned char *a, unsigned long long nt)
{
    int *counter;
    ARG(k, a, 0, counter);
    if (nt > 0)
        counter[0] += 1;
}

/* Spins without the stand-in's lock, as a host function runs: the host must be able to
 * call the driver to open the gate. (Synchronous mode runs it at the call: it would spin
 * forever there, as a host function waiting for its own thread would.) */
static void k_spin_until(const struct ag_fake_kdef *k, const unsigned char *a, unsigned long long nt)
{
    const unsigned *flag;
    unsigned value;
    ARG(k, a, 0, flag), ARG(k, a, 1, value);
    if (!nt)
        return;
    ag_fake_unlock();
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < value)
        sched_yield();
    ag_fake_lock();
}

static void k_mix(const struct ag_fake_kdef *k, const unsigned char *a, unsigned long long nt)
{
    float *out;
    int n;
    char c;
    double d;
    short s;
    long long q;
    ARG(k, a, 0, out), ARG(k, a, 1, n), ARG(k, a, 2, c), ARG(k, a, 3, d), ARG(k, a, 4, s), ARG(k, a, 5, q);
    for (unsigned long long i = 0; i < limit(nt, n); i++)
        out[i] += (float)(c + d + s + q) * 0.001f;
}

static void k_big(const struct ag_fake_kdef *k, const unsigned char *a, unsigned long long nt)
{
    float *out;
    struct ag_big_arg big;
    int n;
    ARG(k, a, 0, out), ARG(k, a, 1, big), ARG(k, a, 2, n);
    for (unsigned long long i = 0; i < limit(nt, n); i++)
        out[i] += big.v[i % AG_BIG_ARG_FLOATS];
}

static void k_sum(const struct ag_fake_kdef *k, const unsigned char *a, unsigned long long nt)
{
    const float *x;
    float *out;
    int n;
    ARG(k, a, 0, x), ARG(k, a, 1, out), ARG(k, a, 2, n);
    if (nt == 0)
        return;
    float acc = 0.0f;
    for (int i = 0; i < n; i++)
        acc += x[i];
    out[0] = acc;
}

/* A write through NULL is an illegal address on a GPU: the context gets the sticky error. */
static void k_fault(const struct ag_fake_kdef *k, const unsigned char *a, unsigned long long nt)
{
    int *p;
    ARG(k, a, 0, p);
    if (nt == 0)
        return;
    if (p)
        p[0] = 1;
    else
        ag_fake_fault(CUDA_ERROR_ILLEGAL_ADDRESS);
}

static const struct ag_fake_kdef table[] = {
    {"ag_fill", 3, {PTR, F32, I32}, k_fill},
    {"ag_axpy", 4, {PTR, PTR, F32, I32}, k_axpy},
    {"ag_add", 4, {PTR, PTR, PTR, I32}, k_add},
    {"ag_scale", 3, {PTR, F32, I32}, k_scale},
    {"ag_iota", 3, {PTR, I32, I32}, k_iota},
    {"ag_stencil", 3, {PTR, PTR, I32}, k_stencil},
    {"ag_inc", 1, {PTR}, k_inc},
    {"ag_spin_until", 2, {PTR, I32}, k_spin_until},
    {"ag_mix", 6,
     {PTR, I32, {sizeof(char), 1}, {sizeof(double), _Alignof(double)}, {sizeof(short), _Alignof(short)},
      {sizeof(long long), _Alignof(long long)}},
     k_mix},
    {"ag_big", 3, {PTR, {sizeof(struct ag_big_arg), _Alignof(struct ag_big_arg)}, I32}, k_big},
    {"ag_sum", 3, {PTR, PTR, I32}, k_sum},
    {"ag_fault", 1, {PTR}, k_fault},
};

const struct ag_fake_kdef *ag_fake_kdef_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

size_t ag_fake_param_offset(const struct ag_fake_kdef *k, unsigned i)
{
    size_t off = 0;
    for (unsigned j = 0;; j++) {
        size_t a = k->param[j].align;
        off = (off + a - 1) / a * a;
        if (j == i)
            return off;
        off += k->param[j].size;
    }
}

size_t ag_fake_args_size(const struct ag_fake_kdef *k)
{
    unsigned last = k->nparams - 1;
    return ag_fake_param_offset(k, last) + k->param[last].size;
}
