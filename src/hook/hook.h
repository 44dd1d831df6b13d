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

/* What kind of thread this is (callback.c): unknown until its first wrapped call. */
enum ag_thread_kind { AG_THREAD_UNKNOWN, AG_THREAD_PROGRAM, AG_THREAD_HOST_FN };
extern __thread signed char ag_hook_thread_kind __attribute__((tls_model("initial-exec")));
int ag_hook_classify_thread(void);

/* True on a driver thread running a host function: the call goes to the driver as it is. */
static inline __attribute__((always_inline)) int ag_hook_in_host_fn(void)
{
	int kind = ag_hook_thread_kind;
	if (__builtin_expect(kind == AG_THREAD_PROGRAM, 1))
		return 0;
	return kind == AG_THREAD_HOST_FN || ag_hook_classify_thread();
}

/* A barrier trampoline in front of `real` (trampolines.S), or real if none is left. */
void *ag_hook_unknown(void *real, const char *asked);

#endif
