/*
 * Copies as the engine records them: a copy's addresses and size are its
 * arguments, not its shape, and are checked the way the driver checks them at
 * the call before a copy with new ones is held; a unified-address copy's
 * direction is found from its pointers.
 */
#include <string.h>

#include "driver/real.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "stats.h"

/*
 * A copy's addresses and size, recorded as its arguments: a caching allocator
 * hands a step's temporaries out at rotating addresses, so the copies between
 * them differ from step to step the way kernel arguments do, and are replayed
 * by updating the node. Returns 0 if they cannot be recorded.
 */
int ag_copy_pack(struct ag_stream *st, const struct ag_call *c, struct ag_op *op)
{
	uint8_t *buf = ag_arena_alloc(st, AG_COPY_ARGS, &op->arena_pos);
	if (!buf)
		return 0;
	memcpy(buf, &c->u.copy, AG_COPY_ARGS);
	op->args = buf;
	op->argbytes = AG_COPY_ARGS;
	return 1;
}

int ag_copy_same_args(const struct ag_call *c, const uint8_t *args)
{
	return memcmp(args, &c->u.copy, AG_COPY_ARGS) == 0;
}

/*
 * [p, p + n) lies inside one device allocation, and with unmanaged, not in managed
 * memory (only then asked: the analyzer's driver answers the first three alone).
 */
static int in_allocation(CUdeviceptr p, size_t n, int unmanaged)
{
	CUpointer_attribute attrs[4] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
					CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_IS_MANAGED};
	unsigned type = 0, managed = 0;
	CUdeviceptr start = 0;
	size_t size = 0;
	void *data[4] = {&type, &start, &size, &managed};
	if (AG_REAL(cuPointerGetAttributes)(unmanaged ? 4 : 3, attrs, data, p) != CUDA_SUCCESS)
		return 0;
	return type == CU_MEMORYTYPE_DEVICE && !managed && p >= start && n <= size && p - start <= size - n;
}

static int device_range(CUdeviceptr p, size_t n)
{
	return in_allocation(p, n, 0);
}

/* What a synchronous copy or set must touch to be asynchronous with respect to the host. */
int ag_copy_device_only(CUdeviceptr p, size_t n)
{
	return n && in_allocation(p, n, 1);
}

/*
 * A held operation must not be able to fail when it is submitted, and a copy
 * with new addresses has not been submitted yet: the driver checks them at
 * the call. The device side must lie in device memory that exists now (a
 * later free submits held work first, engine.c), the host side in page-locked
 * memory (facts.c), as the copy's node needs.
 */
int ag_copy_addresses_ok(const struct ag_call *c)
{
	const void *dst = (const void *)c->u.copy.dst, *src = (const void *)c->u.copy.src;
	size_t n = c->u.copy.bytes;
	if (!n)
		return 0;
	switch (c->api) {
	case AG_COPY_HTOD:
		return ag_engine_pinned(src, n) && device_range(c->u.copy.dst, n);
	case AG_COPY_DTOH:
		return ag_engine_pinned(dst, n) && device_range(c->u.copy.src, n);
	case AG_COPY_DTOD:
		return device_range(c->u.copy.dst, n) && device_range(c->u.copy.src, n);
	default:
		return 0;
	}
}

/* Where a unified-address copy goes: counted by direction, recordable unless pageable. */
enum side { SIDE_PAGEABLE, SIDE_HOST, SIDE_DEVICE };

static enum side side_of(CUdeviceptr p, size_t bytes)
{
	if (ag_engine_pinned((const void *)p, bytes))
		return SIDE_HOST;
	unsigned type = 0;
	if (AG_REAL(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) != CUDA_SUCCESS)
		return SIDE_PAGEABLE;
	return type == CU_MEMORYTYPE_HOST ? SIDE_HOST : SIDE_DEVICE;
}

int ag_copy_unified_nodeable(const struct ag_call *c)
{
	enum side src = side_of(c->u.copy.src, c->u.copy.bytes);
	enum side dst = side_of(c->u.copy.dst, c->u.copy.bytes);
	int from_dev = src == SIDE_DEVICE, to_dev = dst == SIDE_DEVICE;
	ag_stats_add(from_dev ? (to_dev ? AG_S_COPY_DTOD_RT : AG_S_COPY_DTOH_RT)
			      : (to_dev ? AG_S_COPY_HTOD_RT : AG_S_COPY_HTOH_RT),
		     1);
	return src != SIDE_PAGEABLE && dst != SIDE_PAGEABLE;
}
