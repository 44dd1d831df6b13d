/*
 * Handlers for kernel launches and host functions: they describe the call
 * (struct ag_call) and hand it to the engine. One function per exported
 * variant, so a per-thread entry point keeps its meaning of the NULL stream.
 */
#include "engine/engine.h"
#include "driver/real.h"

static CUresult launch(int api, int per_thread, CUfunction f, unsigned gx, unsigned gy,
		       unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,
		       CUstream s, void **params, void **extra, const CUlaunchAttribute *attrs,
		       unsigned nattrs)
{
	struct ag_call c = {.kind = AG_OP_KERNEL, .api = (unsigned char)api,
			    .per_thread = (unsigned char)per_thread, .stream = s};
	c.u.kern.f = f;
	c.u.kern.grid[0] = gx, c.u.kern.grid[1] = gy, c.u.kern.grid[2] = gz;
	c.u.kern.block[0] = bx, c.u.kern.block[1] = by, c.u.kern.block[2] = bz;
	c.u.kern.shmem = shmem;
	c.u.kern.params = params;
	c.u.kern.extra = extra;
	c.u.kern.attrs = attrs;
	c.u.kern.nattrs = nattrs;
	return ag_engine_submit(&c);
}

CUresult ag_on_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			      unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
			      void **extra)
{
	return launch(AG_LAUNCH_PLAIN, 0, f, gx, gy, gz, bx, by, bz, shmem, s, params, extra, NULL, 0);
}

CUresult ag_on_cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
				   unsigned by, unsigned bz, unsigned shmem, CUstream s,
				   void **params, void **extra)
{
	return launch(AG_LAUNCH_PLAIN, 1, f, gx, gy, gz, bx, by, bz, shmem, s, params, extra, NULL, 0);
}

static CUresult launch_ex(int per_thread, const CUlaunchConfig *cfg, CUfunction f, void **params,
			  void **extra)
{
	/* Arguments the driver refuses are its to refuse: forwarded as they are, never read. */
	if (!cfg || (cfg->numAttrs && !cfg->attrs))
		return per_thread ? AG_REAL(cuLaunchKernelEx_ptsz)(cfg, f, params, extra)
				  : AG_REAL(cuLaunchKernelEx)(cfg, f, params, extra);
	return launch(AG_LAUNCH_EX, per_thread, f, cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ,
		      cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ, cfg->sharedMemBytes,
		      cfg->hStream, params, extra, cfg->attrs, cfg->numAttrs);
}

CUresult ag_on_cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
	return launch_ex(0, cfg, f, params, extra);
}

CUresult ag_on_cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **params,
				     void **extra)
{
	return launch_ex(1, cfg, f, params, extra);
}

CUresult ag_on_cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
					 unsigned bx, unsigned by, unsigned bz, unsigned shmem,
					 CUstream s, void **params)
{
	return launch(AG_LAUNCH_COOPERATIVE, 0, f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL,
		      NULL, 0);
}

CUresult ag_on_cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
					      unsigned bx, unsigned by, unsigned bz, unsigned shmem,
					      CUstream s, void **params)
{
	return launch(AG_LAUNCH_COOPERATIVE, 1, f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL,
		      NULL, 0);
}

static CUresult host_fn(int per_thread, CUstream s, CUhostFn fn, void *data)
{
	struct ag_call c = {.kind = AG_OP_HOSTFN, .per_thread = (unsigned char)per_thread, .stream = s};
	c.u.host.fn = fn;
	c.u.host.data = data;
	return ag_engine_submit(&c);
}

CUresult ag_on_cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data)
{
	return host_fn(0, s, fn, data);
}

CUresult ag_on_cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *data)
{
	return host_fn(1, s, fn, data);
}
