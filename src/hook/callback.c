/*
 * Which threads are the driver's host-function threads. A host function
 * (cuLaunchHostFunc, cuStreamAddCallback, a graph's host node) must not call the
 * driver, and the driver answers it CUDA_ERROR_NOT_PERMITTED (issue 8, item 15.1).
 * Seen by the engine, such a call would go wrong twice over: a launch matching a
 * held sequence would be held and answered CUDA_SUCCESS, and a barrier would
 * flush other streams' held work from a thread whose submissions the driver
 * refuses. So every wrapper that reaches the engine asks here first, and calls
 * from a host-function thread go to the driver untouched.
 *
 * A thread is classified once, at its first wrapped call, by asking the driver a
 * question that changes nothing: cuCtxGetCurrent, which the driver refuses on
 * its host-function threads and answers everywhere else (before cuInit with
 * CUDA_ERROR_NOT_INITIALIZED: host-function threads only exist after it). The
 * driver runs host functions on threads of its own, which never run program
 * code, so the answer holds for the thread's life.
 */
#include "driver/real.h"
#include "hook/hook.h"

__thread signed char ag_hook_thread_kind __attribute__((tls_model("initial-exec")));

int ag_hook_classify_thread(void)
{
	CUcontext current;
	int host_fn = AG_REAL_RAW(cuCtxGetCurrent)(&current) == CUDA_ERROR_NOT_PERMITTED;
	ag_hook_thread_kind = host_fn ? AG_THREAD_HOST_FN : AG_THREAD_PROGRAM;
	return host_fn;
}
