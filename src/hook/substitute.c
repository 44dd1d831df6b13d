/*
 * What a door hands out. Both lookup doors end here with the pointer the real
 * lookup returned: we learn which exact variant it is (the driver may answer
 * "cuMemAlloc" with cuMemAlloc_v2, or a per-thread _ptsz variant), remember
 * that pointer as the one our wrapper forwards to, and return the wrapper of
 * that very variant. A driver function without a wrapper gets a barrier
 * trampoline; anything that is not a libcuda function is returned untouched.
 * With AUTOGRAPH=0 the wrappers are still handed out: they only count and
 * forward, which is what makes pass-through measurable.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "hook/hook.h"
#include "driver/real.h"
#include "log.h"

static int by_name(const void *key, const void *elem)
{
	return strcmp(key, ((const struct ag_hook_fn *)elem)->name);
}

int ag_hook_find(const char *name)
{
	const struct ag_hook_fn *f =
		bsearch(name, ag_hook_fns, AG_FN_COUNT, sizeof ag_hook_fns[0], by_name);
	return f ? (int)(f - ag_hook_fns) : -1;
}

static int from_libcuda(const Dl_info *info)
{
	const char *base = info->dli_fname ? strrchr(info->dli_fname, '/') : NULL;
	base = base ? base + 1 : info->dli_fname;
	return base && strncmp(base, "libcuda.so", 10) == 0;
}

/*
 * When the symbol table does not name the pointer exactly, try every variant
 * of the asked name (asked, asked_v2…, with _ptsz/_ptds) in the same object.
 */
static int identify_by_variants(void *real, const char *asked, const Dl_info *info)
{
	void *h = dlopen(info->dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return -1;
	size_t n = strlen(asked);
	int found = -1;
	for (int id = 0; id < AG_FN_COUNT && found < 0; id++) {
		const char *name = ag_hook_fns[id].name;
		if (strncmp(name, asked, n) != 0 || (name[n] != '\0' && name[n] != '_'))
			continue;
		if (ag_real_dlsym(h, name) == real)
			found = id;
	}
	dlclose(h);
	return found;
}

void *ag_hook_substitute(void *real, const char *asked, enum ag_door door)
{
	if (ag_real_is_ours(real))
		return real;
	Dl_info info;
	if (!dladdr(real, &info) || !from_libcuda(&info))
		return real;
	int id = -1;
	if (info.dli_saddr == real && info.dli_sname)
		id = ag_hook_find(info.dli_sname);
	if (id < 0)
		id = identify_by_variants(real, asked, &info);
	ag_stats_count_lookup(door, id >= 0);
	if (id < 0)
		return ag_hook_unknown(real, asked);
	ag_real_learn(id, real);
	AG_LOG(AG_LOG_DEBUG, "door %d: %s -> wrapper of %s", door, asked, ag_hook_fns[id].name);
	return ag_hook_fns[id].door[door];
}
