/*
 * The launch loop the overhead benchmark counts instructions of: ITERS
 * iterations of KERNELS launches of ag_axpy on a created stream, with a
 * stream synchronize after each iteration. "repeat" keeps every argument the
 * same from one iteration to the next (the engine replays it as a graph);
 * "never" gives every launch a new scalar and a new dynamic shared-memory
 * size (4093 of them, a prime, taken in turn), so that neither the arguments
 * nor the shapes repeat within a run: the engine only observes (a new scalar
 * alone is a segment with changing arguments, which the engine replays with
 * updates). Driver API only, so it runs on the CPU stand-in.
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

int main(int argc, char **argv)
{
	if (argc != 5 || (strcmp(argv[4], "repeat") && strcmp(argv[4], "never"))) {
		fprintf(stderr, "usage: loop KERNELS.ptx ITERS KERNELS repeat|never\n");
		return 2;
	}
	int iters = atoi(argv[2]), kernels = atoi(argv[3]), never = !strcmp(argv[4], "never");
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
	for (int it = 0; it < iters; it++) {
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
