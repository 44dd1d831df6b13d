/* fakecuda graphs: the explicit graph API, instantiation into executable snapshots,
 * graph launch (the snapshot's nodes, in a topological order, are submitted to the
 * stream as one operation: queue.c runs them), exec updates, and the node store that
 * stream capture appends to. Owned by the fakecuda test stand-in.
 * Bad graph, node and exec handles give CUDA_ERROR_INVALID_VALUE, as the driver
 * documents for these calls (other handle kinds give CUDA_ERROR_INVALID_HANDLE). */
#define _GNU_SOURCE
#include "fake.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ag_fake_graph {
    unsigned magic;
    struct ag_fake_node **nodes;
    size_t n, cap;
};

struct ag_fake_exec {
    unsigned magic;
    int index;
    size_t n;
    struct ag_fake_node *nodes; /* snapshot, in topological order */
    CUgraphNode *orig;          /* node of the instantiated graph each entry came from */
    CUgraphNode *alias;         /* node of the graph of the last successful update */
    size_t **depidx;            /* dependencies as indices into nodes, for update checks */
    size_t *ndeps;
};

static int next_exec_index = 1;

static CUresult check_graph(CUgraph h, struct ag_fake_graph **out)
{
    struct ag_fake_graph *g = (struct ag_fake_graph *)h;
    if (!g || g->magic != AG_FAKE_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    *out = g;
    return CUDA_SUCCESS;
}

static CUresult check_node(CUgraphNode h, struct ag_fake_node **out)
{
    struct ag_fake_node *n = (struct ag_fake_node *)h;
    if (!n || n->magic != AG_FAKE_NODE)
        return CUDA_ERROR_INVALID_VALUE;
    *out = n;
    return CUDA_SUCCESS;
}

static CUresult check_exec(CUgraphExec h, struct ag_fake_exec **out)
{
    struct ag_fake_exec *e = (struct ag_fake_exec *)h;
    if (!e || e->magic != AG_FAKE_EXEC)
        return CUDA_ERROR_INVALID_VALUE;
    *out = e;
    return CUDA_SUCCESS;
}

/* argptr points into the node's own args, so it is rebuilt whenever a node is copied. */
static void fix_argptr(struct ag_fake_node *n)
{
    if (n->type != CU_GRAPH_NODE_TYPE_KERNEL)
        return;
    for (unsigned i = 0; i < n->kdef->nparams; i++)
        n->argptr[i] = n->args + ag_fake_param_offset(n->kdef, i);
}

CUresult ag_fake_graph_new(struct ag_fake_graph **out)
{
    struct ag_fake_graph *g = calloc(1, sizeof *g);
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    g->magic = AG_FAKE_GRAPH;
    *out = g;
    return CUDA_SUCCESS;
}

CUresult ag_fake_graph_add(struct ag_fake_graph *g, const struct ag_fake_node *proto, const CUgraphNode *deps,
                           size_t ndeps, CUgraphNode *out)
{
    if (ndeps && !deps)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < ndeps; i++) {
        struct ag_fake_node *d;
        if (check_node(deps[i], &d) || d->graph != g)
            return CUDA_ERROR_INVALID_VALUE;
        for (size_t j = 0; j < i; j++)
            if (deps[j] == deps[i])
                return CUDA_ERROR_INVALID_VALUE;
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        struct ag_fake_node **nodes = realloc(g->nodes, cap * sizeof *nodes);
        if (!nodes)
            return CUDA_ERROR_OUT_OF_MEMORY;
        g->nodes = nodes, g->cap = cap;
    }
    struct ag_fake_node *n = malloc(sizeof *n);
    CUgraphNode *d = malloc((ndeps ? ndeps : 1) * sizeof *d);
    if (!n || !d) {
        free(n);
        free(d);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *n = *proto;
    n->magic = AG_FAKE_NODE;
    n->graph = g;
    if (ndeps)
        memcpy(d, deps, ndeps * sizeof *d);
    n->deps = d;
    n->ndeps = ndeps;
    fix_argptr(n);
    g->nodes[g->n++] = n;
    *out = (CUgraphNode)n;
    return CUDA_SUCCESS;
}

void ag_fake_exec_nodes(const struct ag_fake_exec *e, const struct ag_fake_node **nodes, size_t *n)
{
    *nodes = e->nodes;
    *n = e->n;
}

/* ---- graphs and nodes ------------------------------------------------------------------ */

static CUresult graph_create(CUgraph *out, unsigned flags)
{
    struct ag_fake_graph *g;
    if (!out || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_graph_new(&g);
    if (rc == CUDA_SUCCESS)
        *out = (CUgraph)g;
    return rc;
}

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags) AG_FAKE_BODY(graph_create(phGraph, flags))

static CUresult graph_destroy(CUgraph h)
{
    struct ag_fake_graph *g;
    CUresult rc = check_graph(h, &g);
    if (rc)
        return rc;
    g->magic = AG_FAKE_DEAD;
    for (size_t i = 0; i < g->n; i++)
        g->nodes[i]->magic = AG_FAKE_DEAD;
    return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph hGraph) AG_FAKE_BODY(graph_destroy(hGraph))

static CUresult add(CUgraphNode *out, CUgraph h, const CUgraphNode *deps, size_t ndeps,
                    const struct ag_fake_node *proto)
{
    struct ag_fake_graph *g;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = check_graph(h, &g);
    return rc ? rc : ag_fake_graph_add(g, proto, deps, ndeps, out);
}

/* Validates v2 kernel node params into a node; like the driver, func must be a real
 * CUfunction (a CUkernel goes in kern, with func NULL). Argument values are copied. */
static CUresult kernel_params(struct ag_fake_node *n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    const struct ag_fake_kdef *k;
    CUresult rc;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->func) {
        if (ag_fake_kernel_only((CUkernel)p->func, &k) == CUDA_SUCCESS)
            return CUDA_ERROR_INVALID_VALUE;
        rc = ag_fake_func_only(p->func, &k);
    } else {
        struct ag_fake_ctx *c;
        rc = ag_fake_kernel_only(p->kern, &k);
        if (rc == CUDA_SUCCESS)
            rc = ag_fake_check_ctx(p->ctx, &c);
    }
    if (rc)
        return rc;
    ag_fake_trace_field("name=%s", k->name);
    unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
    unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    rc = ag_fake_check_dims(grid, block, p->sharedMemBytes);
    if (rc)
        return rc;
    unsigned char args[AG_FAKE_MAX_ARG_BYTES];
    rc = ag_fake_pack_args(k, p->kernelParams, p->extra, args);
    if (rc)
        return rc;
    n->type = CU_GRAPH_NODE_TYPE_KERNEL;
    n->kdef = k;
    n->func = p->func;
    n->kern = p->func ? NULL : p->kern;
    n->ctx = p->ctx;
    memcpy(n->grid, grid, sizeof grid);
    memcpy(n->block, block, sizeof block);
    n->shmem = p->sharedMemBytes;
    memcpy(n->args, args, ag_fake_args_size(k));
    fix_argptr(n);
    return CUDA_SUCCESS;
}

static CUresult add_kernel(CUgraphNode *out, CUgraph h, const CUgraphNode *deps, size_t ndeps,
                           const CUDA_KERNEL_NODE_PARAMS *p)
{
    struct ag_fake_node proto = {0};
    CUresult rc = kernel_params(&proto, p);
    return rc ? rc : add(out, h, deps, ndeps, &proto);
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                 size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
    AG_FAKE_BODY(add_kernel(phGraphNode, hGraph, dependencies, numDependencies, nodeParams))

static CUresult add_memcpy(CUgraphNode *out, CUgraph h, const CUgraphNode *deps, size_t ndeps, const CUDA_MEMCPY3D *c,
                           CUcontext ctx)
{
    struct ag_fake_ctx *x;
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_check_ctx(ctx, &x);
    if (rc == CUDA_SUCCESS)
        rc = ag_fake_copy3d(c, 0);
    if (rc)
        return rc;
    struct ag_fake_node proto = {.type = CU_GRAPH_NODE_TYPE_MEMCPY, .copy = *c};
    ag_fake_copy_pins(c, proto.pins);
    return add(out, h, deps, ndeps, &proto);
}

CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                              size_t numDependencies, const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
    AG_FAKE_BODY(add_memcpy(phGraphNode, hGraph, dependencies, numDependencies, copyParams, ctx))

static CUresult memset_params(const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    struct ag_fake_ctx *x;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_check_ctx(ctx, &x);
    return rc ? rc : ag_fake_memset_check(p);
}

static CUresult add_memset(CUgraphNode *out, CUgraph h, const CUgraphNode *deps, size_t ndeps,
                           const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    CUresult rc = memset_params(p, ctx);
    if (rc)
        return rc;
    struct ag_fake_node proto = {.type = CU_GRAPH_NODE_TYPE_MEMSET, .set = *p};
    return add(out, h, deps, ndeps, &proto);
}

CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                              size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
    AG_FAKE_BODY(add_memset(phGraphNode, hGraph, dependencies, numDependencies, memsetParams, ctx))

static CUresult add_host(CUgraphNode *out, CUgraph h, const CUgraphNode *deps, size_t ndeps,
                         const CUDA_HOST_NODE_PARAMS *p)
{
    if (!p || !p->fn)
        return CUDA_ERROR_INVALID_VALUE;
    struct ag_fake_node proto = {.type = CU_GRAPH_NODE_TYPE_HOST, .host = *p};
    return add(out, h, deps, ndeps, &proto);
}

CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                            size_t numDependencies, const CUDA_HOST_NODE_PARAMS *nodeParams)
    AG_FAKE_BODY(add_host(phGraphNode, hGraph, dependencies, numDependencies, nodeParams))

static CUresult add_simple(CUgraphNode *out, CUgraph h, const CUgraphNode *deps, size_t ndeps, CUgraphNodeType type,
                           CUevent event)
{
    struct ag_fake_event *e;
    if (type != CU_GRAPH_NODE_TYPE_EMPTY && ag_fake_event(event, &e))
        return CUDA_ERROR_INVALID_VALUE;
    struct ag_fake_node proto = {.type = type, .event = event};
    if (type != CU_GRAPH_NODE_TYPE_EMPTY)
        proto.event_gen = e->gen;
    return add(out, h, deps, ndeps, &proto);
}

CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                             size_t numDependencies)
    AG_FAKE_BODY(add_simple(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_EMPTY, NULL))
CUresult cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                   size_t numDependencies, CUevent event)
    AG_FAKE_BODY(add_simple(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event))
CUresult cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                 size_t numDependencies, CUevent event)
    AG_FAKE_BODY(add_simple(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event))

static CUresult event_node_set(struct ag_fake_node *n, CUevent event)
{
    struct ag_fake_event *e;
    if (n->type != CU_GRAPH_NODE_TYPE_EVENT_RECORD || ag_fake_event(event, &e))
        return CUDA_ERROR_INVALID_VALUE;
    n->event = event;
    n->event_gen = e->gen;
    return CUDA_SUCCESS;
}

static CUresult record_node_set(CUgraphNode h, CUevent event)
{
    struct ag_fake_node *n;
    CUresult rc = check_node(h, &n);
    return rc ? rc : event_node_set(n, event);
}

CUresult cuGraphEventRecordNodeSetEvent(CUgraphNode hNode, CUevent event) AG_FAKE_BODY(record_node_set(hNode, event))

static CUresult kernel_node_get(CUgraphNode h, CUDA_KERNEL_NODE_PARAMS *p)
{
    struct ag_fake_node *n;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = check_node(h, &n);
    if (rc)
        return rc;
    if (n->type != CU_GRAPH_NODE_TYPE_KERNEL)
        return CUDA_ERROR_INVALID_VALUE;
    *p = (CUDA_KERNEL_NODE_PARAMS){n->func, n->grid[0], n->grid[1], n->grid[2], n->block[0], n->block[1],
                                   n->block[2], n->shmem, n->argptr, NULL, n->kern, n->ctx};
    return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams)
    AG_FAKE_BODY(kernel_node_get(hNode, nodeParams))

static CUresult kernel_node_set(struct ag_fake_node *n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (n->type != CU_GRAPH_NODE_TYPE_KERNEL)
        return CUDA_ERROR_INVALID_VALUE;
    return kernel_params(n, p);
}

static CUresult kernel_node_set_h(CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS *p)
{
    struct ag_fake_node *n;
    CUresult rc = check_node(h, &n);
    return rc ? rc : kernel_node_set(n, p);
}

CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
    AG_FAKE_BODY(kernel_node_set_h(hNode, nodeParams))

static CUresult kernel_attr(CUgraphNode h, CUkernelNodeAttrID id, CUkernelNodeAttrValue *get,
                            const CUkernelNodeAttrValue *set)
{
    struct ag_fake_node *n;
    CUresult rc = check_node(h, &n);
    if (rc)
        return rc;
    ag_fake_trace_field("attr=%d", (int)id);
    if (n->type != CU_GRAPH_NODE_TYPE_KERNEL || (unsigned)id >= 32 || (!get && !set))
        return CUDA_ERROR_INVALID_VALUE;
    if (set) {
        n->attr[id] = *set;
        n->attr_set |= 1u << id;
    } else if (n->attr_set & (1u << id)) {
        *get = n->attr[id];
    } else {
        memset(get, 0, sizeof *get);
    }
    return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeGetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr, CUkernelNodeAttrValue *value_out)
    AG_FAKE_BODY(kernel_attr(hNode, attr, value_out, NULL))
CUresult cuGraphKernelNodeSetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr, const CUkernelNodeAttrValue *value)
    AG_FAKE_BODY(kernel_attr(hNode, attr, NULL, value))

static CUresult get_nodes(CUgraph h, CUgraphNode *nodes, size_t *num)
{
    struct ag_fake_graph *g;
    if (!num)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = check_graph(h, &g);
    if (rc)
        return rc;
    if (nodes)
        for (size_t i = 0; i < *num; i++)
            nodes[i] = i < g->n ? (CUgraphNode)g->nodes[i] : NULL;
    *num = g->n;
    return CUDA_SUCCESS;
}

CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes) AG_FAKE_BODY(get_nodes(hGraph, nodes, numNodes))

static CUresult node_type(CUgraphNode h, CUgraphNodeType *type)
{
    struct ag_fake_node *n;
    if (!type)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = check_node(h, &n);
    if (rc == CUDA_SUCCESS)
        *type = n->type;
    return rc;
}

CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type) AG_FAKE_BODY(node_type(hNode, type))

/* ---- instantiation and launch ------------------------------------------------------------- */

static size_t index_of(const struct ag_fake_graph *g, CUgraphNode h)
{
    size_t i = 0;
    while (i < g->n && (CUgraphNode)g->nodes[i] != h)
        i++;
    return i;
}

static void exec_free(struct ag_fake_exec *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->depidx[i]);
    free(e->nodes);
    free(e->orig);
    free(e->alias);
    free(e->depidx);
    free(e->ndeps);
}

/* Snapshots g in a topological order (Kahn), so later edits of g do not affect it. */
static CUresult exec_build(const struct ag_fake_graph *g, struct ag_fake_exec *e)
{
    size_t n = g->n;
    size_t *indeg = calloc(n + 1, sizeof *indeg), *order = malloc((n + 1) * sizeof *order);
    e->n = n;
    e->nodes = malloc((n + 1) * sizeof *e->nodes);
    e->orig = malloc((n + 1) * sizeof *e->orig);
    e->alias = malloc((n + 1) * sizeof *e->alias);
    e->depidx = calloc(n + 1, sizeof *e->depidx);
    e->ndeps = calloc(n + 1, sizeof *e->ndeps);
    CUresult rc = (indeg && order && e->nodes && e->orig && e->alias && e->depidx && e->ndeps)
                      ? CUDA_SUCCESS
                      : CUDA_ERROR_OUT_OF_MEMORY;
    size_t done = 0;
    if (rc == CUDA_SUCCESS) {
        for (size_t i = 0; i < n; i++)
            indeg[i] = g->nodes[i]->ndeps;
        /* O(n^2) is fine at test sizes and keeps the sort obvious. */
        while (done < n) {
            size_t i = 0;
            while (i < n && indeg[i] != 0)
                i++;
            if (i == n)
                break;
            indeg[i] = (size_t)-1;
            order[done++] = i;
            for (size_t j = 0; j < n; j++)
                for (size_t d = 0; d < g->nodes[j]->ndeps; d++)
                    if (g->nodes[j]->deps[d] == (CUgraphNode)g->nodes[i])
                        indeg[j]--;
        }
        if (done < n)
            rc = CUDA_ERROR_INVALID_VALUE;
    }
    for (size_t k = 0; rc == CUDA_SUCCESS && k < n; k++) {
        const struct ag_fake_node *src = g->nodes[order[k]];
        e->nodes[k] = *src;
        fix_argptr(&e->nodes[k]);
        e->orig[k] = e->alias[k] = (CUgraphNode)src;
        e->ndeps[k] = src->ndeps;
        e->depidx[k] = malloc((src->ndeps + 1) * sizeof **e->depidx);
        if (!e->depidx[k]) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
            break;
        }
        for (size_t d = 0; d < src->ndeps; d++)
            e->depidx[k][d] = index_of(g, src->deps[d]);
    }
    free(indeg);
    free(order);
    if (rc)
        exec_free(e);
    return rc;
}

static CUresult instantiate(CUgraphExec *out, CUgraph h, unsigned long long flags)
{
    struct ag_fake_graph *g;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = check_graph(h, &g);
    if (rc)
        return rc;
    if (flags & ~(unsigned long long)(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                      CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY))
        return CUDA_ERROR_INVALID_VALUE;
    struct ag_fake_exec *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    rc = exec_build(g, e);
    if (rc) {
        free(e);
        return rc;
    }
    e->magic = AG_FAKE_EXEC;
    e->index = next_exec_index++;
    ag_fake_trace_field("exec=e%d nodes=%zu", e->index, e->n);
    *out = (CUgraphExec)e;
    return CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
    AG_FAKE_BODY(instantiate(phGraphExec, hGraph, flags))

static CUresult instantiate_log(CUgraphExec *out, CUgraph h, CUgraphNode *err, char *log, size_t size)
{
    if (err)
        *err = NULL;
    if (log && size)
        log[0] = 0;
    return instantiate(out, h, 0);
}

CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer,
                            size_t bufferSize)
    AG_FAKE_BODY(instantiate_log(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize))
CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer,
                               size_t bufferSize)
    AG_FAKE_BODY(instantiate_log(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize))

static CUresult instantiate_params(CUgraphExec *out, CUgraph h, CUDA_GRAPH_INSTANTIATE_PARAMS *p, int ptsz)
{
    struct ag_fake_stream *s;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_stream(p->hUploadStream, ptsz, &s);
    if (rc == CUDA_SUCCESS)
        rc = instantiate(out, h, p->flags);
    p->hErrNode_out = NULL;
    p->result_out = rc ? CUDA_GRAPH_INSTANTIATE_ERROR : CUDA_GRAPH_INSTANTIATE_SUCCESS;
    return rc;
}

CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
    AG_FAKE_BODY(instantiate_params(phGraphExec, hGraph, p, 0))
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
    AG_FAKE_BODY(instantiate_params(phGraphExec, hGraph, p, 1))

static CUresult exec_destroy(CUgraphExec h)
{
    struct ag_fake_exec *e;
    CUresult rc = check_exec(h, &e);
    if (rc)
        return rc;
    ag_fake_trace_field("exec=e%d", e->index);
    e->magic = AG_FAKE_DEAD;
    exec_free(e);
    return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) AG_FAKE_BODY(exec_destroy(hGraphExec))

/* A node set to an event destroyed before the launch (its handle dead, or given to a new
 * event) is refused: what the driver kept of the old event is not the program's new one. */
static int stale_event(const struct ag_fake_exec *e)
{
    struct ag_fake_event *ev;
    for (size_t i = 0; i < e->n; i++)
        if (e->nodes[i].event_gen &&
            (ag_fake_event(e->nodes[i].event, &ev) != CUDA_SUCCESS || ev->gen != e->nodes[i].event_gen))
            return 1;
    return 0;
}

/* With AG_FAKE_GRAPH_LAUNCH_US=N every cuGraphLaunch takes N microseconds of the caller's
 * time more, as a loaded machine or a large graph's upload may: the library's decisions must
 * not change with it (tests/determinism.bats). */
static void graph_launch_delay(void)
{
    static long us = -1;
    if (us < 0) {
        const char *v = getenv("AG_FAKE_GRAPH_LAUNCH_US");
        us = v ? strtol(v, NULL, 10) : 0;
        if (us < 0)
            us = 0;
    }
    if (us > 0) {
        struct timespec t = {us / 1000000, us % 1000000 * 1000};
        while (nanosleep(&t, &t) && errno == EINTR)
            ;
    }
}

static CUresult graph_launch(CUgraphExec h, CUstream hs, int ptsz)
{
    graph_launch_delay();
    struct ag_fake_exec *e;
    struct ag_fake_stream *s;
    CUresult rc = check_exec(h, &e);
    if (rc)
        return rc;
    ag_fake_trace_field("exec=e%d nodes=%zu", e->index, e->n);
    rc = ag_fake_stream(hs, ptsz, &s);
    if (rc)
        return rc;
    ag_fake_trace_field("stream=%s dev=%d", ag_fake_stream_label(s), ag_fake_stream_device(s));
    if (stale_event(e))
        return CUDA_ERROR_INVALID_VALUE;
    if (!ag_fake_capturing(s)) {
        struct ag_fake_ctx *c;
        if (s->ctx)
            c = s->ctx;
        else if ((rc = ag_fake_current_ctx(&c)))
            return rc;
        return ag_fake_submit(s, c, e->nodes, e->n, 0, NULL);
    }
    /* Captured graph launches become child-graph nodes holding their own snapshot. */
    struct ag_fake_exec *child = calloc(1, sizeof *child);
    if (!child)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *child = *e;
    child->nodes = malloc((e->n + 1) * sizeof *child->nodes);
    if (!child->nodes) {
        free(child);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < e->n; i++) {
        child->nodes[i] = e->nodes[i];
        fix_argptr(&child->nodes[i]);
    }
    child->orig = child->alias = NULL;
    child->depidx = NULL;
    child->ndeps = NULL;
    struct ag_fake_node proto = {.type = CU_GRAPH_NODE_TYPE_GRAPH, .child = child};
    return ag_fake_capture_add(s, &proto);
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) AG_FAKE_BODY(graph_launch(hGraphExec, hStream, 0))
CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) AG_FAKE_BODY(graph_launch(hGraphExec, hStream, 1))

static CUresult graph_upload(CUgraphExec h, CUstream hs, int ptsz)
{
    struct ag_fake_exec *e;
    struct ag_fake_stream *s;
    CUresult rc = check_exec(h, &e);
    return rc ? rc : ag_fake_stream(hs, ptsz, &s);
}

CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream) AG_FAKE_BODY(graph_upload(hGraphExec, hStream, 0))
CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream) AG_FAKE_BODY(graph_upload(hGraphExec, hStream, 1))

/* ---- exec updates ------------------------------------------------------------------------- */

static CUresult exec_node(CUgraphExec h, CUgraphNode node, CUgraphNodeType type, struct ag_fake_node **out)
{
    struct ag_fake_exec *e;
    CUresult rc = check_exec(h, &e);
    if (rc)
        return rc;
    ag_fake_trace_field("exec=e%d", e->index);
    for (size_t i = 0; i < e->n; i++)
        if (e->orig[i] == node || e->alias[i] == node) {
            if (e->nodes[i].type != type)
                return CUDA_ERROR_INVALID_VALUE;
            *out = &e->nodes[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

static CUresult exec_kernel_set(CUgraphExec h, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p)
{
    struct ag_fake_node *n;
    CUresult rc = exec_node(h, node, CU_GRAPH_NODE_TYPE_KERNEL, &n);
    return rc ? rc : kernel_node_set(n, p);
}

CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                           const CUDA_KERNEL_NODE_PARAMS *nodeParams)
    AG_FAKE_BODY(exec_kernel_set(hGraphExec, hNode, nodeParams))

static CUresult exec_memcpy_set(CUgraphExec h, CUgraphNode node, const CUDA_MEMCPY3D *c, CUcontext ctx)
{
    struct ag_fake_node *n;
    struct ag_fake_ctx *x;
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = exec_node(h, node, CU_GRAPH_NODE_TYPE_MEMCPY, &n);
    if (rc == CUDA_SUCCESS)
        rc = ag_fake_check_ctx(ctx, &x);
    if (rc == CUDA_SUCCESS)
        rc = ag_fake_copy3d(c, 0);
    if (rc == CUDA_SUCCESS) {
        n->copy = *c;
        ag_fake_copy_pins(c, n->pins);
    }
    return rc;
}

CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMCPY3D *copyParams,
                                        CUcontext ctx) AG_FAKE_BODY(exec_memcpy_set(hGraphExec, hNode, copyParams, ctx))

static CUresult exec_memset_set(CUgraphExec h, CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    struct ag_fake_node *n;
    CUresult rc = exec_node(h, node, CU_GRAPH_NODE_TYPE_MEMSET, &n);
    if (rc == CUDA_SUCCESS)
        rc = memset_params(p, ctx);
    if (rc == CUDA_SUCCESS)
        n->set = *p;
    return rc;
}

CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
    AG_FAKE_BODY(exec_memset_set(hGraphExec, hNode, memsetParams, ctx))

/*
 * An executable's record node whose event was destroyed (its handle not an event now) is
 * refused a new event. Inferred from the H200, not from documentation: in run 11 of
 * docs/gpu-results.md the driver refused 9 of 22 in-place updates in `holes xla-steps`, where
 * each step destroys the event a variant's node still names and the driver hands the
 * freed handles out again, so that a handle is sometimes an event again by the update.
 */
static CUresult exec_record_set(CUgraphExec h, CUgraphNode node, CUevent event)
{
    struct ag_fake_node *n;
    struct ag_fake_event *old;
    CUresult rc = exec_node(h, node, CU_GRAPH_NODE_TYPE_EVENT_RECORD, &n);
    if (rc == CUDA_SUCCESS && ag_fake_event(n->event, &old) != CUDA_SUCCESS)
        rc = CUDA_ERROR_INVALID_VALUE;
    return rc ? rc : event_node_set(n, event);
}

CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event)
    AG_FAKE_BODY(exec_record_set(hGraphExec, hNode, event))

static CUresult exec_host_set(CUgraphExec h, CUgraphNode node, const CUDA_HOST_NODE_PARAMS *p)
{
    struct ag_fake_node *n;
    if (!p || !p->fn)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = exec_node(h, node, CU_GRAPH_NODE_TYPE_HOST, &n);
    if (rc == CUDA_SUCCESS)
        n->host = *p;
    return rc;
}

CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS *nodeParams)
    AG_FAKE_BODY(exec_host_set(hGraphExec, hNode, nodeParams))

/* Accepted when g has the exec's topology and node types (compared in g's node order
 * after the same topological sort); then every node's parameters are copied over. */
static CUresult exec_update(CUgraphExec h, CUgraph hg, CUgraphExecUpdateResultInfo *info)
{
    struct ag_fake_exec *e;
    struct ag_fake_graph *g;
    if (!info)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = check_exec(h, &e);
    if (rc == CUDA_SUCCESS)
        rc = check_graph(hg, &g);
    if (rc)
        return rc;
    ag_fake_trace_field("exec=e%d nodes=%zu", e->index, g->n);
    struct ag_fake_exec fresh;
    memset(info, 0, sizeof *info);
    rc = exec_build(g, &fresh);
    if (rc)
        return rc;
    info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    if (fresh.n != e->n)
        info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    for (size_t i = 0; info->result == CU_GRAPH_EXEC_UPDATE_SUCCESS && i < e->n; i++) {
        if (fresh.nodes[i].type != e->nodes[i].type) {
            info->result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
        } else if (fresh.ndeps[i] != e->ndeps[i] ||
                   (fresh.ndeps[i] &&
                    memcmp(fresh.depidx[i], e->depidx[i], fresh.ndeps[i] * sizeof *fresh.depidx[i]))) {
            info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        }
        if (info->result != CU_GRAPH_EXEC_UPDATE_SUCCESS)
            info->errorNode = fresh.orig[i];
    }
    if (info->result == CU_GRAPH_EXEC_UPDATE_SUCCESS)
        for (size_t i = 0; i < e->n; i++) {
            e->nodes[i] = fresh.nodes[i];
            fix_argptr(&e->nodes[i]);
            e->alias[i] = fresh.orig[i];
        }
    exec_free(&fresh);
    return info->result == CU_GRAPH_EXEC_UPDATE_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
}

CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo)
    AG_FAKE_BODY(exec_update(hGraphExec, hGraph, resultInfo))
