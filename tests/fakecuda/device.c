/* fakecuda devices and contexts: AG_FAKE_DEVICES=N CPU "devices" (default 1) in one
 * process, a primary context per device, created contexts, the per-thread stacks of
 * current contexts, and peer access between devices. A context knows its device; memory
 * (memory.c) and streams (stream.c) know their context, so the stand-in can refuse what
 * the driver refuses: a launch into a stream of another context, and a kernel reading
 * memory of another device without peer access (an illegal address on a GPU).
 * Peer access is kept per context, toward the device of the peer context (all a program
 * that uses primary contexts, as cudart does, can tell apart). */
#define _GNU_SOURCE
#include "fake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- devices ----------------------------------------------------------------------- */

static int ndevices;

/* Read once, at the first call that needs it (always under the global lock). A bad value
 * is reported in one line and the default used, as libautograph does with its options. */
static int device_count_now(void)
{
    if (ndevices)
        return ndevices;
    ndevices = 1;
    const char *v = getenv("AG_FAKE_DEVICES");
    if (v && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end == '\0' && n >= 1 && n <= AG_FAKE_MAX_DEVICES) {
            ndevices = (int)n;
        } else {
            fprintf(stderr, "fakecuda: AG_FAKE_DEVICES=%s: expected an integer from 1 to %d; using 1\n", v,
                    AG_FAKE_MAX_DEVICES);
        }
    }
    return ndevices;
}

static CUresult check_dev(CUdevice d)
{
    return d >= 0 && d < device_count_now() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult device_get(CUdevice *d, int ordinal)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(ordinal))
        return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) AG_FAKE_BODY(device_get(device, ordinal))

static CUresult device_count(int *n)
{
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    *n = device_count_now();
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) AG_FAKE_BODY(device_count(count))

static CUresult device_name(char *name, int len, CUdevice d)
{
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    /* Device 0 keeps the one-device name; the others say which they are. */
    if (d == 0)
        snprintf(name, (size_t)len, "%s", "autograph CPU stand-in");
    else
        snprintf(name, (size_t)len, "autograph CPU stand-in %d", (int)d);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev) AG_FAKE_BODY(device_name(name, len, dev))

#define TOTAL_MEM (80ull << 30)

static CUresult total_mem(size_t *bytes, CUdevice d)
{
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    *bytes = TOTAL_MEM;
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) AG_FAKE_BODY(total_mem(bytes, dev))

static CUresult device_uuid(CUuuid *u, CUdevice d)
{
    if (!u)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    memcpy(u->bytes, "ag-fake-cuda-dev", sizeof u->bytes);
    u->bytes[sizeof u->bytes - 1] = (char)(u->bytes[sizeof u->bytes - 1] + d);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) AG_FAKE_BODY(device_uuid(uuid, dev))
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) AG_FAKE_BODY(device_uuid(uuid, dev))

/* Values of an H200-class device (compute capability 9.0), so programs that size their
 * launches from attributes behave as they would on the real thing. */
static int attribute_value(CUdevice_attribute a)
{
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1980000;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 6144;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 52428800;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 2;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: return 82837504;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: return 134213632;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: return 0;
    default: return 0;
    }
}

static CUresult device_attribute(int *v, CUdevice_attribute a, CUdevice d)
{
    if (!v || a <= 0 || a >= CU_DEVICE_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    ag_fake_trace_field("attr=%d", (int)a);
    *v = attribute_value(a);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
    AG_FAKE_BODY(device_attribute(pi, attrib, dev))

/* ---- contexts --------------------------------------------------------------------- */

/* Primary context of device d: primary[d], id d + 1; created contexts get the ids after
 * every possible primary one, so ids never depend on AG_FAKE_DEVICES. */
static struct ag_fake_ctx primary[AG_FAKE_MAX_DEVICES];
static int primary_refs[AG_FAKE_MAX_DEVICES];
static unsigned long long next_ctx_id = AG_FAKE_MAX_DEVICES + 1;

static struct ag_fake_ctx *primary_of(CUdevice d)
{
    struct ag_fake_ctx *c = &primary[d];
    if (c->magic != AG_FAKE_CTX)
        *c = (struct ag_fake_ctx){.magic = AG_FAKE_CTX, .primary = 1, .id = (unsigned long long)d + 1, .device = d};
    return c;
}

/* The driver keeps a stack of current contexts per thread. */
#define STACK 16
static _Thread_local struct ag_fake_ctx *stack[STACK];
static _Thread_local int depth;

int ag_fake_ctx_alive(const struct ag_fake_ctx *c)
{
    return c && c->magic == AG_FAKE_CTX && (!c->primary || primary_refs[c->device] > 0);
}

CUresult ag_fake_check_ctx(CUcontext h, struct ag_fake_ctx **out)
{
    struct ag_fake_ctx *c = (struct ag_fake_ctx *)h;
    if (!c)
        return ag_fake_current_ctx(out);
    if (!ag_fake_ctx_alive(c))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    return CUDA_SUCCESS;
}

CUresult ag_fake_current_ctx(struct ag_fake_ctx **out)
{
    if (depth == 0 || !ag_fake_ctx_alive(stack[depth - 1]))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = stack[depth - 1];
    return CUDA_SUCCESS;
}

static CUresult primary_retain(CUcontext *pctx, CUdevice d)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    primary_refs[d]++;
    *pctx = (CUcontext)primary_of(d);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) AG_FAKE_BODY(primary_retain(pctx, dev))

static CUresult primary_release(CUdevice d)
{
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    if (primary_refs[d] == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    /* The last release destroys the primary context, and its sticky error with it. */
    if (--primary_refs[d] == 0) {
        ag_fake_drain();
        ag_fake_ctx_streams_gone(primary_of(d));
        primary_of(d)->sticky = CUDA_SUCCESS;
    }
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) AG_FAKE_BODY(primary_release(dev))

static CUresult primary_reset(CUdevice d)
{
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    ag_fake_drain();
    ag_fake_ctx_streams_gone(primary_of(d));
    primary_refs[d] = 0;
    primary_of(d)->flags = 0;
    primary_of(d)->peers = 0;
    primary_of(d)->sticky = CUDA_SUCCESS;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) AG_FAKE_BODY(primary_reset(dev))

static CUresult primary_state(CUdevice d, unsigned *flags, int *active)
{
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    *flags = primary_of(d)->flags;
    *active = primary_refs[d] > 0;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
    AG_FAKE_BODY(primary_state(dev, flags, active))

static CUresult primary_set_flags(CUdevice d, unsigned flags)
{
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    if (flags & ~0x1fu)
        return CUDA_ERROR_INVALID_VALUE;
    primary_of(d)->flags = flags;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) AG_FAKE_BODY(primary_set_flags(dev, flags))

static CUresult push(struct ag_fake_ctx *c)
{
    if (depth == STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    stack[depth++] = c;
    return CUDA_SUCCESS;
}

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice d)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d))
        return CUDA_ERROR_INVALID_DEVICE;
    struct ag_fake_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *c = (struct ag_fake_ctx){.magic = AG_FAKE_CTX, .flags = flags, .id = next_ctx_id++, .device = d};
    CUresult rc = push(c);
    if (rc)
        return rc;
    ag_fake_trace_field("ctx=%llu", c->id);
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) AG_FAKE_BODY(ctx_create(pctx, flags, dev))
/* CUDA 12.5's form, with creation parameters; not built against older headers. */
#if CUDA_VERSION >= 12050
CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev)
    AG_FAKE_BODY(ctxCreateParams && (ctxCreateParams->execAffinityParams || ctxCreateParams->cigParams)
                     ? CUDA_ERROR_NOT_SUPPORTED
                     : ctx_create(pctx, flags, dev))
#endif

static CUresult ctx_destroy(CUcontext h)
{
    struct ag_fake_ctx *c = (struct ag_fake_ctx *)h;
    if (!c || c->magic != AG_FAKE_CTX || c->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    ag_fake_drain();
    c->magic = AG_FAKE_DEAD;
    if (depth > 0 && stack[depth - 1] == c)
        depth--;
    return CUDA_SUCCESS;
}

CUresult cuCtxDestroy_v2(CUcontext ctx) AG_FAKE_BODY(ctx_destroy(ctx))

static CUresult ctx_get_current(CUcontext *pctx)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = depth ? (CUcontext)stack[depth - 1] : NULL;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx) AG_FAKE_BODY(ctx_get_current(pctx))

static CUresult ctx_set_current(CUcontext h)
{
    struct ag_fake_ctx *c = (struct ag_fake_ctx *)h;
    if (!c) {
        if (depth)
            depth--;
        return CUDA_SUCCESS;
    }
    if (c->magic != AG_FAKE_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (depth == 0)
        return push(c);
    stack[depth - 1] = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) AG_FAKE_BODY(ctx_set_current(ctx))

static CUresult ctx_push(CUcontext h)
{
    struct ag_fake_ctx *c = (struct ag_fake_ctx *)h;
    if (!c || c->magic != AG_FAKE_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    return push(c);
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx) AG_FAKE_BODY(ctx_push(ctx))

static CUresult ctx_pop(CUcontext *pctx)
{
    if (depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    depth--;
    if (pctx)
        *pctx = (CUcontext)stack[depth];
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx) AG_FAKE_BODY(ctx_pop(pctx))

static CUresult ctx_get_device(CUdevice *d)
{
    struct ag_fake_ctx *c;
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_current_ctx(&c);
    if (rc)
        return rc;
    *d = c->device;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device) AG_FAKE_BODY(ctx_get_device(device))

static CUresult ctx_get_flags(unsigned *flags)
{
    struct ag_fake_ctx *c;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_current_ctx(&c);
    if (rc)
        return rc;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetFlags(unsigned int *flags) AG_FAKE_BODY(ctx_get_flags(flags))

static CUresult ctx_get_id(CUcontext h, unsigned long long *id)
{
    struct ag_fake_ctx *c;
    if (!id)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_check_ctx(h, &c);
    if (rc)
        return rc;
    *id = c->id;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId) AG_FAKE_BODY(ctx_get_id(ctx, ctxId))

static CUresult ctx_api_version(CUcontext h, unsigned *version)
{
    struct ag_fake_ctx *c;
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_check_ctx(h, &c);
    if (rc)
        return rc;
    *version = 3020;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version) AG_FAKE_BODY(ctx_api_version(ctx, version))

static CUresult priority_range(int *least, int *greatest)
{
    struct ag_fake_ctx *c;
    CUresult rc = ag_fake_current_ctx(&c);
    if (rc)
        return rc;
    if (least)
        *least = 0;
    if (greatest)
        *greatest = -5;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
    AG_FAKE_BODY(priority_range(leastPriority, greatestPriority))

/* ---- peer access -------------------------------------------------------------------- */

/* Every pair of distinct devices can reach each other, as on an NVLink-connected host. */
static CUresult can_access_peer(int *can, CUdevice d, CUdevice peer)
{
    if (!can)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d) || check_dev(peer))
        return CUDA_ERROR_INVALID_DEVICE;
    ag_fake_trace_field("dev=%d peer=%d", (int)d, (int)peer);
    *can = d != peer;
    return CUDA_SUCCESS;
}

CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
    AG_FAKE_BODY(can_access_peer(canAccessPeer, dev, peerDev))

static CUresult p2p_attribute(int *v, CUdevice_P2PAttribute a, CUdevice src, CUdevice dst)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(src) || check_dev(dst) || src == dst)
        return CUDA_ERROR_INVALID_DEVICE;
    switch (a) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *v = 0; return CUDA_SUCCESS;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *v = 1; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice, CUdevice dstDevice)
    AG_FAKE_BODY(p2p_attribute(value, attrib, srcDevice, dstDevice))

static CUresult peer_access(CUcontext h, unsigned flags, int enable)
{
    struct ag_fake_ctx *cur, *peer = (struct ag_fake_ctx *)h;
    CUresult rc = ag_fake_current_ctx(&cur);
    if (rc)
        return rc;
    if (!peer || !ag_fake_ctx_alive(peer))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    ag_fake_trace_field("dev=%d peer=%d", (int)cur->device, (int)peer->device);
    unsigned bit = 1u << peer->device;
    if (peer->device == cur->device)
        return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    if (enable && (cur->peers & bit))
        return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    if (!enable && !(cur->peers & bit))
        return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    cur->peers ^= bit;
    return CUDA_SUCCESS;
}

CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) AG_FAKE_BODY(peer_access(peerContext, Flags, 1))
CUresult cuCtxDisablePeerAccess(CUcontext peerContext) AG_FAKE_BODY(peer_access(peerContext, 0, 0))

int ag_fake_stream_device(const struct ag_fake_stream *s)
{
    struct ag_fake_ctx *c;
    if (s->ctx)
        return (int)s->ctx->device;
    return ag_fake_current_ctx(&c) == CUDA_SUCCESS ? (int)c->device : -1;
}

/* ---- what a launch may touch ------------------------------------------------------------ */

CUresult ag_fake_launch_check(const struct ag_fake_stream *s, const struct ag_fake_ctx *cur,
                              const struct ag_fake_kdef *k, const unsigned char *args)
{
    /* The legacy and per-thread streams (no context of their own) are the current
     * context's; any other stream must be. */
    if (s->ctx && s->ctx != cur)
        return ag_fake_ctx_alive(s->ctx) ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_CONTEXT_IS_DESTROYED;
    /* A pointer-sized argument that points into another device's memory is what a GPU
     * would fault on unless this context enabled peer access to that device. */
    for (unsigned i = 0; i < k->nparams; i++) {
        CUdeviceptr p;
        if (k->param[i].size != sizeof p)
            continue;
        memcpy(&p, args + ag_fake_param_offset(k, i), sizeof p);
        const struct ag_fake_ctx *owner = ag_fake_device_memory_ctx(p);
        if (owner && owner->device != cur->device && !(cur->peers & (1u << owner->device))) {
            ag_fake_trace_field("illegal=param%u,dev%d", i, (int)owner->device);
            return CUDA_ERROR_ILLEGAL_ADDRESS;
        }
    }
    return CUDA_SUCCESS;
}
