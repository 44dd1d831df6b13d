/*
 * What the parts of `autograph analyze` share: the trace's definitions as the
 * replay has met them so far (analyze.c keeps them; driver.c answers the
 * engine's questions from them) and the replayed time (timer.c).
 */
#ifndef AG_ANALYZE_H
#define AG_ANALYZE_H

#include <stdint.h>

#include <cuda.h>

struct ag_an_kernel {
	uintptr_t handle;
	uint8_t is_kernel, layout_ok;
	uint32_t nparams;
	uint16_t *offset, *size;
	char *name;
};

struct ag_an_stream {
	uintptr_t handle;
	CUcontext ctx;
	unsigned flags;
	int ok;
};

/* analyze.c */
const struct ag_an_kernel *ag_an_kernel_of(uintptr_t handle);
const struct ag_an_stream *ag_an_stream_of(CUstream s);
CUcontext ag_an_thread_ctx(void);
void ag_an_set_thread_ctx(CUcontext ctx);
unsigned ag_an_memory_type(CUdeviceptr p); /* for the copy being replayed; 0: unknown */
CUresult ag_an_status(void);               /* what the traced call being replayed returned */
/* The device copy being replayed succeeded when traced: its ranges were device memory then. */
int ag_an_copy_range(CUdeviceptr p, size_t *bytes);

/* What the replay met, for the summary. */
struct ag_an_totals {
	uint64_t ops, kernels, copies, sets, events, hostfns, boundaries, us;
	size_t threads;
	const char *const *fn_names;   /* by driver function id in the trace; NULL where unnamed */
	size_t nfn;
	const uint64_t *flushes_by_fn; /* holds each function's calls ended: [id + 1]; [0] unknown */
};

/* summary.c */
void ag_an_summary(const char *path, const struct ag_an_totals *t);

/* driver.c */
void ag_an_driver_init(void);

/* timer.c */
void ag_an_timer_advance(uint64_t now_us);

#endif
