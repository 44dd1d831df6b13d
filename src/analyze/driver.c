/*
 * The driver `autograph analyze` puts under the engine: it answers what the
 * engine asks (contexts, stream flags, kernel layouts and names, pointer
 * types, graph handles) from the trace's definitions. Every driver function
 * it does not answer returns CUDA_SUCCESS and writes nothing.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "engine/internal.h"
#include "driver/real.h"
#include "stats.h"

void *ag_real_fn[AG_FN_COUNT];

static uintptr_t next_handle = 0x1000;

static CUresult succeed(void)
{
	return CUDA_SUCCESS;
}

void *ag_real_resolve(int id)
{
	if (!ag_real_fn[id])
		ag_real_fn[id] = (void *)succeed;
	return ag_real_fn[id];
}

void ag_real_learn(int id, void *fn)
{
	if (!ag_real_fn[id])
		ag_real_fn[id] = fn;
}

int ag_real_is_ours(const void *p)
{
	(void)p;
	return 0;
}

void *ag_real_dlsym(void *handle, const char *name)
{
	return dlsym(handle, name);
}

void *ag_real_dlvsym(void *handle, const char *name, const char *version)
{
	return dlvsym(handle, name, version);
}

static CUresult ctx_get(CUcontext *pctx)
{
	*pctx = ag_an_thread_ctx();
	return CUDA_SUCCESS;
}

static CUresult ctx_set(CUcontext ctx)
{
	ag_an_set_thread_ctx(ctx);
	return CUDA_SUCCESS;
}

static CUresult stream_ctx(CUstream s, CUcontext *pctx)
{
	const struct ag_an_stream *d = ag_an_stream_of(s);
	if (!d || !d->ok)
		return CUDA_ERROR_INVALID_HANDLE;
	*pctx = d->ctx;
	return CUDA_SUCCESS;
}

static CUresult stream_flags(CUstream s, unsigned *flags)
{
	const struct ag_an_stream *d = ag_an_stream_of(s);
	if (!d || !d->ok)
		return CUDA_ERROR_INVALID_HANDLE;
	*flags = d->flags;
	return CUDA_SUCCESS;
}

static CUresult pointer_attribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
	unsigned type = attr == CU_POINTER_ATTRIBUTE_MEMORY_TYPE ? ag_an_memory_type(p) : 0;
	if (!type)
		return CUDA_ERROR_INVALID_VALUE;
	*(unsigned *)data = type;
	return CUDA_SUCCESS;
}

/* A device copy's new addresses are checked with these: device memory if the traced call
 * succeeded, spanning exactly the copy. */
static CUresult pointer_attributes(unsigned n, CUpointer_attribute *attrs, void **data, CUdeviceptr p)
{
	size_t bytes;
	int dev = ag_an_copy_range(p, &bytes);
	for (unsigned i = 0; i < n; i++) {
		switch (attrs[i]) {
		case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
			*(unsigned *)data[i] = dev ? CU_MEMORYTYPE_DEVICE : 0;
			break;
		case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
			*(CUdeviceptr *)data[i] = dev ? p : 0;
			break;
		case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
			*(size_t *)data[i] = dev ? bytes : 0;
			break;
		default:
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	return CUDA_SUCCESS;
}

static CUresult param_info(uintptr_t h, int as_kernel, size_t i, size_t *off, size_t *size)
{
	const struct ag_an_kernel *k = ag_an_kernel_of(h);
	if (!k)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!k->layout_ok)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (k->is_kernel != as_kernel)
		return CUDA_ERROR_INVALID_HANDLE;
	if (i >= k->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	*off = k->offset[i];
	*size = k->size[i];
	return CUDA_SUCCESS;
}

static CUresult func_param_info(CUfunction f, size_t i, size_t *off, size_t *size)
{
	return param_info((uintptr_t)f, 0, i, off, size);
}

static CUresult kernel_param_info(CUkernel f, size_t i, size_t *off, size_t *size)
{
	return param_info((uintptr_t)f, 1, i, off, size);
}

static CUresult func_name(const char **name, CUfunction f)
{
	const struct ag_an_kernel *k = ag_an_kernel_of((uintptr_t)f);
	*name = k ? k->name : NULL;
	return k ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult kernel_name(const char **name, CUkernel f)
{
	return func_name(name, (CUfunction)f);
}

static CUresult graph_create(CUgraph *g, unsigned flags)
{
	(void)flags;
	*g = (CUgraph)(next_handle += 16);
	return CUDA_SUCCESS;
}

static CUresult node(CUgraphNode *n)
{
	*n = (CUgraphNode)(next_handle += 16);
	return CUDA_SUCCESS;
}

static CUresult add_kernel(CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd,
			   const CUDA_KERNEL_NODE_PARAMS *p)
{
	(void)g, (void)d, (void)nd, (void)p;
	return node(n);
}

static CUresult add_memset(CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd,
			   const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
	(void)g, (void)d, (void)nd, (void)p, (void)ctx;
	return node(n);
}

static CUresult add_memcpy(CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd,
			   const CUDA_MEMCPY3D *p, CUcontext ctx)
{
	(void)g, (void)d, (void)nd, (void)p, (void)ctx;
	return node(n);
}

static CUresult add_host(CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd,
			 const CUDA_HOST_NODE_PARAMS *p)
{
	(void)g, (void)d, (void)nd, (void)p;
	return node(n);
}

static CUresult add_record(CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, CUevent ev)
{
	(void)g, (void)d, (void)nd, (void)ev;
	return node(n);
}

static CUresult instantiate(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	(void)g, (void)flags;
	*e = (CUgraphExec)(next_handle += 16);
	return CUDA_SUCCESS;
}

/* The engine's staging arenas (engine/stage.c): memory of the analyzer's own, never read. */
static CUresult host_alloc(void **p, size_t bytes, unsigned flags)
{
	(void)flags;
	*p = calloc(1, bytes);
	return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* The program's pageable buffers are not in the trace: a staged copy copies nothing here. */
static void *read_nothing(void *dst, const void *src, size_t n)
{
	(void)src;
	(void)n;
	return dst;
}

/* A staged copy to pageable memory waits for its stream (stage.c): the trace has no gap for it. */
static CUresult stream_sync(CUstream s)
{
	(void)s;
	return ag_an_status();
}

/* An eager submission: returns what the traced call returned. */
static CUresult eager(void)
{
	return ag_an_status();
}

#define ANSWER(name, fn)                                  \
	do {                                              \
		ag_pfn_##name typed = fn;                 \
		ag_real_fn[AG_FN_##name] = (void *)typed; \
	} while (0)
#define EAGER(name) (ag_real_fn[AG_FN_##name] = (void *)eager)

void ag_an_driver_init(void)
{
	ANSWER(cuCtxGetCurrent, ctx_get);
	ANSWER(cuCtxSetCurrent, ctx_set);
	ANSWER(cuStreamGetCtx, stream_ctx);
	ANSWER(cuStreamGetFlags, stream_flags);
	ANSWER(cuPointerGetAttribute, pointer_attribute);
	ANSWER(cuPointerGetAttributes, pointer_attributes);
	ANSWER(cuMemHostAlloc, host_alloc);
	ANSWER(cuStreamSynchronize, stream_sync);
	ag_stage_read = read_nothing;
	ANSWER(cuFuncGetParamInfo, func_param_info);
	ANSWER(cuKernelGetParamInfo, kernel_param_info);
	ANSWER(cuFuncGetName, func_name);
	ANSWER(cuKernelGetName, kernel_name);
	ANSWER(cuGraphCreate, graph_create);
	ANSWER(cuGraphAddKernelNode_v2, add_kernel);
	ANSWER(cuGraphAddMemsetNode, add_memset);
	ANSWER(cuGraphAddMemcpyNode, add_memcpy);
	ANSWER(cuGraphAddHostNode, add_host);
	ANSWER(cuGraphAddEventRecordNode, add_record);
	ANSWER(cuGraphInstantiateWithFlags, instantiate);
	EAGER(cuLaunchKernel);
	EAGER(cuLaunchKernel_ptsz);
	EAGER(cuLaunchKernelEx);
	EAGER(cuLaunchKernelEx_ptsz);
	EAGER(cuLaunchCooperativeKernel);
	EAGER(cuLaunchCooperativeKernel_ptsz);
	EAGER(cuLaunchHostFunc);
	EAGER(cuLaunchHostFunc_ptsz);
	EAGER(cuEventRecord);
	EAGER(cuEventRecord_ptsz);
	EAGER(cuEventRecordWithFlags);
	EAGER(cuEventRecordWithFlags_ptsz);
	EAGER(cuMemcpyHtoDAsync_v2);
	EAGER(cuMemcpyHtoDAsync_v2_ptsz);
	EAGER(cuMemcpyDtoHAsync_v2);
	EAGER(cuMemcpyDtoHAsync_v2_ptsz);
	EAGER(cuMemcpyDtoDAsync_v2);
	EAGER(cuMemcpyDtoDAsync_v2_ptsz);
	EAGER(cuMemcpyAsync);
	EAGER(cuMemcpyAsync_ptsz);
	EAGER(cuMemsetD8Async);
	EAGER(cuMemsetD8Async_ptsz);
	EAGER(cuMemsetD16Async);
	EAGER(cuMemsetD16Async_ptsz);
	EAGER(cuMemsetD32Async);
	EAGER(cuMemsetD32Async_ptsz);
	EAGER(cuMemsetD2D8Async);
	EAGER(cuMemsetD2D8Async_ptsz);
	EAGER(cuMemsetD2D16Async);
	EAGER(cuMemsetD2D16Async_ptsz);
	EAGER(cuMemsetD2D32Async);
	EAGER(cuMemsetD2D32Async_ptsz);
}
