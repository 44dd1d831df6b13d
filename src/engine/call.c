/*
 * Makes the real driver call an ag_call describes, through the same family of
 * entry point (legacy or per-thread, and for a synchronous copy or set the
 * synchronous one) it arrived by. Used both to forward a
 * call unchanged and to submit held work eagerly in its original order.
 */
#include "engine/call.h"

#include "driver/real.h"

static CUresult launch(const struct ag_call *c)
{
	const unsigned *g = c->u.kern.grid, *b = c->u.kern.block;
	if (c->api == AG_LAUNCH_COOPERATIVE)
		return c->per_thread
			       ? AG_REAL(cuLaunchCooperativeKernel_ptsz)(c->u.kern.f, g[0], g[1], g[2], b[0],
									 b[1], b[2], c->u.kern.shmem,
									 c->stream, c->u.kern.params)
			       : AG_REAL(cuLaunchCooperativeKernel)(c->u.kern.f, g[0], g[1], g[2], b[0],
								    b[1], b[2], c->u.kern.shmem,
								    c->stream, c->u.kern.params);
	if (c->api == AG_LAUNCH_EX) {
		CUlaunchConfig cfg = {g[0], g[1], g[2], b[0], b[1], b[2], c->u.kern.shmem, c->stream,
				      (CUlaunchAttribute *)c->u.kern.attrs, c->u.kern.nattrs};
		return c->per_thread ? AG_REAL(cuLaunchKernelEx_ptsz)(&cfg, c->u.kern.f,
								      c->u.kern.params, c->u.kern.extra)
				     : AG_REAL(cuLaunchKernelEx)(&cfg, c->u.kern.f, c->u.kern.params,
								 c->u.kern.extra);
	}
	return c->per_thread
		       ? AG_REAL(cuLaunchKernel_ptsz)(c->u.kern.f, g[0], g[1], g[2], b[0], b[1], b[2],
						      c->u.kern.shmem, c->stream, c->u.kern.params,
						      c->u.kern.extra)
		       : AG_REAL(cuLaunchKernel)(c->u.kern.f, g[0], g[1], g[2], b[0], b[1], b[2],
						 c->u.kern.shmem, c->stream, c->u.kern.params,
						 c->u.kern.extra);
}

static CUresult copy(const struct ag_call *c)
{
	CUdeviceptr d = c->u.copy.dst, s = c->u.copy.src;
	size_t n = c->u.copy.bytes;
	int pt = c->per_thread;
	if (c->sync_entry)
		return pt ? AG_REAL(cuMemcpyDtoD_v2_ptds)(d, s, n) : AG_REAL(cuMemcpyDtoD_v2)(d, s, n);
	switch (c->api) {
	case AG_COPY_HTOD:
		return pt ? AG_REAL(cuMemcpyHtoDAsync_v2_ptsz)(d, (const void *)s, n, c->stream)
			  : AG_REAL(cuMemcpyHtoDAsync_v2)(d, (const void *)s, n, c->stream);
	case AG_COPY_DTOH:
		return pt ? AG_REAL(cuMemcpyDtoHAsync_v2_ptsz)((void *)d, s, n, c->stream)
			  : AG_REAL(cuMemcpyDtoHAsync_v2)((void *)d, s, n, c->stream);
	case AG_COPY_DTOD:
		return pt ? AG_REAL(cuMemcpyDtoDAsync_v2_ptsz)(d, s, n, c->stream)
			  : AG_REAL(cuMemcpyDtoDAsync_v2)(d, s, n, c->stream);
	default:
		return pt ? AG_REAL(cuMemcpyAsync_ptsz)(d, s, n, c->stream)
			  : AG_REAL(cuMemcpyAsync)(d, s, n, c->stream);
	}
}

static CUresult sync_set(const struct ag_call *c)
{
	CUdeviceptr d = c->u.set.dst;
	size_t p = c->u.set.pitch, w = c->u.set.width, h = c->u.set.height;
	unsigned v = c->u.set.value;
	int pt = c->per_thread;
	if (!c->u.set.two_d) {
		switch (c->u.set.elem) {
		case 1:
			return pt ? AG_REAL(cuMemsetD8_v2_ptds)(d, (unsigned char)v, w)
				  : AG_REAL(cuMemsetD8_v2)(d, (unsigned char)v, w);
		case 2:
			return pt ? AG_REAL(cuMemsetD16_v2_ptds)(d, (unsigned short)v, w)
				  : AG_REAL(cuMemsetD16_v2)(d, (unsigned short)v, w);
		default:
			return pt ? AG_REAL(cuMemsetD32_v2_ptds)(d, v, w) : AG_REAL(cuMemsetD32_v2)(d, v, w);
		}
	}
	switch (c->u.set.elem) {
	case 1:
		return pt ? AG_REAL(cuMemsetD2D8_v2_ptds)(d, p, (unsigned char)v, w, h)
			  : AG_REAL(cuMemsetD2D8_v2)(d, p, (unsigned char)v, w, h);
	case 2:
		return pt ? AG_REAL(cuMemsetD2D16_v2_ptds)(d, p, (unsigned short)v, w, h)
			  : AG_REAL(cuMemsetD2D16_v2)(d, p, (unsigned short)v, w, h);
	default:
		return pt ? AG_REAL(cuMemsetD2D32_v2_ptds)(d, p, v, w, h) : AG_REAL(cuMemsetD2D32_v2)(d, p, v, w, h);
	}
}

static CUresult set(const struct ag_call *c)
{
	CUdeviceptr d = c->u.set.dst;
	size_t p = c->u.set.pitch, w = c->u.set.width, h = c->u.set.height;
	unsigned v = c->u.set.value;
	CUstream s = c->stream;
	int pt = c->per_thread;
	if (c->sync_entry)
		return sync_set(c);
	if (!c->u.set.two_d) {
		switch (c->u.set.elem) {
		case 1:
			return pt ? AG_REAL(cuMemsetD8Async_ptsz)(d, (unsigned char)v, w, s)
				  : AG_REAL(cuMemsetD8Async)(d, (unsigned char)v, w, s);
		case 2:
			return pt ? AG_REAL(cuMemsetD16Async_ptsz)(d, (unsigned short)v, w, s)
				  : AG_REAL(cuMemsetD16Async)(d, (unsigned short)v, w, s);
		default:
			return pt ? AG_REAL(cuMemsetD32Async_ptsz)(d, v, w, s)
				  : AG_REAL(cuMemsetD32Async)(d, v, w, s);
		}
	}
	switch (c->u.set.elem) {
	case 1:
		return pt ? AG_REAL(cuMemsetD2D8Async_ptsz)(d, p, (unsigned char)v, w, h, s)
			  : AG_REAL(cuMemsetD2D8Async)(d, p, (unsigned char)v, w, h, s);
	case 2:
		return pt ? AG_REAL(cuMemsetD2D16Async_ptsz)(d, p, (unsigned short)v, w, h, s)
			  : AG_REAL(cuMemsetD2D16Async)(d, p, (unsigned short)v, w, h, s);
	default:
		return pt ? AG_REAL(cuMemsetD2D32Async_ptsz)(d, p, v, w, h, s)
			  : AG_REAL(cuMemsetD2D32Async)(d, p, v, w, h, s);
	}
}

static CUresult event(const struct ag_call *c)
{
	CUevent e = c->u.event.ev;
	int pt = c->per_thread;
	if (c->u.event.with_flags)
		return pt ? AG_REAL(cuEventRecordWithFlags_ptsz)(e, c->stream, c->u.event.flags)
			  : AG_REAL(cuEventRecordWithFlags)(e, c->stream, c->u.event.flags);
	return pt ? AG_REAL(cuEventRecord_ptsz)(e, c->stream) : AG_REAL(cuEventRecord)(e, c->stream);
}

CUresult ag_call_submit(const struct ag_call *c)
{
	switch (c->kind) {
	case AG_OP_KERNEL:
		return launch(c);
	case AG_OP_COPY:
		return copy(c);
	case AG_OP_MEMSET:
		return set(c);
	case AG_OP_EVENT:
		return event(c);
	default:
		return c->per_thread ? AG_REAL(cuLaunchHostFunc_ptsz)(c->stream, c->u.host.fn, c->u.host.data)
				     : AG_REAL(cuLaunchHostFunc)(c->stream, c->u.host.fn, c->u.host.data);
	}
}
