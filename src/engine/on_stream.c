/*
 * Handlers for events: creation (the engine must know which events have no
 * timing, the only ones whose records can be graph nodes), destruction (held
 * records go first, and graph nodes that record the event are pointed elsewhere; then
 * what the engine knew of the handle goes) and records, which
 * are stream operations the engine may hold like any other. Stream waits,
 * stream destruction, capture and teardown need no handler of their own: the
 * policy table gives them generic actions (src/hook/classes.txt).
 */
#include "engine/engine.h"
#include "driver/real.h"

CUresult ag_on_cuEventCreate(CUevent *ev, unsigned int flags)
{
	CUresult rc = AG_REAL(cuEventCreate)(ev, flags);
	if (rc == CUDA_SUCCESS && ev)
		ag_engine_event_created(*ev, flags);
	return rc;
}

static CUresult destroy(CUevent ev, CUresult (*real)(CUevent), int fn)
{
	ag_engine_caller(fn);
	ag_engine_barrier();
	ag_engine_event_destroying(ev);
	CUresult rc = real(ev);
	if (rc == CUDA_SUCCESS)
		ag_engine_event_destroyed(ev);
	return rc;
}

CUresult ag_on_cuEventDestroy(CUevent ev)
{
	return destroy(ev, AG_REAL(cuEventDestroy), AG_FN_cuEventDestroy);
}

CUresult ag_on_cuEventDestroy_v2(CUevent ev)
{
	return destroy(ev, AG_REAL(cuEventDestroy_v2), AG_FN_cuEventDestroy_v2);
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
