/* fakecuda memory: "device" memory is host memory. Owns the allocation table (device
 * allocations, pinned and registered host ranges) used for pointer attributes and range
 * checks, and every memcpy/memset entry point, sync and async, legacy and per-thread.
 * Work is submitted to the stream (queue.c runs it) unless the stream is capturing, in
 * which case it becomes a graph node. As with the driver, a copy from pageable memory
 * reads it before the call returns, a copy to pageable memory and every synchronous
 * copy or set return once done, and frees wait for the device to be idle. */
#define _GNU_SOURCE
#include "fake.h"

#include <stdlib.h>
#include <string.h>

struct range {
    uintptr_t base;
    size_t size;
    CUmemorytype type; /* DEVICE for cuMemAlloc, HOST for pinned or registered */
    int registered;    /* host range owned by the caller (cuMemHostRegister) */
    unsigned flags;
    struct ag_fake_ctx *ctx;
    unsigned long long id;
};

static struct range *ranges;
static size_t nranges, capranges;
static unsigned long long next_id = 1;
static size_t device_bytes;

#define TOTAL_MEM (80ull << 30)

static struct range *find(uintptr_t p)
{
    for (size_t i = 0; i < nranges; i++)
        if (p >= ranges[i].base && p - ranges[i].base < ranges[i].size)
            return &ranges[i];
    return NULL;
}

size_t ag_fake_device_free(void)
{
    return TOTAL_MEM - device_bytes;
}

int ag_fake_mapped(uintptr_t p, size_t n)
{
    const struct range *r = find(p);
    return r && n <= r->size - (p - r->base);
}

const struct ag_fake_ctx *ag_fake_device_memory_ctx(CUdeviceptr p)
{
    const struct range *r = find((uintptr_t)p);
    return r && r->type == CU_MEMORYTYPE_DEVICE ? r->ctx : NULL;
}

static int overlaps(uintptr_t p, size_t n)
{
    for (size_t i = 0; i < nranges; i++)
        if (p < ranges[i].base + ranges[i].size && ranges[i].base < p + n)
            return 1;
    return 0;
}

/* True when [p, p+n) lies in one allocation the device can address. */
static int device_accessible(uintptr_t p, size_t n)
{
    const struct range *r = find(p);
    return r && n <= r->size - (p - r->base);
}

static CUresult add_range(uintptr_t base, size_t size, CUmemorytype type, int registered, unsigned flags)
{
    struct ag_fake_ctx *c;
    CUresult rc = ag_fake_current_ctx(&c);
    if (rc)
        return rc;
    if (nranges == capranges) {
        size_t cap = capranges ? 2 * capranges : 64;
        struct range *r = realloc(ranges, cap * sizeof *r);
        if (!r)
            return CUDA_ERROR_OUT_OF_MEMORY;
        ranges = r, capranges = cap;
    }
    ranges[nranges++] = (struct range){base, size, type, registered, flags, c, next_id++};
    return CUDA_SUCCESS;
}

static void remove_range(struct range *r)
{
    *r = ranges[--nranges];
}

static CUresult mem_alloc(void **out, size_t bytes, CUmemorytype type, unsigned flags)
{
    struct ag_fake_ctx *c;
    CUresult rc = ag_fake_current_ctx(&c);
    if (rc)
        return rc;
    rc = ag_fake_capture_unsafe(NULL);
    if (rc)
        return rc;
    ag_fake_trace_field("bytes=%zu", bytes);
    if (!out || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (type == CU_MEMORYTYPE_DEVICE && bytes > TOTAL_MEM - device_bytes)
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t rounded = (bytes + 255) / 256 * 256;
    void *p = aligned_alloc(256, rounded);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memset(p, 0, rounded);
    rc = add_range((uintptr_t)p, bytes, type, 0, flags);
    if (rc) {
        free(p);
        return rc;
    }
    if (type == CU_MEMORYTYPE_DEVICE)
        device_bytes += bytes;
    *out = p;
    return CUDA_SUCCESS;
}

static CUresult dev_alloc(CUdeviceptr *dptr, size_t bytes)
{
    void *p;
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = mem_alloc(&p, bytes, CU_MEMORYTYPE_DEVICE, 0);
    if (rc == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return rc;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) AG_FAKE_BODY(dev_alloc(dptr, bytesize))

static CUresult alloc_pitch(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned elem)
{
    if (!dptr || !pitch || width == 0 || height == 0 || (elem != 4 && elem != 8 && elem != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t p = (width + 511) / 512 * 512;
    CUresult rc = dev_alloc(dptr, p * height);
    if (rc == CUDA_SUCCESS)
        *pitch = p;
    return rc;
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                            unsigned int ElementSizeBytes)
    AG_FAKE_BODY(alloc_pitch(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes))

static CUresult mem_free(uintptr_t p, CUmemorytype type)
{
    CUresult rc = ag_fake_capture_unsafe(NULL);
    if (rc)
        return rc;
    ag_fake_drain();
    struct range *r = find(p);
    if (!r || r->base != p || r->type != type || r->registered)
        return CUDA_ERROR_INVALID_VALUE;
    if (type == CU_MEMORYTYPE_DEVICE)
        device_bytes -= r->size;
    remove_range(r);
    free((void *)p);
    return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr dptr) AG_FAKE_BODY(mem_free((uintptr_t)dptr, CU_MEMORYTYPE_DEVICE))

static CUresult mem_info(size_t *freep, size_t *total)
{
    struct ag_fake_ctx *c;
    CUresult rc = ag_fake_current_ctx(&c);
    if (rc)
        return rc;
    if (!freep || !total)
        return CUDA_ERROR_INVALID_VALUE;
    *total = TOTAL_MEM;
    *freep = TOTAL_MEM - device_bytes;
    return CUDA_SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t *free, size_t *total) AG_FAKE_BODY(mem_info(free, total))

static CUresult address_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    const struct range *r = find((uintptr_t)p);
    if (!r || r->type != CU_MEMORYTYPE_DEVICE)
        return CUDA_ERROR_NOT_FOUND;
    if (base)
        *base = r->base;
    if (size)
        *size = r->size;
    return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
    AG_FAKE_BODY(address_range(pbase, psize, dptr))

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize) AG_FAKE_BODY(mem_alloc(pp, bytesize, CU_MEMORYTYPE_HOST, 0))

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
    AG_FAKE_BODY((Flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
                                     CU_MEMHOSTALLOC_WRITECOMBINED))
                     ? CUDA_ERROR_INVALID_VALUE
                     : mem_alloc(pp, bytesize, CU_MEMORYTYPE_HOST, Flags))

CUresult cuMemFreeHost(void *p) AG_FAKE_BODY(mem_free((uintptr_t)p, CU_MEMORYTYPE_HOST))

static CUresult host_register(void *p, size_t bytes, unsigned flags)
{
    ag_fake_trace_field("bytes=%zu", bytes);
    if (!p || bytes == 0 || (flags & ~0xfu))
        return CUDA_ERROR_INVALID_VALUE;
    if (overlaps((uintptr_t)p, bytes))
        return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    return add_range((uintptr_t)p, bytes, CU_MEMORYTYPE_HOST, 1, flags);
}

CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags) AG_FAKE_BODY(host_register(p, bytesize, Flags))

static CUresult host_unregister(void *p)
{
    ag_fake_drain();
    struct range *r = find((uintptr_t)p);
    if (!r || r->base != (uintptr_t)p || !r->registered)
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    remove_range(r);
    return CUDA_SUCCESS;
}

CUresult cuMemHostUnregister(void *p) AG_FAKE_BODY(host_unregister(p))

static CUresult host_device_pointer(CUdeviceptr *out, void *p, unsigned flags)
{
    const struct range *r = find((uintptr_t)p);
    if (!out || flags != 0 || !r || r->type != CU_MEMORYTYPE_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    *out = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
    AG_FAKE_BODY(host_device_pointer(pdptr, p, Flags))

static CUresult host_get_flags(unsigned *flags, void *p)
{
    const struct range *r = find((uintptr_t)p);
    if (!flags || !r || r->type != CU_MEMORYTYPE_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = r->flags;
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p) AG_FAKE_BODY(host_get_flags(pFlags, p))

/* Writes one attribute of r (NULL: memory unknown to the driver) into data. */
static CUresult attribute(void *data, CUpointer_attribute a, const struct range *r, CUdeviceptr p)
{
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = r ? (CUcontext)r->ctx : NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = r ? (unsigned)r->type : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)data = r ? p : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        *(void **)data = r && r->type == CU_MEMORYTYPE_HOST ? (void *)(uintptr_t)p : NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
        *(int *)data = 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(int *)data = r != NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = r ? r->id : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = r ? (int)r->ctx->device : -2;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = r ? r->base : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = r ? r->size : 0;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult pointer_attribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    ag_fake_trace_field("attr=%d", (int)a);
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    const struct range *r = find((uintptr_t)p);
    /* Like the driver for pageable memory it never saw. */
    if (!r)
        return CUDA_ERROR_INVALID_VALUE;
    return attribute(data, a, r, p);
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
    AG_FAKE_BODY(pointer_attribute(data, attribute, ptr))

/* Unlike the singular call, the driver answers unknown pointers here with null values. */
static CUresult pointer_attributes(unsigned n, CUpointer_attribute *attrs, void **data, CUdeviceptr p)
{
    if (!attrs || !data)
        return CUDA_ERROR_INVALID_VALUE;
    const struct range *r = find((uintptr_t)p);
    for (unsigned i = 0; i < n; i++) {
        if (!data[i])
            return CUDA_ERROR_INVALID_VALUE;
        CUresult rc = attribute(data[i], attrs[i], r, p);
        if (rc)
            return rc;
    }
    return CUDA_SUCCESS;
}

CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes, void **data,
                                CUdeviceptr ptr)
    AG_FAKE_BODY(pointer_attributes(numAttributes, attributes, data, ptr))

/* ---- copies ------------------------------------------------------------------------ */

static CUresult endpoint(CUmemorytype t, const void *host, CUdeviceptr dev, size_t x, size_t y, size_t z,
                         size_t pitch, size_t height, size_t width, size_t rows, size_t depth, unsigned char **out)
{
    uintptr_t base;
    switch (t) {
    case CU_MEMORYTYPE_HOST:
        base = (uintptr_t)host;
        break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
        base = (uintptr_t)dev;
        break;
    case CU_MEMORYTYPE_ARRAY:
        return CUDA_ERROR_NOT_SUPPORTED;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!base)
        return CUDA_ERROR_INVALID_VALUE;
    if (rows > 1 && pitch < width)
        return CUDA_ERROR_INVALID_VALUE;
    if (depth > 1 && height < rows)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t first = base + (z * height + y) * pitch + x;
    size_t span = ((depth - 1) * height + (rows - 1)) * pitch + width;
    if (t == CU_MEMORYTYPE_DEVICE && !device_accessible(first, span))
        return CUDA_ERROR_INVALID_VALUE;
    *out = (unsigned char *)first;
    return CUDA_SUCCESS;
}

CUresult ag_fake_copy3d(const CUDA_MEMCPY3D *c, int execute)
{
    unsigned char *src, *dst;
    size_t w = c->WidthInBytes, h = c->Height ? c->Height : 1, d = c->Depth ? c->Depth : 1;
    size_t sp = c->srcPitch ? c->srcPitch : w, dp = c->dstPitch ? c->dstPitch : w;
    size_t sh = c->srcHeight ? c->srcHeight : h, dh = c->dstHeight ? c->dstHeight : h;
    if (w == 0)
        return CUDA_SUCCESS;
    CUresult rc = endpoint(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, c->srcZ, sp, sh, w,
                           h, d, &src);
    if (rc == CUDA_SUCCESS)
        rc = endpoint(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, c->dstZ, dp, dh, w, h,
                      d, &dst);
    if (rc || !execute)
        return rc;
    for (size_t z = 0; z < d; z++)
        for (size_t y = 0; y < h; y++)
            memmove(dst + (z * dh + y) * dp, src + (z * sh + y) * sp, w);
    return CUDA_SUCCESS;
}

/* Host memory of an endpoint that is not page-locked, or NULL (device memory, or
 * pinned). A unified address the driver does not know is pageable host memory. */
static const void *pageable_host(CUmemorytype t, const void *host, CUdeviceptr dev)
{
    const struct range *r;
    if (t == CU_MEMORYTYPE_HOST)
        r = find((uintptr_t)host);
    else if (t == CU_MEMORYTYPE_UNIFIED)
        r = find((uintptr_t)dev);
    else
        return NULL;
    if (r && (t == CU_MEMORYTYPE_UNIFIED || r->type == CU_MEMORYTYPE_HOST))
        return NULL;
    return t == CU_MEMORYTYPE_HOST ? host : (const void *)(uintptr_t)dev;
}

int ag_fake_copy_pageable(const CUDA_MEMCPY3D *c, int srcside)
{
    return srcside ? pageable_host(c->srcMemoryType, c->srcHost, c->srcDevice) != NULL
                   : pageable_host(c->dstMemoryType, c->dstHost, c->dstDevice) != NULL;
}

static unsigned long long pin(CUmemorytype t, const void *host, CUdeviceptr dev)
{
    const struct range *r = t == CU_MEMORYTYPE_HOST      ? find((uintptr_t)host)
                            : t == CU_MEMORYTYPE_UNIFIED ? find((uintptr_t)dev)
                                                         : NULL;
    return r && r->type == CU_MEMORYTYPE_HOST ? r->id : 0;
}

void ag_fake_copy_pins(const CUDA_MEMCPY3D *c, unsigned long long pins[2])
{
    pins[0] = pin(c->srcMemoryType, c->srcHost, c->srcDevice);
    pins[1] = pin(c->dstMemoryType, c->dstHost, c->dstDevice);
}

int ag_fake_copy_pins_valid(const CUDA_MEMCPY3D *c, const unsigned long long pins[2])
{
    unsigned long long now[2];
    ag_fake_copy_pins(c, now);
    return (!pins[0] || pins[0] == now[0]) && (!pins[1] || pins[1] == now[1]);
}

void ag_fake_copy1d_desc(CUDA_MEMCPY3D *c, CUmemorytype dt, void *dst, CUmemorytype st, const void *src,
                         size_t bytes)
{
    memset(c, 0, sizeof *c);
    c->dstMemoryType = dt;
    if (dt == CU_MEMORYTYPE_HOST)
        c->dstHost = dst;
    else
        c->dstDevice = (CUdeviceptr)(uintptr_t)dst;
    c->srcMemoryType = st;
    if (st == CU_MEMORYTYPE_HOST)
        c->srcHost = src;
    else
        c->srcDevice = (CUdeviceptr)(uintptr_t)src;
    c->WidthInBytes = bytes;
    c->Height = 1;
    c->Depth = 1;
}

void ag_fake_copy2d_desc(CUDA_MEMCPY3D *c, const CUDA_MEMCPY2D *p)
{
    memset(c, 0, sizeof *c);
    c->srcXInBytes = p->srcXInBytes, c->srcY = p->srcY, c->srcMemoryType = p->srcMemoryType;
    c->srcHost = p->srcHost, c->srcDevice = p->srcDevice, c->srcArray = p->srcArray, c->srcPitch = p->srcPitch;
    c->dstXInBytes = p->dstXInBytes, c->dstY = p->dstY, c->dstMemoryType = p->dstMemoryType;
    c->dstHost = p->dstHost, c->dstDevice = p->dstDevice, c->dstArray = p->dstArray, c->dstPitch = p->dstPitch;
    c->WidthInBytes = p->WidthInBytes, c->Height = p->Height, c->Depth = 1;
}

/* Common path of every copy: sync copies are "potentially unsafe" during capture, async
 * copies into a capturing stream become memcpy nodes, everything else runs now. */
static CUresult submit_copy(const CUDA_MEMCPY3D *c, CUstream h, int per_thread, int async)
{
    struct ag_fake_stream *s;
    struct ag_fake_ctx *ctx;
    CUresult rc = ag_fake_current_ctx(&ctx);
    if (rc)
        return rc;
    rc = ag_fake_stream(h, per_thread, &s);
    if (rc)
        return rc;
    size_t h2 = c->Height ? c->Height : 1, d = c->Depth ? c->Depth : 1;
    ag_fake_trace_field("bytes=%zu", c->WidthInBytes * h2 * d);
    ag_fake_trace_field("stream=%s", ag_fake_stream_label(s));
    if (!async) {
        rc = ag_fake_capture_unsafe(s);
        if (rc)
            return rc;
    }
    rc = ag_fake_copy3d(c, 0);
    if (rc)
        return rc;
    struct ag_fake_node proto = {.type = CU_GRAPH_NODE_TYPE_MEMCPY, .copy = *c};
    if (ag_fake_capturing(s)) {
        ag_fake_copy_pins(c, proto.pins);
        return ag_fake_capture_add(s, &proto);
    }
    void *staging = NULL;
    int flags = async && !ag_fake_copy_pageable(c, 0) ? 0 : AG_FAKE_SUBMIT_WAIT;
    if (!flags && ag_fake_async() && ag_fake_copy_pageable(c, 1)) {
        /* The driver copies pageable source memory to a staging buffer before returning. */
        size_t w = c->WidthInBytes, rows = c->Height ? c->Height : 1, depth = c->Depth ? c->Depth : 1;
        CUDA_MEMCPY3D pack = *c;
        if (w && !(staging = malloc(w * rows * depth)))
            return CUDA_ERROR_OUT_OF_MEMORY;
        pack.dstMemoryType = CU_MEMORYTYPE_HOST, pack.dstHost = staging, pack.dstDevice = 0;
        pack.dstXInBytes = pack.dstY = pack.dstZ = 0, pack.dstPitch = w, pack.dstHeight = rows;
        ag_fake_copy3d(&pack, 1);
        proto.copy.srcMemoryType = CU_MEMORYTYPE_HOST, proto.copy.srcHost = staging, proto.copy.srcDevice = 0;
        proto.copy.srcXInBytes = proto.copy.srcY = proto.copy.srcZ = 0;
        proto.copy.srcPitch = w, proto.copy.srcHeight = rows;
    }
    return ag_fake_submit(s, ctx, &proto, 1, flags, staging);
}

#define H CU_MEMORYTYPE_HOST
#define D CU_MEMORYTYPE_DEVICE
#define U CU_MEMORYTYPE_UNIFIED
#define DP(p) ((void *)(uintptr_t)(p))

static CUresult copy1d(CUmemorytype dt, void *dst, CUmemorytype st, const void *src, size_t n, CUstream h,
                       int per_thread, int async)
{
    CUDA_MEMCPY3D c;
    ag_fake_copy1d_desc(&c, dt, dst, st, src, n);
    return submit_copy(&c, h, per_thread, async);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) AG_FAKE_BODY(copy1d(D, DP(dst), H, src, n, NULL, 0, 0))
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n) AG_FAKE_BODY(copy1d(D, DP(dst), H, src, n, NULL, 1, 0))
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) AG_FAKE_BODY(copy1d(H, dst, D, DP(src), n, NULL, 0, 0))
CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n) AG_FAKE_BODY(copy1d(H, dst, D, DP(src), n, NULL, 1, 0))
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) AG_FAKE_BODY(copy1d(D, DP(dst), D, DP(src), n, NULL, 0, 0))
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) AG_FAKE_BODY(copy1d(D, DP(dst), D, DP(src), n, NULL, 1, 0))
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) AG_FAKE_BODY(copy1d(U, DP(dst), U, DP(src), n, NULL, 0, 0))
CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) AG_FAKE_BODY(copy1d(U, DP(dst), U, DP(src), n, NULL, 1, 0))

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
    AG_FAKE_BODY(copy1d(D, DP(dst), H, src, n, s, 0, 1))
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream s)
    AG_FAKE_BODY(copy1d(D, DP(dst), H, src, n, s, 1, 1))
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
    AG_FAKE_BODY(copy1d(H, dst, D, DP(src), n, s, 0, 1))
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s)
    AG_FAKE_BODY(copy1d(H, dst, D, DP(src), n, s, 1, 1))
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
    AG_FAKE_BODY(copy1d(D, DP(dst), D, DP(src), n, s, 0, 1))
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
    AG_FAKE_BODY(copy1d(D, DP(dst), D, DP(src), n, s, 1, 1))
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
    AG_FAKE_BODY(copy1d(U, DP(dst), U, DP(src), n, s, 0, 1))
CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
    AG_FAKE_BODY(copy1d(U, DP(dst), U, DP(src), n, s, 1, 1))

/* Every device's memory is host memory: a peer copy is a plain copy once both contexts
 * are checked (the driver needs no peer access for it either). */
static CUresult copy_peer(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream h,
                          int per_thread, int async)
{
    struct ag_fake_ctx *c;
    if (!dc || !sc || ag_fake_check_ctx(dc, &c) || ag_fake_check_ctx(sc, &c))
        return CUDA_ERROR_INVALID_CONTEXT;
    return copy1d(D, DP(dst), D, DP(src), n, h, per_thread, async);
}

CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n)
    AG_FAKE_BODY(copy_peer(dst, dc, src, sc, n, NULL, 0, 0))
CUresult cuMemcpyPeer_ptds(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n)
    AG_FAKE_BODY(copy_peer(dst, dc, src, sc, n, NULL, 1, 0))
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s)
    AG_FAKE_BODY(copy_peer(dst, dc, src, sc, n, s, 0, 1))
CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s)
    AG_FAKE_BODY(copy_peer(dst, dc, src, sc, n, s, 1, 1))

static CUresult copy2d(const CUDA_MEMCPY2D *p, CUstream h, int per_thread, int async)
{
    CUDA_MEMCPY3D c;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    ag_fake_copy2d_desc(&c, p);
    return submit_copy(&c, h, per_thread, async);
}

CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *p) AG_FAKE_BODY(copy2d(p, NULL, 0, 0))
CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *p) AG_FAKE_BODY(copy2d(p, NULL, 1, 0))
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *p) AG_FAKE_BODY(copy2d(p, NULL, 0, 0))
CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *p) AG_FAKE_BODY(copy2d(p, NULL, 1, 0))
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream s) AG_FAKE_BODY(copy2d(p, s, 0, 1))
CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *p, CUstream s) AG_FAKE_BODY(copy2d(p, s, 1, 1))

static CUresult copy3d(const CUDA_MEMCPY3D *p, CUstream h, int per_thread, int async)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    return submit_copy(p, h, per_thread, async);
}

CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *p) AG_FAKE_BODY(copy3d(p, NULL, 0, 0))
CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *p) AG_FAKE_BODY(copy3d(p, NULL, 1, 0))
CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *p, CUstream s) AG_FAKE_BODY(copy3d(p, s, 0, 1))
CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *p, CUstream s) AG_FAKE_BODY(copy3d(p, s, 1, 1))

/* ---- memsets ------------------------------------------------------------------------ */

void ag_fake_memset2d(CUdeviceptr dst, size_t pitch, unsigned value, unsigned elem, size_t width, size_t height)
{
    for (size_t y = 0; y < height; y++) {
        unsigned char *row = (unsigned char *)(uintptr_t)(dst + y * pitch);
        for (size_t x = 0; x < width; x++)
            if (elem == 1)
                row[x] = (unsigned char)value;
            else if (elem == 2)
                ((unsigned short *)row)[x] = (unsigned short)value;
            else
                ((unsigned *)row)[x] = value;
    }
}

CUresult ag_fake_memset_check(const CUDA_MEMSET_NODE_PARAMS *p)
{
    if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->dst % p->elementSize || (p->height > 1 && p->pitch < p->width * p->elementSize))
        return CUDA_ERROR_INVALID_VALUE;
    if (p->width == 0 || p->height == 0)
        return CUDA_SUCCESS;
    size_t span = (p->height - 1) * p->pitch + p->width * p->elementSize;
    return device_accessible((uintptr_t)p->dst, span) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult memset2d(CUdeviceptr dst, size_t pitch, unsigned value, unsigned elem, size_t width,
                         size_t height, CUstream h, int per_thread, int async)
{
    struct ag_fake_stream *s;
    struct ag_fake_ctx *ctx;
    CUresult rc = ag_fake_current_ctx(&ctx);
    if (rc)
        return rc;
    rc = ag_fake_stream(h, per_thread, &s);
    if (rc)
        return rc;
    ag_fake_trace_field("bytes=%zu", width * height * elem);
    ag_fake_trace_field("stream=%s", ag_fake_stream_label(s));
    CUDA_MEMSET_NODE_PARAMS p = {dst, height > 1 ? pitch : width * elem, value, elem, width, height};
    rc = ag_fake_memset_check(&p);
    if (rc)
        return rc;
    if (!async) {
        rc = ag_fake_capture_unsafe(s);
        if (rc)
            return rc;
    }
    struct ag_fake_node proto = {.type = CU_GRAPH_NODE_TYPE_MEMSET, .set = p};
    if (ag_fake_capturing(s))
        return ag_fake_capture_add(s, &proto);
    return ag_fake_submit(s, ctx, &proto, 1, async ? 0 : AG_FAKE_SUBMIT_WAIT, NULL);
}

CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) AG_FAKE_BODY(memset2d(d, 0, v, 1, n, 1, NULL, 0, 0))
CUresult cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char v, size_t n) AG_FAKE_BODY(memset2d(d, 0, v, 1, n, 1, NULL, 1, 0))
CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) AG_FAKE_BODY(memset2d(d, 0, v, 2, n, 1, NULL, 0, 0))
CUresult cuMemsetD16_v2_ptds(CUdeviceptr d, unsigned short v, size_t n) AG_FAKE_BODY(memset2d(d, 0, v, 2, n, 1, NULL, 1, 0))
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n) AG_FAKE_BODY(memset2d(d, 0, v, 4, n, 1, NULL, 0, 0))
CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int v, size_t n) AG_FAKE_BODY(memset2d(d, 0, v, 4, n, 1, NULL, 1, 0))
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) AG_FAKE_BODY(memset2d(d, 0, v, 1, n, 1, s, 0, 1))
CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream s) AG_FAKE_BODY(memset2d(d, 0, v, 1, n, 1, s, 1, 1))
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) AG_FAKE_BODY(memset2d(d, 0, v, 2, n, 1, s, 0, 1))
CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream s) AG_FAKE_BODY(memset2d(d, 0, v, 2, n, 1, s, 1, 1))
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) AG_FAKE_BODY(memset2d(d, 0, v, 4, n, 1, s, 0, 1))
CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream s) AG_FAKE_BODY(memset2d(d, 0, v, 4, n, 1, s, 1, 1))

CUresult cuMemsetD2D8_v2(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h)
    AG_FAKE_BODY(memset2d(d, pitch, v, 1, w, h, NULL, 0, 0))
CUresult cuMemsetD2D8_v2_ptds(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h)
    AG_FAKE_BODY(memset2d(d, pitch, v, 1, w, h, NULL, 1, 0))
CUresult cuMemsetD2D16_v2(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h)
    AG_FAKE_BODY(memset2d(d, pitch, v, 2, w, h, NULL, 0, 0))
CUresult cuMemsetD2D16_v2_ptds(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h)
    AG_FAKE_BODY(memset2d(d, pitch, v, 2, w, h, NULL, 1, 0))
CUresult cuMemsetD2D32_v2(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h)
    AG_FAKE_BODY(memset2d(d, pitch, v, 4, w, h, NULL, 0, 0))
CUresult cuMemsetD2D32_v2_ptds(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h)
    AG_FAKE_BODY(memset2d(d, pitch, v, 4, w, h, NULL, 1, 0))
CUresult cuMemsetD2D8Async(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h, CUstream s)
    AG_FAKE_BODY(memset2d(d, pitch, v, 1, w, h, s, 0, 1))
CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h, CUstream s)
    AG_FAKE_BODY(memset2d(d, pitch, v, 1, w, h, s, 1, 1))
CUresult cuMemsetD2D16Async(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h, CUstream s)
    AG_FAKE_BODY(memset2d(d, pitch, v, 2, w, h, s, 0, 1))
CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h, CUstream s)
    AG_FAKE_BODY(memset2d(d, pitch, v, 2, w, h, s, 1, 1))
CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h, CUstream s)
    AG_FAKE_BODY(memset2d(d, pitch, v, 4, w, h, s, 0, 1))
CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h, CUstream s)
    AG_FAKE_BODY(memset2d(d, pitch, v, 4, w, h, s, 1, 1))
