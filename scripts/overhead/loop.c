/*
 * The launch loop the overhead benchmark counts instructions of: ITERS
 * iterations of KERNELS launches of ag_axpy on a created stream, with a
 * stream synchronize after each iteration. "repeat" keeps every argument the
 * same from one iteration to the next (the engine replays it as a graph);
 * "never" gives every launch a new scalar and a new dynamic shared-memory
 * size (4093 of them, a prime, taken in turn), so that neither the arguments
 * nor the shapes repeat within a run: the engine only observes (a new scalar
 * alone is a segment with changing arguments, which the engine replays with
 * updates). "xla" makes each of the KERNELS steps what a JAX jit step submits
 * (apps/jax_loop.py's trace): two context switches, three launches on one
 * stream with ping-pong buffers and an output slot that moves every step, a
 * record of a new event and of a fixed one, another stream waiting for the new
 * event, a host function there, and the previous step's event destroyed.
 * Driver API only, so it runs on the CPU stand-in.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                                      \
	do {                                                                                       \
		CUresult r_ = (x);                                                                 \
		if (r_ != CUDA_SUCCESS) {                                                          \
			const char *n_ = "?";                                                      \
			cuGetErrorName(r_, &n_);                                                   \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, n_);            \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *b = malloc((size_t)n + 1);
	if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(2);
	}
	b[n] = 0;
	fclose(f);
	return b;
}

static void host_noop(void *arg)
{
	(void)arg;
}

/* One JAX jit step as the trace of apps/jax_loop.py shows it. */
static void xla_step(CUcontext ctx, CUfunction f, CUstream s, CUstream host, CUevent fixed,
		     CUevent *prev, CUdeviceptr in, CUdeviceptr out, CUdeviceptr slot, int n)
{
	CUevent fresh;
	float a = 1e-3f;
	int one = 1;
	void *p1[] = {&out, &in, &a, &n}, *p2[] = {&slot, &out, &a, &one};
	CK(cuCtxSetCurrent(ctx));
	CK(cuEventCreate(&fresh, CU_EVENT_DISABLE_TIMING));
	CK(cuCtxSetCurrent(ctx));
	CK(cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, s, p1, NULL));
	CK(cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, s, p1, NULL));
	CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, p2, NULL));
	CK(cuEventRecord(fresh, s));
	CK(cuEventRecord(fixed, s));
	CK(cuStreamWaitEvent(host, fresh, 0));
	CK(cuLaunchHostFunc(host, host_noop, NULL));
	if (*prev)
		CK(cuEventDestroy(*prev));
	*prev = fresh;
}

int main(int argc, char **argv)
{
	if (argc != 5 || (strcmp(argv[4], "repeat") && strcmp(argv[4], "never") &&
			  strcmp(argv[4], "xla"))) {
		fprintf(stderr, "usage: loop KERNELS.ptx ITERS KERNELS repeat|never|xla\n");
		return 2;
	}
	int iters = atoi(argv[2]), kernels = atoi(argv[3]), never = !strcmp(argv[4], "never");
	int xla = !strcmp(argv[4], "xla");
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction axpy;
	CUstream s;
	CUdeviceptr y, x;
	int n = 1024;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, slurp(argv[1])));
	CK(cuModuleGetFunction(&axpy, mod, "ag_axpy"));
	CK(cuMemAlloc(&y, n * sizeof(float)));
	CK(cuMemAlloc(&x, n * sizeof(float)));
	CK(cuMemsetD32(y, 0, n));
	CK(cuMemsetD32(x, 0x3c23d70a, n)); /* 0.01f */
	CK(cuStreamCreate(&s, 0));
	if (xla) {
		CUstream host;
		CUevent fixed, prev = NULL;
		CUdeviceptr slots;
		CK(cuStreamCreate(&host, 0));
		CK(cuEventCreate(&fixed, CU_EVENT_DISABLE_TIMING));
		CK(cuMemAlloc(&slots, (size_t)kernels * 256));
		for (int it = 0; it < iters; it++) {
			for (int k = 0; k < kernels; k++)
				xla_step(ctx, axpy, s, host, fixed, &prev, (k & 1) ? x : y,
					 (k & 1) ? y : x, slots + (CUdeviceptr)k * 256, n);
			CK(cuStreamSynchronize(s));
			CK(cuStreamSynchronize(host));
		}
		CK(cuEventDestroy(prev));
	}
	for (int it = 0; !xla && it < iters; it++) {
		for (int k = 0; k < kernels; k++) {
			float a = never ? 1e-6f * (float)(it * kernels + k) : 1e-3f * (float)(k + 1);
			void *params[] = {&y, &x, &a, &n};
			unsigned shmem = never ? 4u * (unsigned)((it * kernels + k) % 4093) : 0;
			CK(cuLaunchKernel(axpy, 4, 1, 1, 256, 1, 1, shmem, s, params, NULL));
		}
		CK(cuStreamSynchronize(s));
	}
	float out[4];
	CK(cuMemcpyDtoH(out, y, sizeof out));
	printf("y[0..3] = %g %g %g %g\n", out[0], out[1], out[2], out[3]);
	return 0;
}
