/*
 * Handlers for events, stream waits and lifetimes, the program's own stream
 * capture, and the calls that make recorded handles invalid (unloads and
 * context teardown): each orders held work first, then forwards.
 */
#include "engine/engine.h"
#include "hook/real.h"

CUresult ag_on_cuEventCreate(CUevent *ev, unsigned int flags)
{
	CUresult rc = AG_REAL(cuEventCreate)(ev, flags);
	if (rc == CUDA_SUCCESS && ev)
		ag_engine_event_created(*ev, flags);
	return rc;
}

static CUresult record(int per_thread, int with_flags, CUevent ev, CUstream s, unsigned flags)
{
	struct ag_call c = {.kind = AG_OP_EVENT, .per_thread = (unsigned char)per_thread, .stream = s};
	c.u.event.ev = ev;
	c.u.event.flags = flags;
	c.u.event.with_flags = (unsigned char)with_flags;
	return ag_engine_submit(&c);
}

CUresult ag_on_cuEventRecord(CUevent ev, CUstream s)
{
	return record(0, 0, ev, s, 0);
}

CUresult ag_on_cuEventRecord_ptsz(CUevent ev, CUstream s)
{
	return record(1, 0, ev, s, 0);
}

CUresult ag_on_cuEventRecordWithFlags(CUevent ev, CUstream s, unsigned int flags)
{
	return record(0, 1, ev, s, flags);
}

CUresult ag_on_cuEventRecordWithFlags_ptsz(CUevent ev, CUstream s, unsigned int flags)
{
	return record(1, 1, ev, s, flags);
}

/* The event may have been recorded by held work on any stream. */
CUresult ag_on_cuStreamWaitEvent(CUstream s, CUevent ev, unsigned int flags)
{
	ag_engine_sync_all();
	ag_engine_stream_op(s, 0);
	return AG_REAL(cuStreamWaitEvent)(s, ev, flags);
}

CUresult ag_on_cuStreamWaitEvent_ptsz(CUstream s, CUevent ev, unsigned int flags)
{
	ag_engine_sync_all();
	ag_engine_stream_op(s, 1);
	return AG_REAL(cuStreamWaitEvent_ptsz)(s, ev, flags);
}

CUresult ag_on_cuStreamDestroy(CUstream s)
{
	ag_engine_stream_destroyed(s);
	return AG_REAL(cuStreamDestroy)(s);
}

CUresult ag_on_cuStreamDestroy_v2(CUstream s)
{
	ag_engine_stream_destroyed(s);
	return AG_REAL(cuStreamDestroy_v2)(s);
}

static CUresult began(CUresult rc)
{
	if (rc == CUDA_SUCCESS)
		ag_engine_capture_begin();
	return rc;
}

CUresult ag_on_cuStreamBeginCapture(CUstream s)
{
	ag_engine_sync_all();
	return began(AG_REAL(cuStreamBeginCapture)(s));
}

CUresult ag_on_cuStreamBeginCapture_ptsz(CUstream s)
{
	ag_engine_sync_all();
	return began(AG_REAL(cuStreamBeginCapture_ptsz)(s));
}

CUresult ag_on_cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
	ag_engine_sync_all();
	return began(AG_REAL(cuStreamBeginCapture_v2)(s, mode));
}

CUresult ag_on_cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{
	ag_engine_sync_all();
	return began(AG_REAL(cuStreamBeginCapture_v2_ptsz)(s, mode));
}

CUresult ag_on_cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps,
					   const CUgraphEdgeData *data, size_t n,
					   CUstreamCaptureMode mode)
{
	ag_engine_sync_all();
	return began(AG_REAL(cuStreamBeginCaptureToGraph)(s, g, deps, data, n, mode));
}

CUresult ag_on_cuStreamBeginCaptureToGraph_ptsz(CUstream s, CUgraph g, const CUgraphNode *deps,
						const CUgraphEdgeData *data, size_t n,
						CUstreamCaptureMode mode)
{
	ag_engine_sync_all();
	return began(AG_REAL(cuStreamBeginCaptureToGraph_ptsz)(s, g, deps, data, n, mode));
}

/* A capture ends whether it succeeded or was invalidated; other errors mean it was not ours. */
static CUresult ended(CUresult rc)
{
	if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ||
	    rc == CUDA_ERROR_STREAM_CAPTURE_UNJOINED)
		ag_engine_capture_end();
	return rc;
}

CUresult ag_on_cuStreamEndCapture(CUstream s, CUgraph *g)
{
	return ended(AG_REAL(cuStreamEndCapture)(s, g));
}

CUresult ag_on_cuStreamEndCapture_ptsz(CUstream s, CUgraph *g)
{
	return ended(AG_REAL(cuStreamEndCapture_ptsz)(s, g));
}

CUresult ag_on_cuModuleUnload(CUmodule m)
{
	ag_engine_forget_all();
	return AG_REAL(cuModuleUnload)(m);
}

CUresult ag_on_cuLibraryUnload(CUlibrary l)
{
	ag_engine_forget_all();
	return AG_REAL(cuLibraryUnload)(l);
}

CUresult ag_on_cuCtxDestroy(CUcontext ctx)
{
	ag_engine_forget_all();
	return AG_REAL(cuCtxDestroy)(ctx);
}

CUresult ag_on_cuCtxDestroy_v2(CUcontext ctx)
{
	ag_engine_forget_all();
	return AG_REAL(cuCtxDestroy_v2)(ctx);
}

CUresult ag_on_cuDevicePrimaryCtxReset(CUdevice d)
{
	ag_engine_forget_all();
	return AG_REAL(cuDevicePrimaryCtxReset)(d);
}

CUresult ag_on_cuDevicePrimaryCtxReset_v2(CUdevice d)
{
	ag_engine_forget_all();
	return AG_REAL(cuDevicePrimaryCtxReset_v2)(d);
}

CUresult ag_on_cuDevicePrimaryCtxRelease(CUdevice d)
{
	ag_engine_forget_all();
	return AG_REAL(cuDevicePrimaryCtxRelease)(d);
}

CUresult ag_on_cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	ag_engine_forget_all();
	return AG_REAL(cuDevicePrimaryCtxRelease_v2)(d);
}
