/*
 * The one way into the real driver. Every wrapper and the engine call libcuda
 * through AG_REAL(symbol), which reads the slot for that exact variant: filled
 * by a door with the very pointer the program was given, or resolved on first
 * use from the libcuda that is loaded.
 */
#ifndef AG_REAL_H
#define AG_REAL_H

#include "g_hook.h"

extern void *ag_real_fn[AG_FN_COUNT];

void *ag_real_resolve(int id);

/* Records what a door learned; the first pointer for a variant wins. */
void ag_real_learn(int id, void *fn);

static inline void *ag_real_get(int id)
{
	void *p = __atomic_load_n(&ag_real_fn[id], __ATOMIC_ACQUIRE);
	return p ? p : ag_real_resolve(id);
}

/* A call through AG_REAL(name)(args) inside a sampled wrapper is timed for the
 * self-measurement (stats.h), as driver time; AG_REAL_RAW is the bare pointer, for the
 * pass-through wrappers. */
#define AG_REAL(name) ag_real_call_##name
#define AG_REAL_RAW(name) ((ag_pfn_##name)ag_real_get(AG_FN_##name))
#include "g_real.h"

/* True if p points into this library (a lookup that found our own wrapper). */
int ag_real_is_ours(const void *p);

/* The C library's own dlsym/dlvsym, found without calling the public ones. */
void *ag_real_dlsym(void *handle, const char *name);
void *ag_real_dlvsym(void *handle, const char *name, const char *version);

#endif
