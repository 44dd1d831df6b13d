/* The linked door: the program is linked with -lcuda (the toolkit's stub at build time,
 * libcuda.so.1 at run time) and calls the exact cu* symbols directly, the _ptsz/_ptds
 * ones for --ptds, as code built with CUDA_API_PER_THREAD_DEFAULT_STREAM does. */
#include "drv.h"

const char drv_door[] = "link";

void drv_open(struct drv *d, int per_thread)
{
#define DRV_LINK(member, base, version, sym, ptsym) d->member = per_thread ? ptsym : sym;
    DRV_FUNCS(DRV_LINK)
#undef DRV_LINK
}
