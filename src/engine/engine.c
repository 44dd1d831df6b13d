/*
 * The engine's entry points. (Pass-through stage: every operation is
 * forwarded at once; ordering calls have nothing to order.)
 */
#include "engine/engine.h"

#include "config.h"
#include "engine/kernels.h"
#include "hook/real.h"
#include "stats.h"

CUresult ag_engine_submit(const struct ag_call *c)
{
	if (c->kind == AG_OP_KERNEL) {
		struct ag_kern *k = ag_kern_get(c->u.kern.f);
		if (k)
			__atomic_add_fetch(&k->launches, 1, __ATOMIC_RELAXED);
	}
	return ag_call_submit(c);
}

void ag_engine_barrier(int fn)
{
	(void)fn;
}

void ag_engine_stream_op(CUstream s, int per_thread)
{
	(void)s, (void)per_thread;
}

void ag_engine_sync_stream(CUstream s, int per_thread)
{
	(void)s, (void)per_thread;
}

void ag_engine_sync_all(void)
{
}

CUresult ag_engine_sync_done(CUresult rc, CUstream s, int per_thread)
{
	(void)s, (void)per_thread;
	return rc;
}

void ag_engine_capture_begin(void)
{
}

void ag_engine_capture_end(void)
{
}

void ag_engine_forget_all(void)
{
	ag_kern_forget_all();
}

void ag_engine_stream_destroyed(CUstream s)
{
	(void)s;
}

void ag_engine_init(void)
{
}

void ag_engine_at_exit(void)
{
}

void ag_engine_before_fork(void)
{
}

void ag_engine_after_fork_child(void)
{
}
