/* Differential fuzzer for libautograph: `fuzz SEED [--describe]` builds a random but
 * deterministic, race-free CUDA driver program from SEED and runs it. Run it without and
 * with the library: the output (one hash line per buffer and per host log) must be the
 * same. tests/fuzz/run-seeds does that for many seeds (make test runs some, make
 * fuzz-long many more).
 *
 * The program: 1 or 2 threads; each thread has 1–3 streams (legacy, created blocking,
 * created non-blocking) and, per stream, device buffers, a pinned and a pageable host
 * buffer, a timing and a non-timing event, and a host log. A thread runs a loop over a
 * schedule of a few random "templates" (lists of operations: kernels from the test set
 * with random arguments and pointers, memsets, async copies DtoD/HtoD/DtoH from pinned
 * and pageable memory and through cuMemcpyAsync, event records, stream waits, host
 * functions appending to the log, barrier-class calls, syncs, host writes of pageable
 * memory), with mutations (argument, pointer, grid, skipped op) injected from or at
 * random iterations, so that there are repeats and near-repeats.
 *
 * Race-freedom (the program must mean the same on a GPU): every stream touches only its
 * own buffers, except hand-off buffers X[a][b], written by stream a and read by stream b
 * under a two-way event handshake; host code reads pinned memory only after a sync of
 * its stream and writes only pageable memory (pageable copies are synchronous for the
 * host); host functions read only their stream's pinned buffer. Two threads share
 * nothing but, possibly, the legacy stream. Every CUresult is checked (exit 2).
 *
 * With AG_FUZZ_PATTERNS=1 the programs also contain the shapes of issue 8 (same seeds,
 * other programs; make test does not set it): a decoy record of a hand-off's event on a
 * third stream before the sender's record (the receiver must wait for the sender's);
 * copies from a registered host buffer that the host unregisters and registers again
 * mid-run (its contents never change, so pinned or pageable reads the same); device
 * buffers freed and allocated again mid-run; created streams destroyed and created
 * again mid-run. Each of these synchronizes the context first, as a correct program
 * must before it frees or unregisters what work may still use. */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/ag_kernels.h"
#include "../progs/check.h"

/* ---- random numbers ------------------------------------------------------------- */

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int pick(uint64_t *s, int n) { return (int)(next(s) % (uint64_t)n); }
static int chance(uint64_t *s, int percent) { return pick(s, 100) < percent; }

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull + (h >> 29); }

static uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* ---- the generated program ------------------------------------------------------- */

enum kern { K_FILL, K_AXPY, K_ADD, K_SCALE, K_IOTA, K_STENCIL, K_INC, K_MIX, K_BIG, K_SUM, NKERN };
static const char *const kname[NKERN] = {"ag_fill",    "ag_axpy", "ag_add", "ag_scale", "ag_iota",
                                         "ag_stencil", "ag_inc",  "ag_mix", "ag_big",   "ag_sum"};

enum kind {
    O_KERNEL,
    O_MEMSET32,
    O_MEMSET8,
    O_DTOD,
    O_HTOD_PINNED,
    O_DTOH_PINNED,
    O_HTOD_PAGEABLE,
    O_DTOH_PAGEABLE, /* the host folds the pageable buffer into its log right after */
    O_UNIFIED,       /* cuMemcpyAsync between pinned host and device, either way */
    O_RECORD,
    O_WAIT,
    O_HANDOFF_SEND,
    O_HANDOFF_RECV,
    O_HOSTFN,
    O_BARRIER,
    O_SYNC_STREAM, /* the host then folds the stream's pinned buffer into its log */
    O_SYNC_CTX,
    O_SYNC_EVENT,
    O_QUERY,
    O_HOST_WRITE, /* the host writes the pageable buffer */
    /* AG_FUZZ_PATTERNS=1 only */
    O_REG_TOGGLE, /* context sync, then the registered buffer is unregistered or registered */
    O_HTOD_REG,   /* copy from the (maybe no longer) registered host buffer */
    O_REALLOC,    /* context sync, device buffer c freed, allocated and set again */
    O_RESTREAM,   /* context sync, a created stream destroyed and created again */
    O_RENEW_EVENT, /* the plain event destroyed, its record maybe pending (a JAX step), and
                    * created again, with timing if o.timing */
};

static int patterns;

#define NDEV 3      /* float device buffers per stream; one int buffer besides */
#define MAXS 3      /* streams per thread */
#define MAXOPS 16   /* per template */
#define MAXTPL 4
#define MAXMUT 6

struct op {
    int kind, s, k, a, b, c; /* stream, kernel, buffer indices (NDEV = the int buffer) */
    int grid_extra, half, other, timing, unified_up, decoy;
    float f;
    int i;
};

struct tpl {
    int n;
    struct op op[MAXOPS];
};

struct mutation {
    int from, to, tpl, opi, what; /* what: 0 scalar, 1 pointer, 2 grid, 3 skip, 4 half */
};

struct prog {
    int nstreams, kinds[MAXS]; /* 0 legacy, 1 blocking, 2 non-blocking */
    int n, block, iters, ntpl, period, sched[3], sync_pct, nmut;
    struct tpl tpl[MAXTPL];
    struct mutation mut[MAXMUT];
};

static struct op random_op(uint64_t *r, const struct prog *p)
{
    struct op o = {0};
    o.s = pick(r, p->nstreams);
    o.a = pick(r, NDEV), o.b = pick(r, NDEV), o.c = pick(r, NDEV);
    o.f = (float)(pick(r, 16) + 1) / 16.0f;
    o.i = pick(r, 1000);
    o.timing = chance(r, 30);
    o.other = pick(r, p->nstreams);
    o.half = chance(r, 20);
    o.grid_extra = chance(r, 10);
    o.unified_up = chance(r, 50);
    int w = pick(r, 100);
    if (w < 45) {
        o.kind = O_KERNEL;
        o.k = pick(r, NKERN);
        if (o.k == K_STENCIL || o.k == K_SUM)
            while (o.b == o.a)
                o.b = pick(r, NDEV);
    } else if (w < 49)
        o.kind = O_MEMSET32;
    else if (w < 52)
        o.kind = O_MEMSET8;
    else if (w < 58) {
        o.kind = O_DTOD;
        while (o.b == o.a)
            o.b = pick(r, NDEV);
    } else if (w < 62)
        o.kind = O_HTOD_PINNED;
    else if (w < 66)
        o.kind = O_DTOH_PINNED;
    else if (w < 68)
        o.kind = O_HTOD_PAGEABLE;
    else if (w < 70)
        o.kind = O_DTOH_PAGEABLE;
    else if (w < 73)
        o.kind = O_UNIFIED;
    else if (w < 78)
        o.kind = O_RECORD;
    else if (w < 81)
        o.kind = O_WAIT;
    else if (w < 86)
        o.kind = p->nstreams > 1 ? O_HANDOFF_SEND : O_RECORD;
    else if (w < 91)
        o.kind = O_HOSTFN;
    else if (w < 93)
        o.kind = O_BARRIER;
    else if (w < 95)
        o.kind = O_SYNC_STREAM;
    else if (w < 96)
        o.kind = O_SYNC_CTX;
    else if (w < 97)
        o.kind = O_SYNC_EVENT;
    else if (w < 98)
        o.kind = O_QUERY;
    else
        o.kind = O_HOST_WRITE;
    return o;
}

static void generate(struct prog *p, uint64_t seed)
{
    uint64_t r = seed * 0x2545f4914f6cdd1dull + 17;
    memset(p, 0, sizeof *p);
    p->nstreams = 1 + pick(&r, MAXS);
    int legacy_used = 0;
    for (int s = 0; s < p->nstreams; s++) {
        p->kinds[s] = pick(&r, 3);
        if (p->kinds[s] == 0 && legacy_used)
            p->kinds[s] = 1;
        legacy_used |= p->kinds[s] == 0;
    }
    static const int ns[] = {64, 100, 256, 300};
    p->n = ns[pick(&r, 4)];
    p->block = chance(&r, 50) ? 64 : 128;
    p->iters = 10 + pick(&r, 90);
    p->ntpl = 1 + pick(&r, MAXTPL);
    p->period = 1 + pick(&r, 3);
    for (int i = 0; i < p->period; i++)
        p->sched[i] = pick(&r, p->ntpl);
    static const int sync_pcts[] = {0, 0, 30, 100, 100};
    p->sync_pct = sync_pcts[pick(&r, 5)];
    for (int t = 0; t < p->ntpl; t++) {
        struct tpl *tp = &p->tpl[t];
        int want = 2 + pick(&r, MAXOPS - 3);
        while (tp->n < want) {
            struct op o = random_op(&r, p);
            if (o.kind == O_HANDOFF_SEND) {
                while (o.other == o.s)
                    o.other = pick(&r, p->nstreams);
                tp->op[tp->n++] = o;
                struct op recv = o;
                recv.kind = O_HANDOFF_RECV;
                tp->op[tp->n++] = recv;
            } else {
                tp->op[tp->n++] = o;
            }
        }
    }
    for (int t = 0; patterns && t < p->ntpl; t++) {
        struct tpl *tp = &p->tpl[t];
        for (int j = 0; j < tp->n; j++)
            tp->op[j].decoy = tp->op[j].kind == O_HANDOFF_SEND && chance(&r, 50);
        while (tp->n < MAXOPS && chance(&r, 40)) {
            static const int extra[] = {O_REG_TOGGLE, O_HTOD_REG,  O_HTOD_REG,
                                        O_REALLOC,    O_RESTREAM, O_RENEW_EVENT};
            struct op o = random_op(&r, p);
            o.kind = extra[pick(&r, 6)];
            int at = pick(&r, tp->n + 1);
            memmove(&tp->op[at + 1], &tp->op[at], (size_t)(tp->n - at) * sizeof tp->op[0]);
            tp->op[at] = o;
            tp->n++;
        }
    }
    p->nmut = pick(&r, MAXMUT + 1);
    for (int m = 0; m < p->nmut; m++) {
        struct mutation *mu = &p->mut[m];
        mu->from = pick(&r, p->iters);
        mu->to = chance(&r, 50) ? mu->from + pick(&r, 3) : 1 << 30;
        mu->tpl = chance(&r, 80) ? p->sched[pick(&r, p->period)] : pick(&r, p->ntpl);
        mu->opi = pick(&r, p->tpl[mu->tpl].n);
        mu->what = pick(&r, 5);
    }
}

/* ---- running it ------------------------------------------------------------------- */

static CUcontext ctx;
static CUfunction fn[NKERN];
static struct prog prog_of[2];

struct hostlog {
    uint64_t h;
    long n;
};

struct stream_state {
    CUstream s;
    CUdeviceptr d[NDEV + 1]; /* NDEV float buffers, then the int buffer */
    float *pinned, *pageable, *reg; /* reg: registered while reg_on (AG_FUZZ_PATTERNS) */
    int reg_on;
    CUevent ev_plain, ev_timing;
    struct hostlog fnlog, hostlog; /* written by host functions / by the host thread */
    int recorded_plain, recorded_timing;
};

struct hostfn_arg {
    struct stream_state *st;
    int tag, n;
};

struct thread_state {
    int id;
    const struct prog *p;
    struct stream_state st[MAXS];
    CUdeviceptr x[MAXS][MAXS]; /* hand-off buffers */
    CUevent go[MAXS][MAXS], back[MAXS][MAXS];
    struct hostfn_arg hostfn_args[MAXTPL][MAXOPS];
    char out[4096];
};

static void CUDA_CB hostfn(void *arg)
{
    struct hostfn_arg *a = arg;
    struct stream_state *st = a->st;
    uint32_t first, last;
    memcpy(&first, &st->pinned[0], 4);
    memcpy(&last, &st->pinned[a->n - 1], 4);
    st->fnlog.h = mix(mix(mix(st->fnlog.h, (uint64_t)a->tag), first), last);
    st->fnlog.n++;
}

static void fold_host(struct hostlog *l, const float *buf, int n)
{
    l->h = mix(l->h, hash_bytes(buf, (size_t)n * 4));
    l->n++;
}

static void apply_mutations(const struct prog *p, int it, int t, int j, struct op *o, int *skip)
{
    for (int m = 0; m < p->nmut; m++) {
        const struct mutation *mu = &p->mut[m];
        if (mu->tpl != t || mu->opi != j || it < mu->from || it > mu->to)
            continue;
        switch (mu->what) {
        case 0:
            o->f = o->f * 0.5f + 0.03125f;
            o->i += 1 + it % 3;
            break;
        case 1:
            if (o->kind == O_KERNEL || o->kind == O_MEMSET32 || o->kind == O_MEMSET8 ||
                o->kind == O_HTOD_PINNED || o->kind == O_HTOD_PAGEABLE) {
                o->a = (o->a + 1) % NDEV;
                if ((o->kind == O_KERNEL && (o->k == K_STENCIL || o->k == K_SUM)) && o->b == o->a)
                    o->b = (o->b + 1) % NDEV;
            }
            break;
        case 2:
            o->grid_extra ^= 1;
            break;
        case 3:
            if (o->kind == O_KERNEL || o->kind == O_MEMSET32 || o->kind == O_DTOD)
                *skip = 1;
            break;
        default:
            o->half ^= 1;
        }
    }
}

static void launch(struct thread_state *ts, const struct op *o, struct stream_state *st)
{
    const struct prog *p = ts->p;
    int n = o->half ? p->n / 2 : p->n;
    unsigned grid = (unsigned)((p->n + p->block - 1) / p->block + o->grid_extra);
    unsigned block = (unsigned)p->block;
    CUdeviceptr A = st->d[o->a], B = st->d[o->b], C = st->d[o->c], I = st->d[NDEV];
    float f = o->f;
    int base = o->i;
    void *args[8];
    char ch = (char)(o->i & 63);
    double dd = o->f * 3.0;
    short sh = (short)(o->i - 500);
    long long ll = (long long)o->i * 1000003ll;
    struct ag_big_arg big;
    switch (o->k) {
    case K_FILL: args[0] = &A, args[1] = &f, args[2] = &n; break;
    case K_AXPY: args[0] = &A, args[1] = &B, args[2] = &f, args[3] = &n; break;
    case K_ADD: args[0] = &A, args[1] = &B, args[2] = &C, args[3] = &n; break;
    case K_SCALE: args[0] = &A, args[1] = &f, args[2] = &n; break;
    case K_IOTA: args[0] = &I, args[1] = &base, args[2] = &n; break;
    case K_STENCIL: args[0] = &A, args[1] = &B, args[2] = &n; break;
    case K_INC: args[0] = &I; grid = 1; break;
    case K_MIX:
        args[0] = &A, args[1] = &n, args[2] = &ch, args[3] = &dd, args[4] = &sh, args[5] = &ll;
        break;
    case K_BIG:
        for (int i = 0; i < AG_BIG_ARG_FLOATS; i++)
            big.v[i] = f * (float)(i % 7) - 0.5f;
        args[0] = &A, args[1] = &big, args[2] = &n;
        break;
    default: /* K_SUM: out = A, x = B */
        args[0] = &B, args[1] = &A, args[2] = &n;
        grid = 1 + (unsigned)o->grid_extra;
    }
    CHECK(cuLaunchKernel(fn[o->k], grid, 1, 1, block, 1, 1, 0, st->s, args, NULL));
}

static void run_op(struct thread_state *ts, int t, int j, const struct op *o)
{
    const struct prog *p = ts->p;
    struct stream_state *st = &ts->st[o->s];
    size_t bytes = (size_t)(o->half ? p->n / 2 : p->n) * 4;
    switch (o->kind) {
    case O_KERNEL:
        launch(ts, o, st);
        break;
    case O_MEMSET32: {
        float v = o->f;
        unsigned bits;
        memcpy(&bits, &v, 4);
        CHECK(cuMemsetD32Async(st->d[o->a], bits, bytes / 4, st->s));
        break;
    }
    case O_MEMSET8:
        CHECK(cuMemsetD8Async(st->d[o->a], (unsigned char)o->i, bytes, st->s));
        break;
    case O_DTOD:
        CHECK(cuMemcpyDtoDAsync(st->d[o->a], st->d[o->b], bytes, st->s));
        break;
    case O_HTOD_PINNED:
        CHECK(cuMemcpyHtoDAsync(st->d[o->a], st->pinned, bytes, st->s));
        break;
    case O_DTOH_PINNED:
        CHECK(cuMemcpyDtoHAsync(st->pinned, st->d[o->a], bytes, st->s));
        break;
    case O_HTOD_PAGEABLE:
        CHECK(cuMemcpyHtoDAsync(st->d[o->a], st->pageable, bytes, st->s));
        break;
    case O_DTOH_PAGEABLE:
        CHECK(cuMemcpyDtoHAsync(st->pageable, st->d[o->a], bytes, st->s));
        fold_host(&st->hostlog, st->pageable, p->n); /* complete on return: pageable */
        break;
    case O_UNIFIED:
        if (o->unified_up)
            CHECK(cuMemcpyAsync(st->d[o->a], (CUdeviceptr)(uintptr_t)st->pinned, bytes, st->s));
        else
            CHECK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)st->pinned, st->d[o->a], bytes, st->s));
        break;
    case O_RECORD:
        if (o->timing)
            CHECK(cuEventRecord(st->ev_timing, st->s)), st->recorded_timing = 1;
        else
            CHECK(cuEventRecord(st->ev_plain, st->s)), st->recorded_plain = 1;
        break;
    case O_WAIT: {
        struct stream_state *from = &ts->st[o->other];
        CHECK(cuStreamWaitEvent(st->s, o->timing ? from->ev_timing : from->ev_plain, 0));
        break;
    }
    case O_HANDOFF_SEND: /* stream s hands buffer a to stream other */
        CHECK(cuStreamWaitEvent(st->s, ts->back[o->s][o->other], 0));
        if (o->decoy && o->c % p->nstreams != o->s) /* an earlier record the receiver must not use */
            CHECK(cuEventRecord(ts->go[o->s][o->other], ts->st[o->c % p->nstreams].s));
        CHECK(cuMemcpyDtoDAsync(ts->x[o->s][o->other], st->d[o->a], (size_t)p->n * 4, st->s));
        CHECK(cuEventRecord(ts->go[o->s][o->other], st->s));
        break;
    case O_HANDOFF_RECV: {
        struct stream_state *to = &ts->st[o->other];
        int n = p->n;
        float f = o->f;
        CUdeviceptr y = to->d[o->b], x = ts->x[o->s][o->other];
        void *args[] = {&y, &x, &f, &n};
        CHECK(cuStreamWaitEvent(to->s, ts->go[o->s][o->other], 0));
        CHECK(cuLaunchKernel(fn[K_AXPY], (unsigned)((n + 63) / 64), 1, 1, 64, 1, 1, 0, to->s, args, NULL));
        CHECK(cuEventRecord(ts->back[o->s][o->other], to->s));
        break;
    }
    case O_HOSTFN:
        CHECK(cuLaunchHostFunc(st->s, hostfn, &ts->hostfn_args[t][j]));
        break;
    case O_BARRIER:
        if (o->i & 1) {
            CUdeviceptr tmp;
            CHECK(cuMemAlloc(&tmp, 512));
            CHECK(cuMemFree(tmp));
        } else {
            CHECK(cuFuncSetAttribute(fn[o->k % NKERN], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0));
        }
        break;
    case O_SYNC_STREAM:
        CHECK(cuStreamSynchronize(st->s));
        fold_host(&st->hostlog, st->pinned, p->n);
        break;
    case O_SYNC_CTX:
        CHECK(cuCtxSynchronize());
        for (int s = 0; s < p->nstreams; s++)
            fold_host(&ts->st[s].hostlog, ts->st[s].pinned, p->n);
        break;
    case O_SYNC_EVENT:
        if (st->recorded_plain) /* later work may still run: no host read after it */
            CHECK(cuEventSynchronize(st->ev_plain));
        break;
    case O_QUERY: {
        CUresult rc = o->timing ? cuStreamQuery(st->s) : cuEventQuery(st->ev_timing);
        if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_READY)
            CHECK(rc);
        break;
    }
    case O_REG_TOGGLE:
        CHECK(cuCtxSynchronize());
        if (st->reg_on)
            CHECK(cuMemHostUnregister(st->reg));
        else
            CHECK(cuMemHostRegister(st->reg, (size_t)p->n * 4, 0));
        st->reg_on = !st->reg_on;
        break;
    case O_HTOD_REG:
        CHECK(cuMemcpyHtoDAsync(st->d[o->a], st->reg, bytes, st->s));
        break;
    case O_REALLOC:
        CHECK(cuCtxSynchronize());
        CHECK(cuMemFree(st->d[o->c]));
        CHECK(cuMemAlloc(&st->d[o->c], (size_t)p->n * 4));
        CHECK(cuMemsetD32(st->d[o->c], 0x3f000000u + (unsigned)o->c, (size_t)p->n));
        break;
    case O_RESTREAM:
        if (p->kinds[o->s] != 0) {
            CHECK(cuCtxSynchronize());
            CHECK(cuStreamDestroy(st->s));
            CHECK(cuStreamCreate(&st->s, p->kinds[o->s] == 2 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT));
        }
        break;
    case O_RENEW_EVENT:
        CHECK(cuEventDestroy(st->ev_plain));
        CHECK(cuEventCreate(&st->ev_plain, o->timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING));
        st->recorded_plain = 0;
        break;
    default: /* O_HOST_WRITE */
        for (int i = 0; i < p->n; i++)
            st->pageable[i] = (float)((o->i + i) % 97) * 0.125f;
    }
}

static void *run_thread(void *arg)
{
    struct thread_state *ts = arg;
    const struct prog *p = ts->p;
    size_t bytes = (size_t)p->n * 4;
    CHECK(cuCtxSetCurrent(ctx));
    for (int s = 0; s < p->nstreams; s++) {
        struct stream_state *st = &ts->st[s];
        if (p->kinds[s] == 0)
            st->s = NULL;
        else
            CHECK(cuStreamCreate(&st->s, p->kinds[s] == 2 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT));
        for (int b = 0; b <= NDEV; b++) {
            CHECK(cuMemAlloc(&st->d[b], bytes));
            CHECK(cuMemsetD32(st->d[b], 0x3f800000u + (unsigned)(b + 8 * s), (size_t)p->n));
        }
        void *pinned;
        CHECK(cuMemAllocHost(&pinned, bytes));
        st->pinned = pinned;
        st->pageable = malloc(bytes);
        st->reg = malloc(bytes);
        if (!st->pageable || !st->reg)
            exit(2);
        for (int i = 0; i < p->n; i++)
            st->pinned[i] = (float)i * 0.25f, st->pageable[i] = (float)(p->n - i), st->reg[i] = (float)(i % 13);
        if (patterns)
            CHECK(cuMemHostRegister(st->reg, bytes, 0)), st->reg_on = 1;
        CHECK(cuEventCreate(&st->ev_plain, CU_EVENT_DISABLE_TIMING));
        CHECK(cuEventCreate(&st->ev_timing, CU_EVENT_DEFAULT));
        for (int o = 0; o < p->nstreams; o++) {
            CHECK(cuMemAlloc(&ts->x[s][o], bytes));
            CHECK(cuEventCreate(&ts->go[s][o], CU_EVENT_DISABLE_TIMING));
            CHECK(cuEventCreate(&ts->back[s][o], CU_EVENT_DISABLE_TIMING));
        }
    }
    for (int t = 0; t < p->ntpl; t++)
        for (int j = 0; j < p->tpl[t].n; j++)
            ts->hostfn_args[t][j] = (struct hostfn_arg){&ts->st[p->tpl[t].op[j].s], t * 100 + j, p->n};
    CHECK(cuCtxSynchronize());

    uint64_t r = 0x51ed270b27u + (uint64_t)ts->id;
    for (int it = 0; it < p->iters; it++) {
        int t = p->sched[it % p->period];
        for (int j = 0; j < p->tpl[t].n; j++) {
            struct op o = p->tpl[t].op[j];
            int skip = 0;
            apply_mutations(p, it, t, j, &o, &skip);
            if (!skip)
                run_op(ts, t, j, &o);
        }
        if (p->sync_pct && pick(&r, 100) < p->sync_pct) {
            int s = pick(&r, p->nstreams);
            CHECK(cuStreamSynchronize(ts->st[s].s));
            fold_host(&ts->st[s].hostlog, ts->st[s].pinned, p->n);
        }
    }

    size_t len = 0;
    float *h = malloc(bytes);
    if (!h)
        exit(2);
    for (int s = 0; s < p->nstreams; s++) {
        struct stream_state *st = &ts->st[s];
        CHECK(cuStreamSynchronize(st->s));
        for (int b = 0; b <= NDEV; b++) {
            CHECK(cuMemcpyDtoH(h, st->d[b], bytes));
            len += (size_t)snprintf(ts->out + len, sizeof ts->out - len, "t%d s%d d%d %016llx\n", ts->id, s,
                                    b, (unsigned long long)hash_bytes(h, bytes));
        }
        for (int o = 0; o < p->nstreams; o++) {
            if (o == s)
                continue;
            CHECK(cuMemcpyDtoH(h, ts->x[s][o], bytes));
            len += (size_t)snprintf(ts->out + len, sizeof ts->out - len, "t%d s%d x%d %016llx\n", ts->id, s,
                                    o, (unsigned long long)hash_bytes(h, bytes));
        }
        len += (size_t)snprintf(ts->out + len, sizeof ts->out - len,
                                "t%d s%d pinned %016llx pageable %016llx\n"
                                "t%d s%d hostfn-log %016llx/%ld host-log %016llx/%ld\n",
                                ts->id, s, (unsigned long long)hash_bytes(st->pinned, bytes),
                                (unsigned long long)hash_bytes(st->pageable, bytes), ts->id, s,
                                (unsigned long long)st->fnlog.h, st->fnlog.n,
                                (unsigned long long)st->hostlog.h, st->hostlog.n);
    }
    free(h);
    return NULL;
}

/* Everything run_thread made, so that --batch can run the next program in this process. */
static void release_thread(struct thread_state *ts)
{
    const struct prog *p = ts->p;
    for (int s = 0; s < p->nstreams; s++) {
        struct stream_state *st = &ts->st[s];
        if (st->s)
            CHECK(cuStreamDestroy(st->s));
        for (int b = 0; b <= NDEV; b++)
            CHECK(cuMemFree(st->d[b]));
        CHECK(cuMemFreeHost(st->pinned));
        if (st->reg_on)
            CHECK(cuMemHostUnregister(st->reg));
        free(st->pageable);
        free(st->reg);
        CHECK(cuEventDestroy(st->ev_plain));
        CHECK(cuEventDestroy(st->ev_timing));
        for (int o = 0; o < p->nstreams; o++) {
            CHECK(cuMemFree(ts->x[s][o]));
            CHECK(cuEventDestroy(ts->go[s][o]));
            CHECK(cuEventDestroy(ts->back[s][o]));
        }
    }
    memset(ts, 0, sizeof *ts);
}

static const char *kind_name(int k)
{
    static const char *const names[] = {"kernel",        "memset32",      "memset8",      "dtod",
                                        "htod-pinned",   "dtoh-pinned",   "htod-pageable", "dtoh-pageable",
                                        "unified",       "record",        "wait",          "handoff-send",
                                        "handoff-recv",  "hostfn",        "barrier",       "sync-stream",
                                        "sync-ctx",      "sync-event",    "query",         "host-write",
                                        "reg-toggle",    "htod-reg",      "realloc",       "restream"};
    return names[k];
}

static void describe(const struct prog *p, int id)
{
    static const char *const sk[] = {"legacy", "blocking", "non-blocking"};
    printf("# thread %d: n=%d block=%d iters=%d sync=%d%% schedule=", id, p->n, p->block, p->iters, p->sync_pct);
    for (int i = 0; i < p->period; i++)
        printf("%sT%d", i ? "," : "", p->sched[i]);
    printf(" streams=");
    for (int s = 0; s < p->nstreams; s++)
        printf("%s%s", s ? "," : "", sk[p->kinds[s]]);
    printf("\n");
    for (int t = 0; t < p->ntpl; t++) {
        printf("#  T%d:", t);
        for (int j = 0; j < p->tpl[t].n; j++) {
            const struct op *o = &p->tpl[t].op[j];
            printf(" s%d:%s", o->s, o->kind == O_KERNEL ? kname[o->k] : kind_name(o->kind));
        }
        printf("\n");
    }
    for (int m = 0; m < p->nmut; m++)
        printf("#  mutation: T%d op %d kind %d iterations %d..%d\n", p->mut[m].tpl, p->mut[m].opi,
               p->mut[m].what, p->mut[m].from, p->mut[m].to);
}

/* One seed's program: generated, run on its threads, its results printed. */
static int run_seed(unsigned long long seed, int want_describe, int release)
{
    uint64_t r = seed;
    int nthreads = chance(&r, 25) ? 2 : 1;
    for (int t = 0; t < nthreads; t++)
        generate(&prog_of[t], seed * 2 + (uint64_t)t);
    if (want_describe)
        for (int t = 0; t < nthreads; t++)
            describe(&prog_of[t], t);
    static struct thread_state ts[2];
    pthread_t tid[2];
    for (int t = 0; t < nthreads; t++) {
        ts[t].id = t;
        ts[t].p = &prog_of[t];
        if (nthreads == 1)
            run_thread(&ts[t]);
        else if (pthread_create(&tid[t], NULL, run_thread, &ts[t]) != 0)
            return 2;
    }
    for (int t = 0; nthreads > 1 && t < nthreads; t++)
        pthread_join(tid[t], NULL);
    CHECK(cuCtxSynchronize());
    for (int t = 0; t < nthreads; t++)
        fputs(ts[t].out, stdout);
    printf("seed %llu: %d thread(s), done\n", seed, nthreads);
    for (int t = 0; release && t < nthreads; t++)
        release_thread(&ts[t]);
    return 0;
}

/*
 * fuzz SEED [--describe]: one program. fuzz --batch FIRST COUNT: COUNT programs one after
 * another in this process (each releases what it made), for machines where starting a
 * CUDA process costs seconds; under the library, later programs also meet what earlier
 * ones taught the engine.
 */
int main(int argc, char **argv)
{
    char *end = "";
    unsigned long long seed = 0, count = 1;
    int batch = argc == 4 && !strcmp(argv[1], "--batch");
    if (batch) {
        seed = strtoull(argv[2], &end, 10);
        if (!*end)
            count = strtoull(argv[3], &end, 10);
    } else if (argc > 1) {
        seed = strtoull(argv[1], &end, 10);
    }
    int want_describe = !batch && argc > 2 && !strcmp(argv[2], "--describe");
    const char *ptx = getenv("AG_KERNELS_PTX");
    if (argc < 2 || *end || (argc > 2 && !want_describe && !batch) || !ptx) {
        fprintf(stderr, "usage: %s SEED [--describe] | --batch FIRST COUNT   (PTX from env AG_KERNELS_PTX)\n",
                argv[0]);
        return 2;
    }
    const char *pv = getenv("AG_FUZZ_PATTERNS");
    patterns = pv && strcmp(pv, "1") == 0;
    if (pv && *pv && strcmp(pv, "0") && strcmp(pv, "1"))
        fprintf(stderr, "fuzz: AG_FUZZ_PATTERNS=%s is not 0 or 1; using 0\n", pv);

    char *image = read_file(ptx);
    CUdevice dev;
    CUmodule mod;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, image));
    free(image);
    for (int k = 0; k < NKERN; k++)
        CHECK(cuModuleGetFunction(&fn[k], mod, kname[k]));
    for (unsigned long long i = 0; i < count; i++)
        if (run_seed(seed + i, want_describe, batch))
            return 2;
    return 0;
}
