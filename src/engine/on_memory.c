/*
 * Handlers for asynchronous 1-D copies and sets (described and handed to the
 * engine), for the synchronous ones that do not wait for the host (handed to
 * the engine as work on the default stream), and for page-locked host memory
 * (tracked, so the engine knows which host buffers an async copy may read
 * later rather than at the call).
 */
#include "engine/engine.h"
#include "engine/internal.h"
#include "driver/real.h"
#include "stats.h"

static CUresult copy_from(int sync_entry, int dir, int per_thread, CUdeviceptr dst, CUdeviceptr src,
			  size_t bytes, CUstream s)
{
	struct ag_call c = {.kind = AG_OP_COPY, .api = (unsigned char)dir, .per_thread = (unsigned char)per_thread,
			    .sync_entry = (unsigned char)sync_entry, .stream = s};
	c.u.copy.dst = dst;
	c.u.copy.src = src;
	c.u.copy.bytes = bytes;
	return ag_engine_submit(&c);
}

static CUresult copy(int dir, int per_thread, CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s)
{
	return copy_from(0, dir, per_thread, dst, src, bytes, s);
}

CUresult ag_on_cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	return copy(AG_COPY_HTOD, 0, dst, (CUdeviceptr)src, n, s);
}

CUresult ag_on_cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	return copy(AG_COPY_HTOD, 1, dst, (CUdeviceptr)src, n, s);
}

CUresult ag_on_cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	return copy(AG_COPY_DTOH, 0, (CUdeviceptr)dst, src, n, s);
}

CUresult ag_on_cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	return copy(AG_COPY_DTOH, 1, (CUdeviceptr)dst, src, n, s);
}

CUresult ag_on_cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return copy(AG_COPY_DTOD, 0, dst, src, n, s);
}

CUresult ag_on_cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return copy(AG_COPY_DTOD, 1, dst, src, n, s);
}

CUresult ag_on_cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return copy(AG_COPY_UNIFIED, 0, dst, src, n, s);
}

CUresult ag_on_cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return copy(AG_COPY_UNIFIED, 1, dst, src, n, s);
}

static CUresult set_from(int sync_entry, int per_thread, int two_d, CUdeviceptr dst, size_t pitch,
			 unsigned value, unsigned elem, size_t width, size_t height, CUstream s)
{
	struct ag_call c = {.kind = AG_OP_MEMSET, .per_thread = (unsigned char)per_thread,
			    .sync_entry = (unsigned char)sync_entry, .stream = s};
	c.u.set.dst = dst;
	c.u.set.pitch = pitch;
	c.u.set.value = value;
	c.u.set.elem = elem;
	c.u.set.width = width;
	c.u.set.height = height;
	c.u.set.two_d = (unsigned char)two_d;
	return ag_engine_submit(&c);
}

static CUresult set(int per_thread, int two_d, CUdeviceptr dst, size_t pitch, unsigned value, unsigned elem,
		    size_t width, size_t height, CUstream s)
{
	return set_from(0, per_thread, two_d, dst, pitch, value, elem, width, height, s);
}

CUresult ag_on_cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
	return set(0, 0, d, 0, v, 1, n, 1, s);
}

CUresult ag_on_cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
	return set(1, 0, d, 0, v, 1, n, 1, s);
}

CUresult ag_on_cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s)
{
	return set(0, 0, d, 0, v, 2, n, 1, s);
}

CUresult ag_on_cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream s)
{
	return set(1, 0, d, 0, v, 2, n, 1, s);
}

CUresult ag_on_cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
	return set(0, 0, d, 0, v, 4, n, 1, s);
}

CUresult ag_on_cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
	return set(1, 0, d, 0, v, 4, n, 1, s);
}

CUresult ag_on_cuMemsetD2D8Async(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h,
				 CUstream s)
{
	return set(0, 1, d, pitch, v, 1, w, h, s);
}

CUresult ag_on_cuMemsetD2D8Async_ptsz(CUdeviceptr d, size_t pitch, unsigned char v, size_t w,
				      size_t h, CUstream s)
{
	return set(1, 1, d, pitch, v, 1, w, h, s);
}

CUresult ag_on_cuMemsetD2D16Async(CUdeviceptr d, size_t pitch, unsigned short v, size_t w,
				  size_t h, CUstream s)
{
	return set(0, 1, d, pitch, v, 2, w, h, s);
}

CUresult ag_on_cuMemsetD2D16Async_ptsz(CUdeviceptr d, size_t pitch, unsigned short v, size_t w,
				       size_t h, CUstream s)
{
	return set(1, 1, d, pitch, v, 2, w, h, s);
}

CUresult ag_on_cuMemsetD2D32Async(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h,
				  CUstream s)
{
	return set(0, 1, d, pitch, v, 4, w, h, s);
}

CUresult ag_on_cuMemsetD2D32Async_ptsz(CUdeviceptr d, size_t pitch, unsigned int v, size_t w,
				       size_t h, CUstream s)
{
	return set(1, 1, d, pitch, v, 4, w, h, s);
}

/*
 * Synchronous device-to-device copies and sets of device memory do not wait
 * for the host (CUDA's "API synchronization behavior"): they are ordered work
 * on the default stream (the legacy one, or the thread's own for _ptds),
 * recorded as their asynchronous forms are, and submitted eagerly through
 * their own entry points. Any other (a set of page-locked or managed memory,
 * which waits; addresses the driver would refuse; the engine off) still waits
 * for all held work and reaches the driver through its own entry point.
 */
static int ordered(CUdeviceptr a, CUdeviceptr b, size_t bytes)
{
	return !ag_engine_is_off() && ag_copy_device_only(a, bytes) && (!b || ag_copy_device_only(b, bytes));
}

static void waits_for_all(int fn)
{
	ag_engine_caller(fn);
	ag_engine_barrier();
}

#define SYNC_DONE(call) ag_engine_sync_done(call, NULL, -1)

CUresult ag_on_cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	if (ordered(dst, src, n))
		return copy_from(1, AG_COPY_DTOD, 0, dst, src, n, NULL);
	waits_for_all(AG_FN_cuMemcpyDtoD_v2);
	return SYNC_DONE(AG_REAL(cuMemcpyDtoD_v2)(dst, src, n));
}

CUresult ag_on_cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	if (ordered(dst, src, n))
		return copy_from(1, AG_COPY_DTOD, 1, dst, src, n, NULL);
	waits_for_all(AG_FN_cuMemcpyDtoD_v2_ptds);
	return SYNC_DONE(AG_REAL(cuMemcpyDtoD_v2_ptds)(dst, src, n));
}

/* The bytes a set touches: rows of width elements, pitch bytes apart. */
static size_t extent(size_t pitch, unsigned elem, size_t w, size_t h)
{
	return !w || !h ? 0 : (h - 1) * pitch + w * elem;
}

#define SYNC_SET(name, pt, type, elem)                                                      \
	CUresult ag_on_##name(CUdeviceptr d, type v, size_t n)                              \
	{                                                                                   \
		if (ordered(d, 0, extent(0, elem, n, 1)))                                   \
			return set_from(1, pt, 0, d, 0, v, elem, n, 1, NULL);                      \
		waits_for_all(AG_FN_##name);                                                \
		return SYNC_DONE(AG_REAL(name)(d, v, n));                                   \
	}
#define SYNC_SET2D(name, pt, type, elem)                                                    \
	CUresult ag_on_##name(CUdeviceptr d, size_t pitch, type v, size_t w, size_t h)      \
	{                                                                                   \
		if (pitch >= w * elem && ordered(d, 0, extent(pitch, elem, w, h)))          \
			return set_from(1, pt, 1, d, pitch, v, elem, w, h, NULL);                  \
		waits_for_all(AG_FN_##name);                                                \
		return SYNC_DONE(AG_REAL(name)(d, pitch, v, w, h));                         \
	}

SYNC_SET(cuMemsetD8_v2, 0, unsigned char, 1)
SYNC_SET(cuMemsetD8_v2_ptds, 1, unsigned char, 1)
SYNC_SET(cuMemsetD16_v2, 0, unsigned short, 2)
SYNC_SET(cuMemsetD16_v2_ptds, 1, unsigned short, 2)
SYNC_SET(cuMemsetD32_v2, 0, unsigned int, 4)
SYNC_SET(cuMemsetD32_v2_ptds, 1, unsigned int, 4)
SYNC_SET2D(cuMemsetD2D8_v2, 0, unsigned char, 1)
SYNC_SET2D(cuMemsetD2D8_v2_ptds, 1, unsigned char, 1)
SYNC_SET2D(cuMemsetD2D16_v2, 0, unsigned short, 2)
SYNC_SET2D(cuMemsetD2D16_v2_ptds, 1, unsigned short, 2)
SYNC_SET2D(cuMemsetD2D32_v2, 0, unsigned int, 4)
SYNC_SET2D(cuMemsetD2D32_v2_ptds, 1, unsigned int, 4)

CUresult ag_on_cuMemAllocHost(void **pp, unsigned int bytes)
{
	CUresult rc = AG_REAL(cuMemAllocHost)(pp, bytes);
	if (rc == CUDA_SUCCESS)
		ag_engine_pinned_add(*pp, bytes);
	return rc;
}

CUresult ag_on_cuMemAllocHost_v2(void **pp, size_t bytes)
{
	CUresult rc = AG_REAL(cuMemAllocHost_v2)(pp, bytes);
	if (rc == CUDA_SUCCESS)
		ag_engine_pinned_add(*pp, bytes);
	return rc;
}

CUresult ag_on_cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
	CUresult rc = AG_REAL(cuMemHostAlloc)(pp, bytes, flags);
	if (rc == CUDA_SUCCESS)
		ag_engine_pinned_add(*pp, bytes);
	return rc;
}

CUresult ag_on_cuMemHostRegister(void *p, size_t bytes, unsigned int flags)
{
	CUresult rc = AG_REAL(cuMemHostRegister)(p, bytes, flags);
	if (rc == CUDA_SUCCESS)
		ag_engine_pinned_add(p, bytes);
	return rc;
}

CUresult ag_on_cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags)
{
	CUresult rc = AG_REAL(cuMemHostRegister_v2)(p, bytes, flags);
	if (rc == CUDA_SUCCESS)
		ag_engine_pinned_add(p, bytes);
	return rc;
}

/* Held copies may still read or write the buffer: submit them before it goes. */
static void unpinned(void *p)
{
	size_t bytes = ag_engine_pinned_remove(p);
	ag_engine_memory_gone((uintptr_t)p, (uintptr_t)p + (bytes ? bytes : 1));
}

CUresult ag_on_cuMemFreeHost(void *p)
{
	unpinned(p);
	return AG_REAL(cuMemFreeHost)(p);
}

CUresult ag_on_cuMemHostUnregister(void *p)
{
	unpinned(p);
	return AG_REAL(cuMemHostUnregister)(p);
}
