/*
 * The kernel table: open addressing over a fixed array of entry pointers,
 * filled with compare-and-swap, never locked. An entry, once published, is
 * immutable but for its launch counter. Forgetting (after an unload, when the
 * driver may reuse a handle for another kernel) publishes a fresh table. The
 * table it replaces stays, because a thread may still hold one of its entries
 * and because the exit report counts their launches; the one before that is
 * freed (no thread holds an entry across a whole unload and reload), so
 * unloading modules in a loop costs no memory (issue 8, pattern 11). A handle
 * looks at PROBES slots at most: once the table (or that part of it) is full,
 * further handles are not learned and their launches are not graph nodes.
 */
#include "engine/kernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>

#include "config.h"
#include "names.h"
#include "driver/real.h"

#define CAPACITY (1u << 16)
#define PROBES 256 /* slots looked at per handle: a full table must not cost a scan per launch */

struct generation {
	struct ag_kern *slot[CAPACITY];
	struct generation *older;
};

static struct generation first;
static struct ag_kern *retired; /* launched entries of freed generations, by name (uthash) */
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static struct generation *current = &first;
static unsigned count;

static unsigned slot_of(uintptr_t h)
{
	uint64_t x = (uint64_t)h * 0x9E3779B97F4A7C15ull;
	return (unsigned)(x >> 48) & (CAPACITY - 1);
}

/* Parameter info: cuFuncGetParamInfo refuses a CUkernel, cuKernelGetParamInfo takes it. */
static int param_info(CUfunction f, int is_kernel, size_t i, size_t *off, size_t *size)
{
	return is_kernel ? AG_REAL(cuKernelGetParamInfo)((CUkernel)f, i, off, size)
			 : AG_REAL(cuFuncGetParamInfo)(f, i, off, size);
}

/*
 * NCCL's collective kernels (ncclDevKernel_*, ncclKernel_*, mangled or not) wait
 * for their peers: held, a collective could wait for work another process or
 * device holds, and captured ones must be captured alike on every rank. Unless
 * AUTOGRAPH_NCCL=1 they are never graph nodes (docs/multi-gpu.md).
 */
static int is_nccl(const char *name)
{
	char q[256];
	const char *n = ag_name_qualified(name, q, sizeof q) ? q : name;
	return strncmp(n, "nccl", 4) == 0;
}

static struct ag_kern *learn(CUfunction f)
{
	size_t off, size;
	int is_kernel = 0;
	CUresult rc = param_info(f, 0, 0, &off, &size);
	if (rc == CUDA_ERROR_INVALID_HANDLE) {
		is_kernel = 1;
		rc = param_info(f, 1, 0, &off, &size);
	}
	int layout_ok = rc == CUDA_SUCCESS || rc == CUDA_ERROR_INVALID_VALUE;
	size_t n = 0;
	while (layout_ok && rc == CUDA_SUCCESS && n < 0xffff)
		rc = param_info(f, is_kernel, ++n, &off, &size);
	const char *name = NULL;
	if (is_kernel)
		AG_REAL(cuKernelGetName)(&name, (CUkernel)f);
	else
		AG_REAL(cuFuncGetName)(&name, f);
	if (!name)
		name = "?";
	size_t len = strlen(name) + 1;
	struct ag_kern *k = calloc(1, sizeof *k + len);
	if (!k)
		return NULL;
	memcpy(k->name, name, len);
	k->handle = (uintptr_t)f;
	k->is_kernel = (uint8_t)is_kernel;
	k->nparams = (uint16_t)n;
	if (layout_ok && n) {
		k->offset = calloc(n, sizeof *k->offset);
		k->size = calloc(n, sizeof *k->size);
		layout_ok = k->offset && k->size;
	}
	for (size_t i = 0; layout_ok && i < n; i++) {
		if (param_info(f, is_kernel, i, &off, &size) != CUDA_SUCCESS) {
			layout_ok = 0;
			break;
		}
		k->offset[i] = (uint16_t)off;
		k->size[i] = (uint16_t)size;
		if (off + size > k->argbytes)
			k->argbytes = (uint32_t)(off + size);
	}
	k->layout_ok = (uint8_t)layout_ok;
	size_t covered = 0;
	for (size_t i = 0; layout_ok && i < n; i++)
		covered += k->size[i];
	k->dense = covered == k->argbytes;
	k->graphable = ag_opt_kernel_graphable(name) && (ag_opt.num[AG_OPT_NCCL] || !is_nccl(name));
	return k;
}

struct ag_kern *ag_kern_get(CUfunction f)
{
	struct ag_kern **t = __atomic_load_n(&current, __ATOMIC_ACQUIRE)->slot;
	uintptr_t h = (uintptr_t)f;
	struct ag_kern *mine = NULL;
	for (unsigned i = slot_of(h), probes = 0; probes < PROBES; i = (i + 1) & (CAPACITY - 1), probes++) {
		struct ag_kern *k = __atomic_load_n(&t[i], __ATOMIC_ACQUIRE);
		if (k && k->handle == h) {
			if (mine) {
				free(mine->offset);
				free(mine->size);
				free(mine);
			}
			return k;
		}
		if (k)
			continue;
		if (!mine && !(mine = learn(f)))
			return NULL;
		if (__atomic_compare_exchange_n(&t[i], &k, mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			__atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
			return mine;
		}
		if (k->handle == h) {
			free(mine->offset);
			free(mine->size);
			free(mine);
			return k;
		}
	}
	return NULL;
}

size_t ag_kern_distinct(void)
{
	return __atomic_load_n(&count, __ATOMIC_RELAXED);
}

static int more_launches(const void *a, const void *b)
{
	const struct ag_kern *p = *(const struct ag_kern *const *)a, *q = *(const struct ag_kern *const *)b;
	if (p->launches != q->launches)
		return p->launches < q->launches ? 1 : -1;
	/* Ties by name, so that the report is the same on every run, wherever handles are. */
	return strcmp(p->name, q->name);
}

static void consider_top(const struct ag_kern **out, size_t max, size_t *n, const struct ag_kern *k)
{
	if (*n < max) {
		out[(*n)++] = k;
		qsort(out, *n, sizeof *out, more_launches);
	} else if (k->launches > out[max - 1]->launches) {
		out[max - 1] = k;
		qsort(out, *n, sizeof *out, more_launches);
	}
}

size_t ag_kern_top(const struct ag_kern **out, size_t max)
{
	size_t n = 0;
	for (struct generation *g = __atomic_load_n(&current, __ATOMIC_ACQUIRE); g; g = g->older)
		for (unsigned i = 0; i < CAPACITY; i++) {
			struct ag_kern *k = __atomic_load_n(&g->slot[i], __ATOMIC_ACQUIRE);
			if (k)
				consider_top(out, max, &n, k);
		}
	pthread_mutex_lock(&retired_lock);
	for (const struct ag_kern *k = retired; k; k = k->hh.next)
		consider_top(out, max, &n, k);
	pthread_mutex_unlock(&retired_lock);
	return n;
}

/*
 * Launch counts outlive their handles: a freed generation's launched entries
 * are merged by name into the retired ones, which the exit reports read too
 * (PyTorch unloads its libraries before exit, and each unload forgets every
 * handle). Bounded by the number of distinct kernel names, so unload loops
 * still cost no memory.
 */

static void retire(struct ag_kern *k)
{
	free(k->offset);
	free(k->size);
	k->offset = k->size = NULL;
	if (!k->launches) {
		free(k);
		return;
	}
	pthread_mutex_lock(&retired_lock);
	struct ag_kern *r;
	HASH_FIND(hh, retired, k->name, strlen(k->name), r);
	if (r) {
		r->launches += k->launches;
		r->eager_unnodeable += k->eager_unnodeable;
		r->eager_unlearned += k->eager_unlearned;
		r->flushed += k->flushed;
		r->replayed += k->replayed;
		r->diverged += k->diverged;
		r->layout_ok &= k->layout_ok;
		r->graphable &= k->graphable;
		free(k);
	} else {
		HASH_ADD_KEYPTR(hh, retired, k->name, strlen(k->name), k);
	}
	pthread_mutex_unlock(&retired_lock);
}

static void free_generation(struct generation *g)
{
	for (unsigned i = 0; i < CAPACITY; i++)
		if (g->slot[i])
			retire(g->slot[i]);
	if (g != &first)
		munmap(g, sizeof *g);
}

/*
 * A generation is 512 KiB of slots of which a program touches a few pages: mapped
 * directly, untouched pages cost nothing. From calloc, once glibc raised its mmap
 * threshold after the first free, each would be zeroed on the heap, all 512 KiB
 * resident (module load/unload loops grew by 1 MiB: holes.bats, pattern 11).
 */
void ag_kern_forget_all(void)
{
	struct generation *g = mmap(NULL, sizeof *g, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g == MAP_FAILED)
		return;
	struct generation *prev = __atomic_load_n(&current, __ATOMIC_ACQUIRE);
	g->older = prev;
	__atomic_store_n(&current, g, __ATOMIC_RELEASE);
	struct generation *oldest = prev->older;
	prev->older = NULL;
	if (oldest)
		free_generation(oldest);
}
