/* fakecuda streams, events, kernel launches and stream capture. Work submitted to a
 * stream goes to queue.c, which runs it at once or, in asynchronous mode, on the
 * stream's worker; events are stamped with a host clock when their record runs. While a
 * stream captures, work submitted to it becomes chained graph nodes instead (graph.c
 * owns graphs). */
#define _GNU_SOURCE
#include "fake.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ag_fake_capture {
    struct ag_fake_graph *graph;
    CUstreamCaptureMode mode;
    int invalidated;
    unsigned long long id;
    struct ag_fake_stream *origin;
    pthread_t thread;
    /* Streams taking part (origin and those that joined through events). */
    struct ag_fake_stream **members;
    size_t nmembers;
};

static struct ag_fake_stream legacy = {.magic = AG_FAKE_STREAM, .index = -1};
/* Allocated, not thread-local storage: in asynchronous mode its worker may still run
 * the queue after the thread exited. */
static _Thread_local struct ag_fake_stream *per_thread;
static int next_stream_index = 1;
static unsigned long long next_capture_id = 1;
static _Thread_local CUstreamCaptureMode thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

/* Captures in progress, for the checks of "potentially unsafe" calls. */
static struct ag_fake_capture **active;
static size_t nactive;

CUresult ag_fake_stream(CUstream h, int per_thread_default, struct ag_fake_stream **out)
{
    struct ag_fake_stream *s = (struct ag_fake_stream *)h;
    if ((h == NULL && per_thread_default) || h == CU_STREAM_PER_THREAD) {
        if (!per_thread && !(per_thread = calloc(1, sizeof *per_thread)))
            return CUDA_ERROR_OUT_OF_MEMORY;
        per_thread->magic = AG_FAKE_STREAM;
        per_thread->index = -2;
        s = per_thread;
    } else if (h == NULL || h == CU_STREAM_LEGACY)
        s = &legacy;
    else if (s->magic != AG_FAKE_STREAM)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = s;
    return CUDA_SUCCESS;
}

const char *ag_fake_stream_label(const struct ag_fake_stream *s)
{
    static _Thread_local char buf[24];
    if (s->index == -1)
        return "legacy";
    if (s->index == -2)
        return "per-thread";
    snprintf(buf, sizeof buf, "s%d", s->index);
    return buf;
}

int ag_fake_capturing(const struct ag_fake_stream *s)
{
    return s->cap != NULL;
}

static void invalidate(struct ag_fake_capture *c)
{
    c->invalidated = 1;
}

CUresult ag_fake_capture_unsafe(struct ag_fake_stream *s)
{
    if (s && s->cap) {
        invalidate(s->cap);
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_SUCCESS;
    CUresult rc = CUDA_SUCCESS;
    for (size_t i = 0; i < nactive; i++) {
        struct ag_fake_capture *c = active[i];
        if (c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL ||
            (c->mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL && pthread_equal(c->thread, pthread_self()))) {
            invalidate(c);
            rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        }
    }
    return rc;
}

static CUresult set_deps(struct ag_fake_stream *s, const CUgraphNode *deps, size_t n)
{
    if (n > s->capdeps) {
        CUgraphNode *d = realloc(s->deps, n * sizeof *d);
        if (!d)
            return CUDA_ERROR_OUT_OF_MEMORY;
        s->deps = d, s->capdeps = n;
    }
    if (n)
        memmove(s->deps, deps, n * sizeof *deps);
    s->ndeps = n;
    return CUDA_SUCCESS;
}

CUresult ag_fake_capture_add(struct ag_fake_stream *s, const struct ag_fake_node *proto)
{
    CUgraphNode node;
    ag_fake_trace_field("capturing=1");
    if (s->cap->invalidated)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    CUresult rc = ag_fake_graph_add(s->cap->graph, proto, s->deps, s->ndeps, &node);
    return rc ? rc : set_deps(s, &node, 1);
}

static CUresult join(struct ag_fake_capture *c, struct ag_fake_stream *s)
{
    struct ag_fake_stream **m = realloc(c->members, (c->nmembers + 1) * sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->members = m;
    c->members[c->nmembers++] = s;
    s->cap = c;
    return CUDA_SUCCESS;
}

/* ---- streams ----------------------------------------------------------------------- */

/* Created streams that are alive, and destroyed ones whose record a new stream may take:
 * a driver reuses stream handles, so a program (or a library) must not take a new stream
 * for a destroyed one that had the same handle. A record is reused only once its queue
 * drained and its worker ended; its operation counters keep counting, so events and
 * waits that name its old operations stay complete. */
static struct ag_fake_stream **live, **dead;
static size_t nlive, caplive, ndead, capdead;

static int push_stream(struct ag_fake_stream ***v, size_t *n, size_t *cap, struct ag_fake_stream *s)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        struct ag_fake_stream **p = realloc(*v, c * sizeof *p);
        if (!p)
            return 0;
        *v = p, *cap = c;
    }
    (*v)[(*n)++] = s;
    return 1;
}

static struct ag_fake_stream *reusable(void)
{
    for (size_t i = 0; i < ndead; i++) {
        struct ag_fake_stream *s = dead[i];
        if (!s->worker && !s->listed && !s->head) {
            dead[i] = dead[--ndead];
            return s;
        }
    }
    return NULL;
}

/* A stream goes: destroyed, or its context did. Its record stays tagged dead until a
 * new stream takes it (a destroyed record that cannot be kept is leaked, as before). */
static void stream_gone(struct ag_fake_stream *s)
{
    for (size_t i = 0; i < nlive; i++)
        if (live[i] == s) {
            live[i] = live[--nlive];
            break;
        }
    if (s->cap)
        invalidate(s->cap);
    s->magic = AG_FAKE_DEAD;
    ag_fake_stream_retire(s);
    push_stream(&dead, &ndead, &capdead, s);
}

/* The context's queues were drained: its workers end now, so that the next streams get
 * these handles in asynchronous mode too, as they would in a driver. */
void ag_fake_ctx_streams_gone(const struct ag_fake_ctx *c)
{
    for (size_t i = nlive; i-- > 0;)
        if (i < nlive && live[i]->ctx == c)
            stream_gone(live[i]);
    for (size_t i = 0; i < ndead; i++)
        while (dead[i]->ctx == c && dead[i]->worker && !dead[i]->head)
            ag_fake_wait();
}

static CUresult stream_create(CUstream *out, unsigned flags, int priority)
{
    struct ag_fake_ctx *c;
    CUresult rc = ag_fake_current_ctx(&c);
    if (rc)
        return rc;
    if (!out || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    struct ag_fake_stream *s = reusable();
    struct ag_fake_stream old = {0};
    if (s)
        old = *s;
    else if (!(s = calloc(1, sizeof *s)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (!push_stream(&live, &nlive, &caplive, s)) {
        if (old.magic)
            push_stream(&dead, &ndead, &capdead, s);
        else
            free(s);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *s = (struct ag_fake_stream){.magic = AG_FAKE_STREAM, .index = next_stream_index++, .flags = flags,
                                 .priority = priority < -5 ? -5 : priority > 0 ? 0 : priority, .ctx = c,
                                 .deps = old.deps, .capdeps = old.capdeps,
                                 .submitted = old.submitted, .completed = old.completed};
    if (old.magic)
        ag_fake_trace_field("reused=1");
    ag_fake_trace_field("stream=%s", ag_fake_stream_label(s));
    *out = (CUstream)s;
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags) AG_FAKE_BODY(stream_create(phStream, Flags, 0))
CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
    AG_FAKE_BODY(stream_create(phStream, flags, priority))

static CUresult stream_destroy(CUstream h)
{
    struct ag_fake_stream *s = (struct ag_fake_stream *)h;
    if (!s || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD || s->magic != AG_FAKE_STREAM)
        return CUDA_ERROR_INVALID_HANDLE;
    ag_fake_trace_field("stream=%s", ag_fake_stream_label(s));
    stream_gone(s);
    return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream hStream) AG_FAKE_BODY(stream_destroy(hStream))

/* The context whose sticky error a stream's operations report. */
static struct ag_fake_ctx *stream_ctx_of(const struct ag_fake_stream *s)
{
    struct ag_fake_ctx *c;
    if (s->ctx)
        return s->ctx;
    return ag_fake_current_ctx(&c) == CUDA_SUCCESS ? c : NULL;
}

static CUresult stream_sync(CUstream h, int ptsz, int query)
{
    struct ag_fake_stream *s;
    CUresult rc = ag_fake_stream(h, ptsz, &s);
    if (rc)
        return rc;
    ag_fake_trace_field("stream=%s", ag_fake_stream_label(s));
    if (s->cap) {
        invalidate(s->cap);
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    rc = s == &legacy ? ag_fake_capture_unsafe(NULL) : CUDA_SUCCESS;
    if (rc)
        return rc;
    if (query && ag_fake_stream_busy(s))
        return CUDA_ERROR_NOT_READY;
    if (!query)
        ag_fake_stream_wait(s);
    struct ag_fake_ctx *c = stream_ctx_of(s);
    return c ? c->sticky : CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream hStream) AG_FAKE_BODY(stream_sync(hStream, 0, 0))
CUresult cuStreamSynchronize_ptsz(CUstream hStream) AG_FAKE_BODY(stream_sync(hStream, 1, 0))
CUresult cuStreamQuery(CUstream hStream) AG_FAKE_BODY(stream_sync(hStream, 0, 1))
CUresult cuStreamQuery_ptsz(CUstream hStream) AG_FAKE_BODY(stream_sync(hStream, 1, 1))

/* Reads one property of a stream; the macro keeps the eight getters to one line each. */
#define STREAM_GETTER(fn, type, expr)                                                  \
    static CUresult fn(CUstream h, int ptsz, type *out)                                \
    {                                                                                  \
        struct ag_fake_stream *s;                                                      \
        struct ag_fake_ctx *cur;                                                       \
        CUresult rc = ag_fake_stream(h, ptsz, &s);                                     \
        if (rc == CUDA_SUCCESS)                                                        \
            rc = ag_fake_current_ctx(&cur);                                            \
        if (rc)                                                                        \
            return rc;                                                                 \
        if (!out)                                                                      \
            return CUDA_ERROR_INVALID_VALUE;                                           \
        ag_fake_trace_field("stream=%s", ag_fake_stream_label(s));                     \
        *out = (expr);                                                                 \
        return CUDA_SUCCESS;                                                           \
    }

STREAM_GETTER(stream_flags, unsigned, s->flags)
STREAM_GETTER(stream_priority, int, s->priority)
STREAM_GETTER(stream_ctx, CUcontext, (CUcontext)(s->ctx ? s->ctx : cur))
STREAM_GETTER(stream_id, unsigned long long, (unsigned long long)(s->index + 2))
/* The stand-in follows the cuda.h it is built against: an entry point that header does
 * not declare (12.8's cuStreamGetDevice here) is not built, as an older driver lacks it. */
#if CUDA_VERSION >= 12080
STREAM_GETTER(stream_device, CUdevice, ag_fake_stream_device(s))
#endif

CUresult cuStreamGetFlags(CUstream h, unsigned int *flags) AG_FAKE_BODY(stream_flags(h, 0, flags))
CUresult cuStreamGetFlags_ptsz(CUstream h, unsigned int *flags) AG_FAKE_BODY(stream_flags(h, 1, flags))
CUresult cuStreamGetPriority(CUstream h, int *priority) AG_FAKE_BODY(stream_priority(h, 0, priority))
CUresult cuStreamGetPriority_ptsz(CUstream h, int *priority) AG_FAKE_BODY(stream_priority(h, 1, priority))
CUresult cuStreamGetCtx(CUstream h, CUcontext *pctx) AG_FAKE_BODY(stream_ctx(h, 0, pctx))
CUresult cuStreamGetCtx_ptsz(CUstream h, CUcontext *pctx) AG_FAKE_BODY(stream_ctx(h, 1, pctx))
CUresult cuStreamGetId(CUstream h, unsigned long long *id) AG_FAKE_BODY(stream_id(h, 0, id))
CUresult cuStreamGetId_ptsz(CUstream h, unsigned long long *id) AG_FAKE_BODY(stream_id(h, 1, id))
#if CUDA_VERSION >= 12080
CUresult cuStreamGetDevice(CUstream h, CUdevice *dev) AG_FAKE_BODY(stream_device(h, 0, dev))
CUresult cuStreamGetDevice_ptsz(CUstream h, CUdevice *dev) AG_FAKE_BODY(stream_device(h, 1, dev))
#endif

static CUresult host_func(CUstream h, int ptsz, CUhostFn fn, void *user)
{
    struct ag_fake_stream *s;
    CUresult rc = ag_fake_stream(h, ptsz, &s);
    if (rc)
        return rc;
    ag_fake_trace_field("stream=%s", ag_fake_stream_label(s));
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    struct ag_fake_node proto = {.type = CU_GRAPH_NODE_TYPE_HOST, .host = {fn, user}};
    if (s->cap)
        return ag_fake_capture_add(s, &proto);
    struct ag_fake_ctx *c = stream_ctx_of(s);
    return c ? ag_fake_submit(s, c, &proto, 1, 0, NULL) : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData) AG_FAKE_BODY(host_func(hStream, 0, fn, userData))
CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
    AG_FAKE_BODY(host_func(hStream, 1, fn, userData))

static CUresult add_callback(CUstream h, int ptsz, CUstreamCallback fn, void *user, unsigned flags)
{
    struct ag_fake_stream *s;
    CUresult rc = ag_fake_stream(h, ptsz, &s);
    if (rc)
        return rc;
    ag_fake_trace_field("stream=%s", ag_fake_stream_label(s));
    if (!fn || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (s->cap) {
        invalidate(s->cap);
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    struct ag_fake_node proto = {.type = CU_GRAPH_NODE_TYPE_HOST, .host = {NULL, user}, .callback = fn,
                                 .callback_stream = h};
    struct ag_fake_ctx *c = stream_ctx_of(s);
    return c ? ag_fake_submit(s, c, &proto, 1, 0, NULL) : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags)
    AG_FAKE_BODY(add_callback(hStream, 0, callback, userData, flags))
CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags)
    AG_FAKE_BODY(add_callback(hStream, 1, callback, userData, flags))

/* ---- stream memory operations ----------------------------------------------------- */

/* cuStreamWaitValue32: the stream waits until the 32-bit word at addr (device memory or
 * page-locked host memory; both are host addresses here) meets the condition, as a GPU's
 * front end polls it. Queued as a host node of the stand-in's own that polls the word:
 * in asynchronous mode the stream's worker polls without the global lock, so the program
 * (or another stream's work) can write the word; in synchronous mode the submitting
 * thread polls, so only another thread can open it. No CUDA call is made while polling. */
struct wait_value {
    const volatile uint32_t *addr;
    uint32_t value;
    unsigned op;
};

static int wait_value_met(const struct wait_value *w)
{
    uint32_t v = __atomic_load_n(w->addr, __ATOMIC_ACQUIRE);
    switch (w->op) {
    case CU_STREAM_WAIT_VALUE_GEQ: return (int32_t)(v - w->value) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ: return v == w->value;
    case CU_STREAM_WAIT_VALUE_AND: return (v & w->value) != 0;
    default: return ~(v | w->value) != 0;
    }
}

static void CUDA_CB wait_value_run(void *arg)
{
    const struct wait_value *w = arg;
    while (!wait_value_met(w))
        nanosleep(&(struct timespec){0, 20000}, NULL);
}

static CUresult wait_value32(CUstream h, int ptsz, CUdeviceptr addr, cuuint32_t value, unsigned flags)
{
    struct ag_fake_stream *s;
    CUresult rc = ag_fake_stream(h, ptsz, &s);
    if (rc)
        return rc;
    ag_fake_trace_field("stream=%s value=%u flags=%u", ag_fake_stream_label(s), (unsigned)value, flags);
    if ((flags & ~3u) || (addr & 3) || !ag_fake_mapped((uintptr_t)addr, sizeof(uint32_t)))
        return CUDA_ERROR_INVALID_VALUE;
    if (s->cap) /* a wait node in a capture: not modelled by the stand-in */
        return CUDA_ERROR_NOT_SUPPORTED;
    struct ag_fake_ctx *c = stream_ctx_of(s);
    struct wait_value *w = malloc(sizeof *w);
    if (!c || !w) {
        free(w);
        return c ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_CONTEXT;
    }
    *w = (struct wait_value){(const volatile uint32_t *)(uintptr_t)addr, value, flags & 3u};
    struct ag_fake_node proto = {.type = CU_GRAPH_NODE_TYPE_HOST, .host = {wait_value_run, w}};
    return ag_fake_submit(s, c, &proto, 1, 0, w);
}

CUresult cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
    AG_FAKE_BODY(wait_value32(stream, 0, addr, value, flags))
CUresult cuStreamWaitValue32_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
    AG_FAKE_BODY(wait_value32(stream, 1, addr, value, flags))

/* ---- events -------------------------------------------------------------------------- */

CUresult ag_fake_event(CUevent h, struct ag_fake_event **out)
{
    struct ag_fake_event *e = (struct ag_fake_event *)h;
    if (!e || e->magic != AG_FAKE_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = e;
    return CUDA_SUCCESS;
}

/* With AG_FAKE_EVENT_REUSE=1 a new event takes the handle of the last one destroyed, as
 * the driver's allocator may; otherwise destroyed events stay tombstones. */
static struct ag_fake_event *last_destroyed;

static int reuse_events(void)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("AG_FAKE_EVENT_REUSE");
        v = e && !strcmp(e, "1");
    }
    return v;
}

static CUresult event_create(CUevent *out, unsigned flags)
{
    struct ag_fake_ctx *c;
    CUresult rc = ag_fake_current_ctx(&c);
    if (rc)
        return rc;
    if (!out || (flags & ~0xfu))
        return CUDA_ERROR_INVALID_VALUE;
    struct ag_fake_event *e = last_destroyed ? last_destroyed : calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (last_destroyed)
        memset(e, 0, sizeof *e), last_destroyed = NULL;
    static unsigned long long gens;
    e->magic = AG_FAKE_EVENT;
    e->flags = flags;
    e->gen = ++gens;
    ag_fake_trace_field("flags=%u", flags);
    *out = (CUevent)e;
    return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags) AG_FAKE_BODY(event_create(phEvent, Flags))

static CUresult event_destroy(CUevent h)
{
    struct ag_fake_event *e;
    CUresult rc = ag_fake_event(h, &e);
    if (rc == CUDA_SUCCESS) {
        e->magic = AG_FAKE_DEAD;
        if (reuse_events())
            last_destroyed = e;
    }
    return rc;
}

CUresult cuEventDestroy_v2(CUevent hEvent) AG_FAKE_BODY(event_destroy(hEvent))

static CUresult event_record(CUevent h, CUstream hs, int ptsz, unsigned flags)
{
    struct ag_fake_event *e;
    struct ag_fake_stream *s;
    CUresult rc = ag_fake_event(h, &e);
    if (rc == CUDA_SUCCESS)
        rc = ag_fake_stream(hs, ptsz, &s);
    if (rc)
        return rc;
    ag_fake_trace_field("stream=%s", ag_fake_stream_label(s));
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!s->cap) {
        struct ag_fake_node proto = {.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD, .event = h};
        struct ag_fake_ctx *c = stream_ctx_of(s);
        return c ? ag_fake_submit(s, c, &proto, 1, 0, NULL) : CUDA_ERROR_INVALID_CONTEXT;
    }
    if (flags & CU_EVENT_RECORD_EXTERNAL) {
        struct ag_fake_node proto = {.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD, .event = h};
        return ag_fake_capture_add(s, &proto);
    }
    /* Inside a capture a record only marks a point other streams can fork from. */
    CUgraphNode *d = realloc(e->deps, (s->ndeps ? s->ndeps : 1) * sizeof *d);
    if (!d)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (s->ndeps)
        memcpy(d, s->deps, s->ndeps * sizeof *d);
    e->deps = d, e->ndeps = s->ndeps, e->cap = s->cap;
    ag_fake_trace_field("capturing=1");
    return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) AG_FAKE_BODY(event_record(hEvent, hStream, 0, 0))
CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) AG_FAKE_BODY(event_record(hEvent, hStream, 1, 0))
CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
    AG_FAKE_BODY(event_record(hEvent, hStream, 0, flags))
CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
    AG_FAKE_BODY(event_record(hEvent, hStream, 1, flags))

static CUresult event_query(CUevent h, int query)
{
    struct ag_fake_event *e;
    CUresult rc = ag_fake_event(h, &e);
    if (rc)
        return rc;
    if (e->cap)
        return CUDA_ERROR_CAPTURED_EVENT;
    if (query && ag_fake_event_busy(e))
        return CUDA_ERROR_NOT_READY;
    ag_fake_event_wait(e);
    struct ag_fake_ctx *c = e->rec_stream ? stream_ctx_of(e->rec_stream) : NULL;
    return c ? c->sticky : CUDA_SUCCESS;
}

CUresult cuEventQuery(CUevent hEvent) AG_FAKE_BODY(event_query(hEvent, 1))
CUresult cuEventSynchronize(CUevent hEvent) AG_FAKE_BODY(event_query(hEvent, 0))

static CUresult elapsed(float *ms, CUevent a, CUevent b)
{
    struct ag_fake_event *s, *e;
    if (!ms)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_event(a, &s);
    if (rc == CUDA_SUCCESS)
        rc = ag_fake_event(b, &e);
    if (rc)
        return rc;
    if ((s->flags | e->flags) & CU_EVENT_DISABLE_TIMING)
        return CUDA_ERROR_INVALID_HANDLE;
    if (s->cap || e->cap)
        return CUDA_ERROR_CAPTURED_EVENT;
    if (!s->recorded || !e->recorded)
        return CUDA_ERROR_INVALID_HANDLE;
    if (ag_fake_event_busy(s) || ag_fake_event_busy(e))
        return CUDA_ERROR_NOT_READY;
    *ms = (float)(e->ns - s->ns) / 1e6f;
    return CUDA_SUCCESS;
}

CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd) AG_FAKE_BODY(elapsed(pMilliseconds, hStart, hEnd))
#if CUDA_VERSION >= 12080
CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
    AG_FAKE_BODY(elapsed(pMilliseconds, hStart, hEnd))
#endif

static CUresult stream_wait_event(CUstream hs, int ptsz, CUevent h, unsigned flags)
{
    struct ag_fake_event *e;
    struct ag_fake_stream *s;
    CUresult rc = ag_fake_stream(hs, ptsz, &s);
    if (rc == CUDA_SUCCESS)
        rc = ag_fake_event(h, &e);
    if (rc)
        return rc;
    ag_fake_trace_field("stream=%s", ag_fake_stream_label(s));
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    if (e->cap) {
        if (s->cap && s->cap != e->cap)
            return CUDA_ERROR_STREAM_CAPTURE_MERGE;
        ag_fake_trace_field("capturing=1");
        if (!s->cap) {
            rc = join(e->cap, s);
            return rc ? rc : set_deps(s, e->deps, e->ndeps);
        }
        /* Same capture: the frontier becomes the union of both. */
        for (size_t i = 0; i < e->ndeps; i++) {
            size_t j = 0;
            while (j < s->ndeps && s->deps[j] != e->deps[i])
                j++;
            if (j == s->ndeps) {
                CUgraphNode *d = realloc(s->deps, (s->ndeps + 1) * sizeof *d);
                if (!d)
                    return CUDA_ERROR_OUT_OF_MEMORY;
                s->deps = d, s->capdeps = s->ndeps + 1;
                s->deps[s->ndeps++] = e->deps[i];
            }
        }
        return CUDA_SUCCESS;
    }
    if (s->cap) {
        if (!(flags & CU_EVENT_WAIT_EXTERNAL))
            return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
        struct ag_fake_node proto = {.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT, .event = h};
        return ag_fake_capture_add(s, &proto);
    }
    struct ag_fake_node proto = {.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT, .event = h};
    struct ag_fake_ctx *c = stream_ctx_of(s);
    return c ? ag_fake_submit(s, c, &proto, 1, 0, NULL) : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
    AG_FAKE_BODY(stream_wait_event(hStream, 0, hEvent, Flags))
CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
    AG_FAKE_BODY(stream_wait_event(hStream, 1, hEvent, Flags))

/* ---- launches ------------------------------------------------------------------------ */

CUresult ag_fake_check_dims(const unsigned grid[3], const unsigned block[3], unsigned shmem)
{
    if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2])
        return CUDA_ERROR_INVALID_VALUE;
    if (block[0] > 1024 || block[1] > 1024 || block[2] > 64 ||
        (unsigned long long)block[0] * block[1] * block[2] > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    if (grid[1] > 65535 || grid[2] > 65535 || grid[0] > 2147483647u)
        return CUDA_ERROR_INVALID_VALUE;
    if (shmem > 227u * 1024u)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

void ag_fake_run_kernel(const struct ag_fake_kdef *k, const unsigned char *args, const unsigned grid[3],
                        const unsigned block[3])
{
    k->run(k, args, (unsigned long long)grid[0] * block[0]);
}

struct launch {
    CUfunction f;
    unsigned grid[3], block[3], shmem;
    CUstream stream;
    int ptsz;
    void **params, **extra;
    const CUlaunchAttribute *attrs;
    unsigned nattrs;
};

/* Events a launch records through its attributes (programmatic and launch-completion
 * events): recorded when the kernel completes, which is never earlier than the driver
 * fires them. Other attributes do not change what the stand-in computes. */
static CUresult attr_events(const struct launch *l, struct ag_fake_node nodes[3], size_t *n)
{
    for (unsigned i = 0; i < l->nattrs; i++) {
        CUevent ev;
        int flags;
        struct ag_fake_event *e;
        if (l->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT)
            ev = l->attrs[i].value.programmaticEvent.event, flags = l->attrs[i].value.programmaticEvent.flags;
        else if (l->attrs[i].id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT)
            ev = l->attrs[i].value.launchCompletionEvent.event, flags = l->attrs[i].value.launchCompletionEvent.flags;
        else
            continue;
        if (ag_fake_event(ev, &e))
            return CUDA_ERROR_INVALID_HANDLE;
        if (flags != CU_EVENT_RECORD_DEFAULT || *n == 3)
            return CUDA_ERROR_INVALID_VALUE;
        nodes[(*n)++] = (struct ag_fake_node){.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD, .event = ev};
    }
    return CUDA_SUCCESS;
}

/* A context-less kernel (a CUkernel) runs in the context of the stream it is launched
 * into, or the current one for a default stream, as the driver documents; a CUfunction
 * needs the current context. */
static CUresult launch_ctx(const struct launch *l, struct ag_fake_ctx **out)
{
    const struct ag_fake_kdef *k;
    struct ag_fake_stream *s = (struct ag_fake_stream *)l->stream;
    CUresult rc = ag_fake_current_ctx(out);
    if (rc && ag_fake_kernel_only((CUkernel)l->f, &k) == CUDA_SUCCESS && s && l->stream != CU_STREAM_LEGACY &&
        l->stream != CU_STREAM_PER_THREAD && s->magic == AG_FAKE_STREAM && s->ctx) {
        *out = s->ctx;
        rc = CUDA_SUCCESS;
    }
    return rc;
}

/*
 * A test seam for a launch that fails at the call for a reason that is not in the
 * launch itself: with AG_FAKE_LAUNCH_NEEDS=BYTES, a kernel launch into a stream fails
 * with CUDA_ERROR_OUT_OF_MEMORY (not sticky) while less device memory than that is free,
 * as a real launch does when the driver must grow the context's local-memory reserve
 * and cannot. Graph launches are not affected: their kernels' resources are reserved
 * when the graph is instantiated.
 */
static CUresult launch_memory(void)
{
    static long long needs = -1;
    if (needs < 0) {
        const char *v = getenv("AG_FAKE_LAUNCH_NEEDS");
        needs = v && *v ? atoll(v) : 0;
    }
    if (needs > 0 && ag_fake_device_free() < (unsigned long long)needs) {
        ag_fake_trace_field("launch-needs=%lld", needs);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}

/*
 * A test seam for a signal that arrives inside a driver call: with
 * AG_FAKE_SIGNAL_KERNEL=NAME, a launch of kernel NAME raises SIGUSR1 inside the call,
 * with the stand-in's lock held, as a signal can interrupt the real driver anywhere.
 */
static void signal_seam(const char *kernel)
{
    static const char *name;
    if (!name) {
        const char *v = getenv("AG_FAKE_SIGNAL_KERNEL");
        name = v ? v : "";
    }
    if (*name && !strcmp(name, kernel))
        raise(SIGUSR1);
}

static CUresult launch(const struct launch *l)
{
    const struct ag_fake_kdef *k;
    struct ag_fake_stream *s;
    struct ag_fake_ctx *c;
    CUresult rc = launch_ctx(l, &c);
    if (rc)
        return rc;
    rc = ag_fake_launchable(l->f, &k);
    if (rc)
        return rc;
    ag_fake_trace_field("name=%s", k->name);
    signal_seam(k->name);
    ag_fake_trace_field("grid=%u,%u,%u", l->grid[0], l->grid[1], l->grid[2]);
    ag_fake_trace_field("block=%u,%u,%u", l->block[0], l->block[1], l->block[2]);
    ag_fake_trace_field("shmem=%u", l->shmem);
    rc = ag_fake_stream(l->stream, l->ptsz, &s);
    if (rc)
        return rc;
    ag_fake_trace_field("stream=%s", ag_fake_stream_label(s));
    if (l->nattrs) {
        char ids[256];
        size_t n = 0;
        if (!l->attrs)
            return CUDA_ERROR_INVALID_VALUE;
        for (unsigned i = 0; i < l->nattrs && n + 12 < sizeof ids; i++)
            n += (size_t)snprintf(ids + n, sizeof ids - n, "%s%d", i ? "," : "", (int)l->attrs[i].id);
        ag_fake_trace_field("attrs=%s", ids);
    }
    rc = ag_fake_check_dims(l->grid, l->block, l->shmem);
    if (rc)
        return rc;
    /* Only the kernel node is initialized here: attr_events fills the others it uses. */
    struct ag_fake_node nodes[3];
    nodes[0] = (struct ag_fake_node){.type = CU_GRAPH_NODE_TYPE_KERNEL, .kdef = k, .func = l->f, .shmem = l->shmem};
    size_t n = 1;
    memcpy(nodes[0].grid, l->grid, sizeof nodes[0].grid);
    memcpy(nodes[0].block, l->block, sizeof nodes[0].block);
    rc = ag_fake_pack_args(k, l->params, l->extra, nodes[0].args);
    if (rc == CUDA_SUCCESS)
        rc = ag_fake_launch_check(s, c, k, nodes[0].args);
    if (rc == CUDA_SUCCESS && !s->cap)
        rc = launch_memory();
    if (rc == CUDA_SUCCESS)
        rc = attr_events(l, nodes, &n);
    if (rc)
        return rc;
    if (s->cap)
        return ag_fake_capture_add(s, &nodes[0]);
    return ag_fake_submit(s, c, nodes, n, 0, NULL);
}

#define LAUNCH(ptsz_)                                                                                    \
    {                                                                                                    \
        struct launch l = {f, {gx, gy, gz}, {bx, by, bz}, shmem, s, ptsz_, params, extra, NULL, 0};      \
        AG_FAKE_BODY(launch(&l))                                                                         \
    }

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                        unsigned int by, unsigned int bz, unsigned int shmem, CUstream s, void **params,
                        void **extra) LAUNCH(0)
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                             unsigned int by, unsigned int bz, unsigned int shmem, CUstream s, void **params,
                             void **extra) LAUNCH(1)

static CUresult launch_ex(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra, int ptsz)
{
    if (!cfg)
        return CUDA_ERROR_INVALID_VALUE;
    struct launch l = {f,      {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ},
                       {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ},
                       cfg->sharedMemBytes, cfg->hStream, ptsz, params, extra, cfg->attrs, cfg->numAttrs};
    return launch(&l);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
    AG_FAKE_BODY(launch_ex(config, f, kernelParams, extra, 0))
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
    AG_FAKE_BODY(launch_ex(config, f, kernelParams, extra, 1))

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                   unsigned int by, unsigned int bz, unsigned int shmem, CUstream s, void **params)
{
    void **extra = NULL;
    LAUNCH(0)
}
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                                        CUstream s, void **params)
{
    void **extra = NULL;
    LAUNCH(1)
}

/* ---- stream capture ------------------------------------------------------------------- */

static CUresult begin_capture(CUstream h, int ptsz, CUstreamCaptureMode mode, struct ag_fake_graph *into,
                              const CUgraphNode *deps, size_t ndeps)
{
    struct ag_fake_stream *s;
    CUresult rc = ag_fake_stream(h, ptsz, &s);
    if (rc)
        return rc;
    ag_fake_trace_field("stream=%s mode=%d", ag_fake_stream_label(s), (int)mode);
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    if (s == &legacy)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (s->cap)
        return CUDA_ERROR_ILLEGAL_STATE;
    struct ag_fake_capture *c = calloc(1, sizeof *c);
    struct ag_fake_capture **a = realloc(active, (nactive + 1) * sizeof *a);
    if (!c || !a) {
        free(c);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    active = a;
    if (into)
        c->graph = into;
    else if ((rc = ag_fake_graph_new(&c->graph))) {
        free(c);
        return rc;
    }
    c->mode = mode;
    c->id = next_capture_id++;
    c->origin = s;
    c->thread = pthread_self();
    rc = join(c, s);
    if (rc == CUDA_SUCCESS)
        rc = set_deps(s, deps, ndeps);
    if (rc)
        return rc;
    active[nactive++] = c;
    return CUDA_SUCCESS;
}

CUresult cuStreamBeginCapture(CUstream hStream) AG_FAKE_BODY(begin_capture(hStream, 0, CU_STREAM_CAPTURE_MODE_GLOBAL, NULL, NULL, 0))
CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
    AG_FAKE_BODY(begin_capture(hStream, 1, CU_STREAM_CAPTURE_MODE_GLOBAL, NULL, NULL, 0))
CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
    AG_FAKE_BODY(begin_capture(hStream, 0, mode, NULL, NULL, 0))
CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
    AG_FAKE_BODY(begin_capture(hStream, 1, mode, NULL, NULL, 0))

static CUresult begin_capture_to_graph(CUstream h, int ptsz, CUgraph g, const CUgraphNode *deps,
                                       const CUgraphEdgeData *edges, size_t ndeps, CUstreamCaptureMode mode)
{
    struct ag_fake_graph *graph = (struct ag_fake_graph *)g;
    if (!graph || *(const unsigned *)graph != AG_FAKE_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    if (ndeps && !deps)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; edges && i < ndeps; i++)
        if (edges[i].type != CU_GRAPH_DEPENDENCY_TYPE_DEFAULT || edges[i].from_port || edges[i].to_port)
            return CUDA_ERROR_NOT_SUPPORTED;
    return begin_capture(h, ptsz, mode, graph, deps, ndeps);
}

CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
                                     const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                     CUstreamCaptureMode mode)
    AG_FAKE_BODY(begin_capture_to_graph(hStream, 0, hGraph, dependencies, dependencyData, numDependencies, mode))
CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
                                          const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                          CUstreamCaptureMode mode)
    AG_FAKE_BODY(begin_capture_to_graph(hStream, 1, hGraph, dependencies, dependencyData, numDependencies, mode))

static CUresult end_capture(CUstream h, int ptsz, CUgraph *out)
{
    struct ag_fake_stream *s;
    CUresult rc = ag_fake_stream(h, ptsz, &s);
    if (rc)
        return rc;
    ag_fake_trace_field("stream=%s", ag_fake_stream_label(s));
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    struct ag_fake_capture *c = s->cap;
    if (!c)
        return CUDA_ERROR_ILLEGAL_STATE;
    if (c->origin != s) {
        invalidate(c);
        return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    }
    if (c->mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL && !pthread_equal(c->thread, pthread_self()))
        return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    for (size_t i = 0; i < c->nmembers; i++) {
        c->members[i]->cap = NULL;
        c->members[i]->ndeps = 0;
    }
    for (size_t i = 0; i < nactive; i++)
        if (active[i] == c)
            active[i] = active[--nactive];
    ag_fake_trace_field("capture=%llu", c->id);
    rc = c->invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
    *out = rc ? NULL : (CUgraph)c->graph;
    free(c->members);
    free(c);
    return rc;
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph) AG_FAKE_BODY(end_capture(hStream, 0, phGraph))
CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph) AG_FAKE_BODY(end_capture(hStream, 1, phGraph))

static CUresult capture_info(CUstream h, int ptsz, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                             const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
    struct ag_fake_stream *s;
    CUresult rc = ag_fake_stream(h, ptsz, &s);
    if (rc)
        return rc;
    ag_fake_trace_field("stream=%s", ag_fake_stream_label(s));
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    struct ag_fake_capture *c = s->cap;
    *status = !c ? CU_STREAM_CAPTURE_STATUS_NONE
                 : c->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    if (id && c)
        *id = c->id;
    if (graph)
        *graph = c ? (CUgraph)c->graph : NULL;
    if (deps)
        *deps = c ? s->deps : NULL;
    if (edges)
        *edges = NULL;
    if (ndeps)
        *ndeps = c ? s->ndeps : 0;
    return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
    AG_FAKE_BODY(capture_info(hStream, 0, captureStatus, NULL, NULL, NULL, NULL, NULL))
CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
    AG_FAKE_BODY(capture_info(hStream, 1, captureStatus, NULL, NULL, NULL, NULL, NULL))
CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id)
    AG_FAKE_BODY(capture_info(hStream, 0, status, id, NULL, NULL, NULL, NULL))
CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id)
    AG_FAKE_BODY(capture_info(hStream, 1, status, id, NULL, NULL, NULL, NULL))
CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                                   const CUgraphNode **deps, size_t *ndeps)
    AG_FAKE_BODY(capture_info(hStream, 0, status, id, graph, deps, NULL, ndeps))
CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id,
                                        CUgraph *graph, const CUgraphNode **deps, size_t *ndeps)
    AG_FAKE_BODY(capture_info(hStream, 1, status, id, graph, deps, NULL, ndeps))
CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                                   const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
    AG_FAKE_BODY(capture_info(hStream, 0, status, id, graph, deps, edges, ndeps))
CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id,
                                        CUgraph *graph, const CUgraphNode **deps, const CUgraphEdgeData **edges,
                                        size_t *ndeps)
    AG_FAKE_BODY(capture_info(hStream, 1, status, id, graph, deps, edges, ndeps))

static CUresult exchange_mode(CUstreamCaptureMode *mode)
{
    if (!mode)
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = thread_mode;
    thread_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode) AG_FAKE_BODY(exchange_mode(mode))
