/*
 * The header-only NVTX 3 from the toolkit: it finds a profiler's injection
 * library by itself (NVTX_INJECTION64_PATH, set by nsys), so with no
 * profiler attached the ranges cost a call each and do nothing.
 */
#include "nvtx.h"

#include <nvtx3/nvToolsExt.h>

int ag_nvtx_on;

void ag_nvtx_init(long on)
{
	ag_nvtx_on = on != 0;
}

void ag_nvtx_push_slow(const char *what)
{
	nvtxRangePushA(what);
}

void ag_nvtx_pop_slow(void)
{
	nvtxRangePop();
}
