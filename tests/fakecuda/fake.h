/* Internal header of the fakecuda stand-in for libcuda (test infrastructure only).
 * It declares the handle objects and the ag_fake_* helpers shared by the source files
 * of tests/fakecuda; nothing here is exported from libcuda.so.1 (the version script
 * exports cu* only). Compiled with -D__CUDA_API_VERSION_INTERNAL so that cuda.h
 * declares every versioned, _ptds and _ptsz entry point under its real symbol name. */
#ifndef AG_FAKE_H
#define AG_FAKE_H

#include <cuda.h>
#include <cudaProfiler.h>
#include <stddef.h>
#include <stdint.h>

/* Handle objects start with a magic tag so that a bad or destroyed handle is reported as
 * CUDA_ERROR_INVALID_HANDLE instead of crashing. Destroyed objects are never freed, only
 * re-tagged AG_FAKE_DEAD, so that use-after-destroy stays detectable in tests; only a
 * destroyed stream's record is given to a later stream, as a driver reuses handles. */
enum ag_fake_magic {
    AG_FAKE_DEAD = 0x64656164,
    AG_FAKE_CTX = 0x63747821,
    AG_FAKE_MODULE = 0x6d6f6421,
    AG_FAKE_LIBRARY = 0x6c696221,
    AG_FAKE_FUNC = 0x66756e21,
    AG_FAKE_KERNEL = 0x6b726e21,
    AG_FAKE_STREAM = 0x73746d21,
    AG_FAKE_EVENT = 0x65766e21,
    AG_FAKE_GRAPH = 0x67726621,
    AG_FAKE_NODE = 0x6e6f6421,
    AG_FAKE_EXEC = 0x65786521,
};

#define AG_FAKE_MAX_PARAMS 16
#define AG_FAKE_MAX_ARG_BYTES 4096

/* ---- API entry/exit (core.c) ---------------------------------------------------- */

/* Every exported function body is AG_FAKE_BODY(impl call): it takes the global lock,
 * starts the trace line with the exported symbol name (__func__), checks cuInit, runs
 * the implementation and writes the trace line. */
CUresult ag_fake_begin(const char *symbol, int needs_init);
CUresult ag_fake_end(CUresult rc);
#define AG_FAKE_BODY_INIT(needs_init, call)                                  \
    {                                                                          \
        CUresult rc_ = ag_fake_begin(__func__, needs_init);                    \
        if (rc_ == CUDA_SUCCESS)                                               \
            rc_ = (call);                                                      \
        return ag_fake_end(rc_);                                               \
    }
#define AG_FAKE_BODY(call) AG_FAKE_BODY_INIT(1, call)
#define AG_FAKE_BODY_NOINIT(call) AG_FAKE_BODY_INIT(0, call)

/* Runs a user host function with the "inside a host function" flag set: CUDA calls made
 * from there fail with CUDA_ERROR_NOT_PERMITTED, as the driver forbids them. */
void ag_fake_call_host(CUhostFn fn, void *user);
void ag_fake_call_callback(CUstreamCallback fn, CUstream s, CUresult status, void *user);

/* The global lock, for the stream workers of asynchronous mode (queue.c): they take it to
 * run an operation and wait on the one condition variable, which every change of queue
 * state broadcasts. API calls that wait (synchronize, synchronous copies) wait on it too,
 * so the lock is free for workers while a caller waits. */
void ag_fake_lock(void);
void ag_fake_unlock(void);
void ag_fake_wait(void);
void ag_fake_broadcast(void);

/* ---- trace (trace.c) -------------------------------------------------------------- */
void ag_fake_trace_start(const char *symbol);
void ag_fake_trace_field(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ag_fake_trace_finish(CUresult rc);

/* ---- devices and contexts (device.c) ----------------------------------------------- */
#define AG_FAKE_MAX_DEVICES 16
struct ag_fake_ctx {
    unsigned magic;
    int primary;
    unsigned flags;
    unsigned long long id;
    CUdevice device;
    unsigned peers; /* bit d: peer access to device d's memory enabled */
    /* The sticky error of a device fault: once set, every later call in this context
     * returns it, as the driver does after a kernel fault, until the context is reset. */
    CUresult sticky;
};
CUresult ag_fake_current_ctx(struct ag_fake_ctx **out);
CUresult ag_fake_check_ctx(CUcontext h, struct ag_fake_ctx **out);
int ag_fake_ctx_alive(const struct ag_fake_ctx *c);
/* The device of s's context (the current one for the legacy and per-thread streams), or
 * -1 when there is none. */
struct ag_fake_stream;
int ag_fake_stream_device(const struct ag_fake_stream *s);
/* What the driver refuses of a launch into stream s from context cur: a stream of another
 * context, arguments pointing at another device's memory without peer access. */
struct ag_fake_kdef;
CUresult ag_fake_launch_check(const struct ag_fake_stream *s, const struct ag_fake_ctx *cur,
                              const struct ag_fake_kdef *k, const unsigned char *args);

/* ---- kernels (kernels.c) ---------------------------------------------------------- */
struct ag_fake_kdef {
    const char *name;
    unsigned nparams;
    struct {
        size_t size, align;
    } param[AG_FAKE_MAX_PARAMS];
    /* Runs the kernel body for global thread indices [0, nthreads). */
    void (*run)(const struct ag_fake_kdef *k, const unsigned char *args, unsigned long long nthreads);
};
const struct ag_fake_kdef *ag_fake_kdef_find(const char *name);
size_t ag_fake_param_offset(const struct ag_fake_kdef *k, unsigned i);
size_t ag_fake_args_size(const struct ag_fake_kdef *k);

/* ---- modules, libraries, functions (module.c) -------------------------------------- */
/* Resolves a CUfunction that may also be a CUkernel cast to CUfunction (as cudart does). */
CUresult ag_fake_launchable(CUfunction f, const struct ag_fake_kdef **out);
CUresult ag_fake_func_only(CUfunction f, const struct ag_fake_kdef **out);
CUresult ag_fake_kernel_only(CUkernel k, const struct ag_fake_kdef **out);
/* Packs kernelParams or an `extra` buffer into args (AG_FAKE_MAX_ARG_BYTES bytes). */
CUresult ag_fake_pack_args(const struct ag_fake_kdef *k, void **params, void **extra, unsigned char *args);

/* ---- memory (memory.c) ------------------------------------------------------------ */
/* The context that allocated the device memory p points into, or NULL. */
const struct ag_fake_ctx *ag_fake_device_memory_ctx(CUdeviceptr p);
/* Device memory not allocated (of the stand-in's 80 GiB). */
size_t ag_fake_device_free(void);
/* 1 when [p, p + n) lies in device memory or page-locked host memory (what a stream
 * memory operation may name). */
int ag_fake_mapped(uintptr_t p, size_t n);
/* Validates c, and performs it when execute is set. */
CUresult ag_fake_copy3d(const CUDA_MEMCPY3D *c, int execute);
CUresult ag_fake_memset_check(const CUDA_MEMSET_NODE_PARAMS *p);
void ag_fake_memset2d(CUdeviceptr dst, size_t pitch, unsigned value, unsigned elem, size_t width, size_t height);
void ag_fake_copy1d_desc(CUDA_MEMCPY3D *c, CUmemorytype dt, void *dst, CUmemorytype st, const void *src, size_t bytes);
void ag_fake_copy2d_desc(CUDA_MEMCPY3D *c, const CUDA_MEMCPY2D *p);

/* ---- streams, events, capture (stream.c) ------------------------------------------- */
struct ag_fake_capture;
struct ag_fake_op;
struct ag_fake_stream {
    unsigned magic;
    int index; /* -1 legacy, -2 per-thread, else creation index */
    unsigned flags;
    int priority;
    struct ag_fake_ctx *ctx;
    struct ag_fake_capture *cap;
    /* Capture dependency frontier: nodes the next captured node depends on. */
    CUgraphNode *deps;
    size_t ndeps, capdeps;
    /* Asynchronous mode (queue.c): the queue, operations submitted and completed so far
     * (an operation's sequence number is `submitted` after it was queued), whether a
     * worker thread runs the queue, and whether the stream is in the registry. */
    struct ag_fake_op *head, *tail;
    unsigned long long submitted, completed;
    int worker, listed;
};
struct ag_fake_event {
    unsigned magic;
    unsigned flags;
    int recorded;
    long long ns;
    /* Which creation this is: a handle AG_FAKE_EVENT_REUSE gave again gets a new one. */
    unsigned long long gen;
    /* Asynchronous mode: the most recent record is the operation rec_seq of rec_stream;
     * the event is complete once that stream has completed it (no record: complete). */
    struct ag_fake_stream *rec_stream;
    unsigned long long rec_seq;
    /* Set when recorded into a capture: lets other streams join it (fork/join). */
    struct ag_fake_capture *cap;
    CUgraphNode *deps;
    size_t ndeps;
};
CUresult ag_fake_stream(CUstream h, int per_thread_default, struct ag_fake_stream **out);
/* Context c is destroyed (a primary one reset or released for the last time): its
 * streams die with it, and their handles may be given to new streams. */
void ag_fake_ctx_streams_gone(const struct ag_fake_ctx *c);
const char *ag_fake_stream_label(const struct ag_fake_stream *s);
CUresult ag_fake_event(CUevent h, struct ag_fake_event **out);
/* Synchronous APIs call this: fails (and invalidates captures) when capture rules forbid. */
CUresult ag_fake_capture_unsafe(struct ag_fake_stream *s);
/* Work submitted to a capturing stream goes to ag_fake_capture_add, which appends a copy
 * of proto to the capture graph after the stream's dependency frontier. */
struct ag_fake_graph;
struct ag_fake_node;
int ag_fake_capturing(const struct ag_fake_stream *s);
CUresult ag_fake_capture_add(struct ag_fake_stream *s, const struct ag_fake_node *proto);

/* ---- graphs (graph.c) ------------------------------------------------------------- */
struct ag_fake_node {
    unsigned magic;
    CUgraphNodeType type;
    struct ag_fake_graph *graph;
    CUgraphNode *deps;
    size_t ndeps;
    /* kernel */
    const struct ag_fake_kdef *kdef;
    CUfunction func;
    CUkernel kern;
    CUcontext ctx;
    unsigned grid[3], block[3], shmem;
    unsigned char args[AG_FAKE_MAX_ARG_BYTES];
    void *argptr[AG_FAKE_MAX_PARAMS];
    CUkernelNodeAttrValue attr[32];
    unsigned attr_set;
    /* memcpy, and the page-locked ranges it was made with (ag_fake_copy_pins) */
    CUDA_MEMCPY3D copy;
    unsigned long long pins[2];
    /* memset */
    CUDA_MEMSET_NODE_PARAMS set;
    /* host */
    CUDA_HOST_NODE_PARAMS host;
    /* event record / wait, and the event's generation when a graph node was set to it
     * (0 on a stream's own record) */
    CUevent event;
    unsigned long long event_gen;
    /* child graph (a captured cuGraphLaunch): a private snapshot of the launched exec */
    struct ag_fake_exec *child;
    /* cuStreamAddCallback, queued as a host node: the callback and the stream it names */
    CUstreamCallback callback;
    CUstream callback_stream;
};
CUresult ag_fake_graph_new(struct ag_fake_graph **out);
CUresult ag_fake_graph_add(struct ag_fake_graph *g, const struct ag_fake_node *proto, const CUgraphNode *deps,
                           size_t ndeps, CUgraphNode *out);
void ag_fake_exec_nodes(const struct ag_fake_exec *e, const struct ag_fake_node **nodes, size_t *n);
/* Runs an already validated launch synchronously. */
void ag_fake_run_kernel(const struct ag_fake_kdef *k, const unsigned char *args, const unsigned grid[3],
                        const unsigned block[3]);
CUresult ag_fake_check_dims(const unsigned grid[3], const unsigned block[3], unsigned shmem);

/* ---- execution (queue.c) ----------------------------------------------------------- */
/* 1 when AG_FAKE_ASYNC=1: stream work runs on per-stream worker threads. */
int ag_fake_async(void);
/* Submission flag: the caller returns only after the work completed (synchronous copies
 * and sets, copies to pageable memory). */
enum { AG_FAKE_SUBMIT_WAIT = 1 };
/* Runs the n nodes in stream s in context ctx, now (synchronous mode) or queued behind
 * the stream's earlier work (asynchronous mode); `owned` is freed once they ran. Event
 * record nodes become the event's most recent record; event wait nodes wait for the
 * record that is the most recent at this call. Returns the sticky error with
 * AG_FAKE_SUBMIT_WAIT when the context faulted. */
CUresult ag_fake_submit(struct ag_fake_stream *s, struct ag_fake_ctx *ctx, const struct ag_fake_node *nodes, size_t n,
                        int flags, void *owned);
/* The kernel being run faulted: its context gets the sticky error err. */
void ag_fake_fault(CUresult err);
/* Asynchronous mode: 1 while s (with the legacy stream's implicit ordering) has work
 * that has not completed; ag_fake_stream_wait waits for it. */
int ag_fake_stream_busy(struct ag_fake_stream *s);
void ag_fake_stream_wait(struct ag_fake_stream *s);
int ag_fake_event_busy(const struct ag_fake_event *e);
void ag_fake_event_wait(const struct ag_fake_event *e);
/* Waits for every stream's queue to drain (context synchronize, frees). */
void ag_fake_drain(void);
/* The worker of a destroyed stream drains the queue, then ends. */
void ag_fake_stream_retire(struct ag_fake_stream *s);

/* ---- memory checks at execution (memory.c) ------------------------------------------ */
/* 1 when the host endpoint of c is pageable memory (source: srcside set). */
int ag_fake_copy_pageable(const CUDA_MEMCPY3D *c, int srcside);
/* The page-locked host ranges (their ids; 0: none) that a memcpy node's endpoints lie in
 * when the node is made. The node's device mapping of them dies with the range, so a
 * replay after the range was unregistered or freed faults, as on a GPU. */
void ag_fake_copy_pins(const CUDA_MEMCPY3D *c, unsigned long long pins[2]);
int ag_fake_copy_pins_valid(const CUDA_MEMCPY3D *c, const unsigned long long pins[2]);

#endif
