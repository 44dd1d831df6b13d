/*
 * One stream operation as the program submitted it: the raw arguments of the
 * launch, copy, set, event record or host function, plus which entry point it
 * came through. The on_*.c handlers fill it; the engine records, holds or
 * forwards it; ag_call_submit() makes the real driver call it describes.
 */
#ifndef AG_CALL_H
#define AG_CALL_H

#include <cuda.h>

enum ag_op_kind { AG_OP_KERNEL, AG_OP_MEMSET, AG_OP_COPY, AG_OP_EVENT, AG_OP_HOSTFN };

enum ag_launch_api { AG_LAUNCH_PLAIN, AG_LAUNCH_EX, AG_LAUNCH_COOPERATIVE };

enum ag_copy_dir { AG_COPY_HTOD, AG_COPY_DTOH, AG_COPY_DTOD, AG_COPY_UNIFIED };

struct ag_call {
	unsigned char kind;
	unsigned char api;        /* kernel: enum ag_launch_api; copy: enum ag_copy_dir */
	unsigned char per_thread; /* came through a _ptsz/_ptds entry point */
	unsigned char sync_entry; /* a synchronous copy or set that does not wait (on_memory.c):
				     submitted through its own entry point */
	CUstream stream;
	union {
		struct {
			CUfunction f;
			unsigned grid[3], block[3], shmem;
			void **params;
			void **extra;
			const CUlaunchAttribute *attrs;
			unsigned nattrs;
		} kern;
		struct {
			CUdeviceptr dst;
			size_t pitch, width, height; /* height 1 and pitch 0 for the 1-D calls */
			unsigned value, elem;        /* elem: 1, 2 or 4 bytes */
			unsigned char two_d;         /* came through a cuMemsetD2D* entry point */
		} set;
		struct {
			CUdeviceptr dst, src; /* host pointers cast, for the host side */
			size_t bytes;
		} copy;
		struct {
			CUevent ev;
			unsigned flags;
			unsigned char with_flags;
		} event;
		struct {
			CUhostFn fn;
			void *data;
		} host;
	} u;
};

/* The real driver call the operation describes, through the entry point it came by. */
CUresult ag_call_submit(const struct ag_call *c);

#endif
