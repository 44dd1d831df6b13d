/* fakecuda execution of stream work: where and when a submitted operation runs.
 *
 * Synchronous mode (the default): an operation runs at submission, in the caller's
 * thread, which is in order for every stream.
 *
 * Asynchronous mode (AG_FAKE_ASYNC=1), so that reordering shows up as wrong results:
 * each stream gets a worker thread that runs the stream's queue in order. An operation
 * may also wait for points of other streams' queues: the record an event wait names (the
 * most recent record when the wait was submitted), and the legacy default stream's
 * implicit ordering with blocking streams (legacy work waits for all earlier work of
 * blocking streams, and their work waits for earlier legacy work). An event record
 * completes when its stream reaches it. Workers run kernels, copies and sets holding the
 * global lock, and host functions without it, so that a host function may wait for the
 * program's threads. A device fault gives the context its sticky error; later work of
 * that context is discarded, as on a GPU whose context died. */
#define _GNU_SOURCE
#include "fake.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct dep {
    struct ag_fake_stream *s;
    unsigned long long seq;
};

struct ag_fake_op {
    struct ag_fake_op *next;
    unsigned long long seq;
    struct ag_fake_ctx *ctx;
    size_t n;
    struct ag_fake_node *nodes;
    struct dep *deps;
    size_t ndeps, capdeps;
    void *owned;
};

static int mode = -1;
/* Streams that have a queue, for the legacy stream's implicit ordering and draining. */
static struct ag_fake_stream **queued;
static size_t nqueued, capqueued;
/* The context of the operation this thread runs, which a faulting kernel marks. */
static _Thread_local struct ag_fake_ctx *running_ctx;

int ag_fake_async(void)
{
    if (mode < 0) {
        const char *v = getenv("AG_FAKE_ASYNC");
        mode = v && strcmp(v, "1") == 0;
        if (v && *v && strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
            char msg[160];
            int n = snprintf(msg, sizeof msg, "fakecuda: AG_FAKE_ASYNC=%.60s is not 0 or 1; using 0\n", v);
            ssize_t w = write(2, msg, n > 0 && (size_t)n < sizeof msg ? (size_t)n : 0);
            (void)w;
        }
    }
    return mode;
}

void ag_fake_fault(CUresult err)
{
    if (running_ctx && running_ctx->sticky == CUDA_SUCCESS)
        running_ctx->sticky = err;
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- running nodes ------------------------------------------------------------------- */

static int run_nodes(const struct ag_fake_node *nodes, size_t n, const struct ag_fake_op *op,
                     struct ag_fake_stream *s);

/* Runs one node; returns 0 when the context faulted, so the rest is discarded. The
 * addresses were valid at submission, but a graph replays its nodes long after: a
 * device that meets an unmapped address faults instead of writing it. */
static int run_node(const struct ag_fake_node *n, const struct ag_fake_op *op, struct ag_fake_stream *s)
{
    const struct ag_fake_node *child;
    size_t nchild;
    struct ag_fake_event *ev;
    switch (n->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        ag_fake_run_kernel(n->kdef, n->args, n->grid, n->block);
        break;
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (ag_fake_copy3d(&n->copy, 0) || !ag_fake_copy_pins_valid(&n->copy, n->pins))
            ag_fake_fault(CUDA_ERROR_LAUNCH_FAILED);
        else
            ag_fake_copy3d(&n->copy, 1);
        break;
    case CU_GRAPH_NODE_TYPE_MEMSET:
        if (ag_fake_memset_check(&n->set))
            ag_fake_fault(CUDA_ERROR_ILLEGAL_ADDRESS);
        else
            ag_fake_memset2d(n->set.dst, n->set.pitch, n->set.value, n->set.elementSize, n->set.width,
                             n->set.height);
        break;
    case CU_GRAPH_NODE_TYPE_HOST:
        /* In asynchronous mode a host function may block until the program's threads do
         * something, so it runs without the lock. */
        if (ag_fake_async())
            ag_fake_unlock();
        if (n->callback)
            ag_fake_call_callback(n->callback, n->callback_stream, CUDA_SUCCESS, n->host.userData);
        else
            ag_fake_call_host(n->host.fn, n->host.userData);
        if (ag_fake_async())
            ag_fake_lock();
        break;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        /* Only the record this operation made stamps the event; a later record replaced it. */
        if (ag_fake_event(n->event, &ev) == CUDA_SUCCESS &&
            (!ag_fake_async() || (ev->rec_stream == s && ev->rec_seq == op->seq)))
            ev->ns = now_ns();
        break;
    case CU_GRAPH_NODE_TYPE_GRAPH:
        ag_fake_exec_nodes(n->child, &child, &nchild);
        return run_nodes(child, nchild, op, s);
    default:
        break;
    }
    return running_ctx->sticky == CUDA_SUCCESS;
}

static int run_nodes(const struct ag_fake_node *nodes, size_t n, const struct ag_fake_op *op,
                     struct ag_fake_stream *s)
{
    for (size_t i = 0; i < n; i++)
        if (!run_node(&nodes[i], op, s))
            return 0;
    return 1;
}

/* ---- dependencies ---------------------------------------------------------------------- */

static int add_dep(struct ag_fake_op *op, struct ag_fake_stream *s, unsigned long long seq)
{
    if (op->ndeps == op->capdeps) {
        size_t cap = op->capdeps ? 2 * op->capdeps : 4;
        struct dep *d = realloc(op->deps, cap * sizeof *d);
        if (!d)
            return 0;
        op->deps = d, op->capdeps = cap;
    }
    op->deps[op->ndeps++] = (struct dep){s, seq};
    return 1;
}

static int blocking(const struct ag_fake_stream *s)
{
    return !(s->flags & CU_STREAM_NON_BLOCKING);
}

static struct ag_fake_stream *legacy_stream(void)
{
    struct ag_fake_stream *l;
    ag_fake_stream(CU_STREAM_LEGACY, 0, &l);
    return l;
}

/* The legacy stream's implicit ordering: what work newly submitted to s must wait for. */
static int implicit_deps(struct ag_fake_op *op, struct ag_fake_stream *s)
{
    struct ag_fake_stream *l = legacy_stream();
    if (s == l) {
        for (size_t i = 0; i < nqueued; i++) {
            struct ag_fake_stream *t = queued[i];
            if (t != s && blocking(t) && t->completed < t->submitted && !add_dep(op, t, t->submitted))
                return 0;
        }
    } else if (blocking(s) && l->completed < l->submitted && !add_dep(op, l, l->submitted)) {
        return 0;
    }
    return 1;
}

/* Event waits wait for the record that is the most recent now; event records become the
 * most recent record. Waits are resolved first, so a graph that records and then waits
 * for one event does not wait for itself (its own stream is in order anyway). */
static int resolve(struct ag_fake_op *op, struct ag_fake_stream *s, const struct ag_fake_node *nodes, size_t n,
                   int records)
{
    struct ag_fake_event *ev;
    for (size_t i = 0; i < n; i++) {
        const struct ag_fake_node *nd = &nodes[i];
        if (nd->type == CU_GRAPH_NODE_TYPE_GRAPH) {
            const struct ag_fake_node *child;
            size_t nchild;
            ag_fake_exec_nodes(nd->child, &child, &nchild);
            if (!resolve(op, s, child, nchild, records))
                return 0;
        } else if (ag_fake_event(nd->event, &ev) != CUDA_SUCCESS) {
            continue;
        } else if (!records && nd->type == CU_GRAPH_NODE_TYPE_WAIT_EVENT) {
            if (ev->rec_stream && ev->rec_stream != s && ev->rec_stream->completed < ev->rec_seq &&
                !add_dep(op, ev->rec_stream, ev->rec_seq))
                return 0;
        } else if (records && nd->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD) {
            ev->recorded = 1;
            ev->cap = NULL;
            ev->ndeps = 0;
            if (ag_fake_async()) {
                ev->rec_stream = s;
                ev->rec_seq = op->seq;
            }
        }
    }
    return 1;
}

static int deps_done(const struct ag_fake_op *op)
{
    for (size_t i = 0; i < op->ndeps; i++)
        if (op->deps[i].s->completed < op->deps[i].seq)
            return 0;
    return 1;
}

/* ---- workers -------------------------------------------------------------------------- */

static void op_free(struct ag_fake_op *op)
{
    free(op->nodes);
    free(op->deps);
    free(op->owned);
    free(op);
}

static void run_op(struct ag_fake_op *op, struct ag_fake_stream *s)
{
    if (op->ctx->sticky == CUDA_SUCCESS) {
        running_ctx = op->ctx;
        run_nodes(op->nodes, op->n, op, s);
        running_ctx = NULL;
    }
}

static void unlist(struct ag_fake_stream *s)
{
    for (size_t i = 0; i < nqueued; i++)
        if (queued[i] == s) {
            queued[i] = queued[--nqueued];
            break;
        }
    s->listed = 0;
}

static void *worker(void *arg)
{
    struct ag_fake_stream *s = arg;
    ag_fake_lock();
    for (;;) {
        while (!(s->head && deps_done(s->head)) && !(!s->head && s->magic == AG_FAKE_DEAD))
            ag_fake_wait();
        struct ag_fake_op *op = s->head;
        if (!op)
            break;
        run_op(op, s);
        s->head = op->next;
        if (!s->head)
            s->tail = NULL;
        s->completed = op->seq;
        op_free(op);
        ag_fake_broadcast();
    }
    s->worker = 0;
    unlist(s);
    ag_fake_broadcast(); /* a context going away waits for its workers to end */
    ag_fake_unlock();
    return NULL;
}

static int list(struct ag_fake_stream *s)
{
    if (s->listed)
        return 1;
    if (nqueued == capqueued) {
        size_t cap = capqueued ? 2 * capqueued : 16;
        struct ag_fake_stream **q = realloc(queued, cap * sizeof *q);
        if (!q)
            return 0;
        queued = q, capqueued = cap;
    }
    queued[nqueued++] = s;
    s->listed = 1;
    return 1;
}

/* A forked child has none of the parent's workers (and the driver does not support
 * CUDA in a forked child): its queues are dropped so that nothing waits for them. */
static void forked_child(void)
{
    for (size_t i = 0; i < nqueued; i++) {
        struct ag_fake_stream *s = queued[i];
        s->worker = 0;
        s->head = s->tail = NULL;
        s->completed = s->submitted;
    }
}

/* Workers live as long as their stream; without one (the thread could not be created)
 * the submitting thread runs the operation itself once everything it waits for is done. */
static void start_worker(struct ag_fake_stream *s)
{
    static int atfork;
    pthread_t t;
    pthread_attr_t attr;
    if (!atfork)
        atfork = pthread_atfork(NULL, NULL, forked_child) == 0;
    if (s->worker || pthread_attr_init(&attr))
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    s->worker = pthread_create(&t, &attr, worker, s) == 0;
    pthread_attr_destroy(&attr);
}

static void wait_seq(struct ag_fake_stream *s, unsigned long long seq)
{
    while (s->completed < seq)
        ag_fake_wait();
}

CUresult ag_fake_submit(struct ag_fake_stream *s, struct ag_fake_ctx *ctx, const struct ag_fake_node *nodes, size_t n,
                        int flags, void *owned)
{
    if (!ag_fake_async()) {
        struct ag_fake_op op = {.ctx = ctx};
        /* A host function run here may (wrongly) submit work itself. */
        struct ag_fake_ctx *outer = running_ctx;
        resolve(&op, s, nodes, n, 1);
        if (ctx->sticky == CUDA_SUCCESS) {
            running_ctx = ctx;
            run_nodes(nodes, n, &op, s);
            running_ctx = outer;
        }
        free(owned);
        return (flags & AG_FAKE_SUBMIT_WAIT) ? ctx->sticky : CUDA_SUCCESS;
    }
    struct ag_fake_op *op = calloc(1, sizeof *op);
    struct ag_fake_node *copy = malloc((n ? n : 1) * sizeof *copy);
    if (!op || !copy || !list(s)) {
        free(op);
        free(copy);
        free(owned);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    memcpy(copy, nodes, n * sizeof *copy);
    *op = (struct ag_fake_op){.ctx = ctx, .n = n, .nodes = copy, .owned = owned};
    op->seq = s->submitted + 1;
    if (!implicit_deps(op, s) || !resolve(op, s, copy, n, 0) || !resolve(op, s, copy, n, 1)) {
        op_free(op);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    s->submitted = op->seq;
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    start_worker(s);
    if (!s->worker) {
        /* Run it here, in order: earlier operations of s were run here too. */
        while (!deps_done(op))
            ag_fake_wait();
        s->head = s->tail = NULL;
        run_op(op, s);
        s->completed = op->seq;
        op_free(op);
    }
    ag_fake_broadcast();
    if (flags & AG_FAKE_SUBMIT_WAIT) {
        wait_seq(s, s->submitted);
        return ctx->sticky;
    }
    return CUDA_SUCCESS;
}

int ag_fake_stream_busy(struct ag_fake_stream *s)
{
    if (s->completed < s->submitted)
        return 1;
    if (s != legacy_stream())
        return 0;
    /* Synchronizing the legacy stream also waits for the blocking streams' earlier work,
     * which legacy work submitted now would wait for. */
    for (size_t i = 0; i < nqueued; i++)
        if (queued[i] != s && blocking(queued[i]) && queued[i]->completed < queued[i]->submitted)
            return 1;
    return 0;
}

void ag_fake_stream_wait(struct ag_fake_stream *s)
{
    if (!ag_fake_async())
        return;
    unsigned long long seq = s->submitted;
    wait_seq(s, seq);
    if (s == legacy_stream()) {
        size_t n = nqueued;
        struct dep *d = malloc((n ? n : 1) * sizeof *d);
        size_t k = 0;
        for (size_t i = 0; d && i < n; i++)
            if (queued[i] != s && blocking(queued[i]))
                d[k++] = (struct dep){queued[i], queued[i]->submitted};
        for (size_t i = 0; i < k; i++)
            wait_seq(d[i].s, d[i].seq);
        if (!d)
            ag_fake_drain();
        free(d);
    }
}

int ag_fake_event_busy(const struct ag_fake_event *e)
{
    return e->rec_stream && e->rec_stream->completed < e->rec_seq;
}

void ag_fake_event_wait(const struct ag_fake_event *e)
{
    while (ag_fake_event_busy(e))
        ag_fake_wait();
}

void ag_fake_drain(void)
{
    if (!ag_fake_async())
        return;
    for (;;) {
        size_t i = 0;
        while (i < nqueued && queued[i]->completed >= queued[i]->submitted)
            i++;
        if (i == nqueued)
            return;
        ag_fake_wait();
    }
}

void ag_fake_stream_retire(struct ag_fake_stream *s)
{
    if (!s->worker && s->listed)
        unlist(s);
    ag_fake_broadcast();
}
