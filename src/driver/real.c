/*
 * Slots of real driver entry points, one per exact variant. A door fills a
 * slot with the pointer the program was given (ag_real_learn); a slot nobody
 * filled is resolved on first use the way the program's own link would have:
 * the next definition after this library, else the loaded libcuda.
 */
#include <dlfcn.h>

#include "driver/real.h"
#include "log.h"

void *ag_real_fn[AG_FN_COUNT];

static CUresult missing_function(void)
{
	return CUDA_ERROR_NOT_FOUND;
}

static void *libcuda(void)
{
	static void *handle;
	void *h = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);
	if (!h) {
		h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (!h)
			h = dlopen("libcuda.so.1", RTLD_NOW);
		__atomic_store_n(&handle, h, __ATOMIC_RELEASE);
	}
	return h;
}

void ag_real_learn(int id, void *fn)
{
	void *expected = NULL;
	if (!__atomic_compare_exchange_n(&ag_real_fn[id], &expected, fn, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE) &&
	    expected != fn)
		AG_LOG(AG_LOG_DEBUG, "%s: a second lookup returned another pointer; keeping the first",
		       ag_fn_names[id]);
}

int ag_real_is_ours(const void *p)
{
	static Dl_info self;
	if (!self.dli_fbase)
		dladdr((void *)ag_real_is_ours, &self);
	Dl_info info;
	return dladdr(p, &info) && info.dli_fbase == self.dli_fbase;
}

void *ag_real_resolve(int id)
{
	const char *name = ag_fn_names[id];
	void *p = ag_real_dlsym(RTLD_NEXT, name);
	if (!p || ag_real_is_ours(p)) {
		void *h = libcuda();
		p = h ? ag_real_dlsym(h, name) : NULL;
	}
	if (!p) {
		AG_LOG(AG_LOG_WARN, "%s is not in the loaded libcuda; calls return CUDA_ERROR_NOT_FOUND",
		       name);
		p = (void *)missing_function;
	}
	ag_real_learn(id, p);
	return __atomic_load_n(&ag_real_fn[id], __ATOMIC_ACQUIRE);
}
