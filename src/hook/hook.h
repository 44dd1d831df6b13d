/*
 * The hook layer's shared names: the three doors through which a program
 * reaches the driver, the class of every entry point, and the table of
 * generated wrappers (build/gen/g_hook.c) that all three doors hand out.
 */
#ifndef AG_HOOK_H
#define AG_HOOK_H

#include "g_hook.h"
#include "stats.h"

struct ag_hook_fn {
	const char *name;
	unsigned char stat;
	void *door[AG_DOOR_COUNT];
};

/* Sorted by name, indexed by enum ag_fn. */
extern const struct ag_hook_fn ag_hook_fns[AG_FN_COUNT];

/* The entry point with this exact symbol name, or -1. */
int ag_hook_find(const char *name);

/*
 * Given what the real driver handed out for a lookup of `asked`, returns what
 * the program gets through `door`: our wrapper of the exact variant, a barrier
 * trampoline for a driver function we have no wrapper for, or `real` itself
 * when it is not a driver function or the library is off.
 */
void *ag_hook_substitute(void *real, const char *asked, enum ag_door door);

/* A barrier trampoline in front of `real` (trampolines.S), or real if none is left. */
void *ag_hook_unknown(void *real, const char *asked);

#endif
