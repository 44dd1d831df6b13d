/*
 * Handlers for the primary context's life: retains are counted per device
 * (every retain, cudart's own too, comes through here), so that a reset, or
 * the release of the last reference, is known to destroy that context and
 * its streams without asking the driver anything more. Their stream states
 * then go, as for cuCtxDestroy: the driver may give a dead stream's handle to
 * a new stream, which must not inherit the dead one's flags (blocking or not
 * decides its order against the legacy stream) or context (issue 8, item 15).
 */
#include <pthread.h>

#include "driver/real.h"
#include "engine/engine.h"

#define DEVICES 64

static struct {
	CUcontext ctx;
	long refs;
} primary[DEVICES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int known(CUdevice dev)
{
	return dev >= 0 && dev < DEVICES;
}

CUresult ag_on_cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult rc = AG_REAL(cuDevicePrimaryCtxRetain)(pctx, dev);
	if (rc == CUDA_SUCCESS && known(dev)) {
		pthread_mutex_lock(&lock);
		primary[dev].ctx = *pctx;
		primary[dev].refs++;
		pthread_mutex_unlock(&lock);
	}
	return rc;
}

/* Forgets the device's context: the reset or last release took it. */
static CUcontext take(CUdevice dev)
{
	if (!known(dev))
		return NULL;
	pthread_mutex_lock(&lock);
	CUcontext ctx = primary[dev].ctx;
	primary[dev].ctx = NULL;
	primary[dev].refs = 0;
	pthread_mutex_unlock(&lock);
	return ctx;
}

static CUresult reset(CUdevice dev, CUresult (*real)(CUdevice), int fn)
{
	ag_engine_caller(fn);
	ag_engine_ctx_destroyed(take(dev));
	return real(dev);
}

CUresult ag_on_cuDevicePrimaryCtxReset(CUdevice dev)
{
	return reset(dev, AG_REAL(cuDevicePrimaryCtxReset), AG_FN_cuDevicePrimaryCtxReset);
}

CUresult ag_on_cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	return reset(dev, AG_REAL(cuDevicePrimaryCtxReset_v2), AG_FN_cuDevicePrimaryCtxReset_v2);
}

/* Handles are forgotten before any release (its modules may go with it); the states after the
 * last one. */
static CUresult release(CUdevice dev, CUresult (*real)(CUdevice), int fn)
{
	ag_engine_caller(fn);
	ag_engine_forget_all();
	CUresult rc = real(dev);
	if (rc != CUDA_SUCCESS || !known(dev))
		return rc;
	pthread_mutex_lock(&lock);
	int last = primary[dev].refs > 0 && --primary[dev].refs == 0;
	pthread_mutex_unlock(&lock);
	if (last)
		ag_engine_ctx_released(take(dev));
	return rc;
}

CUresult ag_on_cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return release(dev, AG_REAL(cuDevicePrimaryCtxRelease), AG_FN_cuDevicePrimaryCtxRelease);
}

CUresult ag_on_cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	return release(dev, AG_REAL(cuDevicePrimaryCtxRelease_v2), AG_FN_cuDevicePrimaryCtxRelease_v2);
}
