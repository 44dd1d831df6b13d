/*
 * NVTX ranges around what autograph does to a program (graph build, replay,
 * fallback), so a profiler timeline shows it. Off unless AUTOGRAPH_NVTX=1;
 * when off each call is one predictable branch.
 */
#ifndef AG_NVTX_H
#define AG_NVTX_H

extern int ag_nvtx_on;

void ag_nvtx_init(long on);
void ag_nvtx_push_slow(const char *what);
void ag_nvtx_pop_slow(void);

static inline void ag_nvtx_push(const char *what)
{
	if (__builtin_expect(ag_nvtx_on, 0))
		ag_nvtx_push_slow(what);
}

static inline void ag_nvtx_pop(void)
{
	if (__builtin_expect(ag_nvtx_on, 0))
		ag_nvtx_pop_slow();
}

#endif
