/*
 * The dlsym door: the C side of dlsym_entry.S. The real lookup runs first;
 * only a driver function that the real lookup found in libcuda is replaced,
 * so every other library's symbols, and failures, are exactly what libc says.
 * Nothing heavy happens here: one real lookup, a name test, a table search.
 */
#include <dlfcn.h>

#include "hook/hook.h"
#include "driver/real.h"

void *ag_hook_dlsym(void *handle, const char *name);
void *ag_hook_dlvsym(void *handle, const char *name, const char *version);

static int driver_name(const char *name)
{
	return name && name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z';
}

void *ag_hook_dlsym(void *handle, const char *name)
{
	void *p = ag_real_dlsym(handle, name);
	return p && driver_name(name) ? ag_hook_substitute(p, name, AG_DOOR_DLSYM) : p;
}

void *ag_hook_dlvsym(void *handle, const char *name, const char *version)
{
	void *p = ag_real_dlvsym(handle, name, version);
	return p && driver_name(name) ? ag_hook_substitute(p, name, AG_DOOR_DLSYM) : p;
}
