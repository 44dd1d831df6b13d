/*
 * The AUTOGRAPH_TRACE writer: every call into the engine's front door,
 * appended to one file in the format trace.h defines. Records are built on the
 * stack and copied into a buffer under a mutex (tracing is for diagnosis, not
 * the hot path: when it is off, the only cost is the test of ag_trace_active);
 * trace_file.c owns the file and its buffer. Kernels and streams are
 * defined the first time a record names them, with what the engine would ask
 * the driver about them, so the analyzer needs no driver.
 */
#include "engine/trace.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "driver/real.h"
#include "engine/engine.h"
#include "engine/internal.h"

#define REC 512 /* a record's fixed part; argument and attribute bytes are appended apart */

int ag_trace_active;
__thread int ag_trace_caller __attribute__((tls_model("initial-exec")));

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t last_us;
static unsigned threads;
static uint8_t *fn_named; /* one flag per driver function id */

static __thread unsigned thread_index __attribute__((tls_model("initial-exec")));
static __thread CUcontext thread_ctx __attribute__((tls_model("initial-exec")));

struct known {
	uintptr_t key;
	uint64_t index;
	UT_hash_handle hh;
};
static struct known *streams, *kernels;
static uint64_t next_stream = AG_TR_S_FIRST, next_kernel;

static size_t begin(uint8_t *r, enum ag_trace_tag tag);

static void append(const void *p, size_t n)
{
	ag_trace_file_append(p, n);
}

void ag_trace_open(void)
{
	if (!ag_opt.num[AG_OPT_TRACE] || !(fn_named = calloc(AG_FN_COUNT, 1)))
		return;
	if (!ag_trace_file_open()) {
		free(fn_named);
		fn_named = NULL;
		return;
	}
	append(AG_TRACE_MAGIC, strlen(AG_TRACE_MAGIC));
	__atomic_store_n(&ag_trace_active, 1, __ATOMIC_RELEASE);
	ag_engine_callers_wanted = 1;
}

void ag_trace_close(void)
{
	if (!__atomic_exchange_n(&ag_trace_active, 0, __ATOMIC_ACQ_REL))
		return;
	pthread_mutex_lock(&lock);
	uint8_t r[32];
	append(r, begin(r, AG_TR_END));
	ag_trace_file_close();
	pthread_mutex_unlock(&lock);
}

void ag_trace_after_fork_child(void) /* it must not write into the parent's file */
{
	ag_trace_active = 0;
	ag_trace_file_drop();
}

static uint64_t now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* Starts a record in r: tag, time, thread. Caller holds the lock. */
static size_t begin(uint8_t *r, enum ag_trace_tag tag)
{
	if (!thread_index)
		thread_index = ++threads;
	uint64_t t = now_us();
	size_t n = 0;
	r[n++] = (uint8_t)tag;
	n += ag_trace_put(r + n, last_us && t > last_us ? t - last_us : 0);
	n += ag_trace_put(r + n, thread_index);
	last_us = t;
	return n;
}

/* The thread's current context, defined when it changed (legacy streams are the context's). */
static void note_ctx(void)
{
	CUcontext ctx = NULL;
	AG_REAL(cuCtxGetCurrent)(&ctx);
	if (ctx == thread_ctx && thread_index)
		return;
	uint8_t r[32];
	size_t n = begin(r, AG_TR_CTX);
	n += ag_trace_put(r + n, (uintptr_t)ctx);
	append(r, n);
	thread_ctx = ctx;
}

/* The index a stream or kernel has in the file; *fresh when it is new and must be defined. */
static uint64_t remember(struct known **table, uintptr_t key, uint64_t *next, int *fresh)
{
	struct known *k;
	HASH_FIND(hh, *table, &key, sizeof key, k);
	if ((*fresh = !k) && (k = calloc(1, sizeof *k))) {
		k->key = key;
		k->index = (*next)++;
		HASH_ADD(hh, *table, key, sizeof k->key, k);
	}
	return k ? k->index : (*next)++;
}

static uint64_t stream_index(CUstream s)
{
	if (s == NULL)
		return AG_TR_S_NULL;
	if (s == CU_STREAM_LEGACY)
		return AG_TR_S_LEGACY;
	if (s == CU_STREAM_PER_THREAD)
		return AG_TR_S_PER_THREAD;
	uintptr_t key = (uintptr_t)s;
	int fresh;
	uint64_t index = remember(&streams, key, &next_stream, &fresh);
	if (!fresh)
		return index;
	CUcontext ctx = NULL;
	unsigned flags = 0;
	int ok = AG_REAL(cuStreamGetCtx)(s, &ctx) == CUDA_SUCCESS &&
		 AG_REAL(cuStreamGetFlags)(s, &flags) == CUDA_SUCCESS;
	uint8_t r[64];
	size_t n = begin(r, AG_TR_STREAM);
	n += ag_trace_put(r + n, index);
	n += ag_trace_put(r + n, key);
	n += ag_trace_put(r + n, (uintptr_t)ctx);
	n += ag_trace_put(r + n, flags);
	n += ag_trace_put(r + n, (uint64_t)ok);
	append(r, n);
	return index;
}

static uint64_t kernel_index(const struct ag_kern *kern)
{
	int fresh;
	uint64_t index = remember(&kernels, (uintptr_t)kern, &next_kernel, &fresh);
	if (!fresh)
		return index;
	uint8_t r[64];
	size_t n = begin(r, AG_TR_KERNEL);
	n += ag_trace_put(r + n, index);
	n += ag_trace_put(r + n, kern->handle);
	n += ag_trace_put(r + n, kern->is_kernel);
	n += ag_trace_put(r + n, kern->layout_ok);
	n += ag_trace_put(r + n, kern->layout_ok ? kern->nparams : 0);
	append(r, n);
	for (unsigned i = 0; kern->layout_ok && i < kern->nparams; i++) {
		n = ag_trace_put(r, kern->offset[i]);
		n += ag_trace_put(r + n, kern->size[i]);
		append(r, n);
	}
	size_t len = strlen(kern->name);
	n = ag_trace_put(r, len);
	append(r, n);
	append(kern->name, len);
	return index;
}

/* Kernel handles went away: the table's entries are freed and their addresses reused. */
static void forget_kernels(void)
{
	struct known *k, *tmp;
	HASH_ITER(hh, kernels, k, tmp) {
		HASH_DEL(kernels, k);
		free(k);
	}
}

static void name_fn(int fn)
{
	if (fn < 0 || fn >= AG_FN_COUNT || fn_named[fn])
		return;
	fn_named[fn] = 1;
	uint8_t r[32];
	size_t n = begin(r, AG_TR_FN);
	n += ag_trace_put(r + n, (uint64_t)fn);
	size_t len = strlen(ag_fn_names[fn]);
	n += ag_trace_put(r + n, len);
	append(r, n);
	append(ag_fn_names[fn], len);
}

/* The launch's arguments as the engine packs them: at the layout's offsets, padding zeroed. */
static void append_args(const struct ag_call *c, const struct ag_kern *k)
{
	static uint8_t packed[1u << 16];
	size_t len = k && k->layout_ok ? k->argbytes : 0;
	void **params = c->u.kern.params, **extra = c->u.kern.extra;
	if (len && params) {
		memset(packed, 0, len);
		for (unsigned i = 0; i < k->nparams; i++) {
			if (!params[i]) {
				len = 0;
				break;
			}
			memcpy(packed + k->offset[i], params[i], k->size[i]);
		}
	} else if (len && extra) {
		const void *p = NULL;
		size_t size = 0;
		for (unsigned i = 0; extra[i] != CU_LAUNCH_PARAM_END && i < 16; i += 2) {
			if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
				p = extra[i + 1];
			else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
				size = *(const size_t *)extra[i + 1];
		}
		len = p && size >= len ? len : 0;
		if (len)
			memcpy(packed, p, len);
	} else {
		len = 0;
	}
	uint8_t r[16];
	append(r, ag_trace_put(r, len));
	append(packed, len);
}

static unsigned memory_type(CUdeviceptr p)
{
	unsigned type = 0;
	return AG_REAL(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) == CUDA_SUCCESS
		       ? type : 0;
}

void ag_trace_op(const struct ag_call *c, CUresult rc)
{
	const struct ag_kern *k = c->kind == AG_OP_KERNEL ? ag_kern_get(c->u.kern.f) : NULL;
	pthread_mutex_lock(&lock);
	if (!ag_trace_file_ok())
		goto out;
	note_ctx();
	uint64_t si = stream_index(c->stream);
	uint64_t ki = k ? kernel_index(k) : 0;
	uint8_t r[REC];
	size_t n = begin(r, AG_TR_OP);
	n += ag_trace_put(r + n, c->kind);
	n += ag_trace_put(r + n, c->api);
	n += ag_trace_put(r + n, c->per_thread);
	n += ag_trace_put(r + n, si);
	n += ag_trace_put(r + n, (uint64_t)rc);
	switch (c->kind) {
	case AG_OP_KERNEL:
		n += ag_trace_put(r + n, k ? ki + 1 : 0);
		for (int i = 0; i < 3; i++)
			n += ag_trace_put(r + n, c->u.kern.grid[i]);
		for (int i = 0; i < 3; i++)
			n += ag_trace_put(r + n, c->u.kern.block[i]);
		n += ag_trace_put(r + n, c->u.kern.shmem);
		unsigned na = c->u.kern.attrs ? c->u.kern.nattrs : 0;
		n += ag_trace_put(r + n, na);
		append(r, n);
		n = 0;
		append(c->u.kern.attrs, na * sizeof *c->u.kern.attrs);
		append_args(c, k);
		break;
	case AG_OP_MEMSET:
		n += ag_trace_put(r + n, c->u.set.dst);
		n += ag_trace_put(r + n, c->u.set.pitch);
		n += ag_trace_put(r + n, c->u.set.width);
		n += ag_trace_put(r + n, c->u.set.height);
		n += ag_trace_put(r + n, c->u.set.value);
		n += ag_trace_put(r + n, c->u.set.elem);
		n += ag_trace_put(r + n, c->u.set.two_d);
		break;
	case AG_OP_COPY:
		n += ag_trace_put(r + n, c->u.copy.dst);
		n += ag_trace_put(r + n, c->u.copy.src);
		n += ag_trace_put(r + n, c->u.copy.bytes);
		if (c->api == AG_COPY_UNIFIED) {
			n += ag_trace_put(r + n, memory_type(c->u.copy.src));
			n += ag_trace_put(r + n, memory_type(c->u.copy.dst));
		}
		break;
	case AG_OP_EVENT:
		n += ag_trace_put(r + n, (uintptr_t)c->u.event.ev);
		n += ag_trace_put(r + n, c->u.event.flags);
		n += ag_trace_put(r + n, c->u.event.with_flags);
		break;
	case AG_OP_HOSTFN:
		n += ag_trace_put(r + n, (uintptr_t)c->u.host.fn);
		n += ag_trace_put(r + n, (uintptr_t)c->u.host.data);
		break;
	}
	append(r, n);
out:
	pthread_mutex_unlock(&lock);
}

/* An ordering call; s and per_thread only for the tags that name a stream. */
void ag_trace_order(int tag, CUstream s, int per_thread)
{
	int fn = ag_trace_caller - 1;
	pthread_mutex_lock(&lock);
	if (!ag_trace_file_ok())
		goto out;
	note_ctx();
	name_fn(fn);
	int named = tag == AG_TR_STREAM_OP || tag == AG_TR_SYNC_STREAM || tag == AG_TR_GRAPH_LAUNCH ||
		    tag == AG_TR_STREAM_DESTROYED;
	uint64_t si = named ? stream_index(s) : 0;
	uint8_t r[64];
	size_t n = begin(r, tag);
	n += ag_trace_put(r + n, (uint64_t)(fn + 1));
	if (named) {
		n += ag_trace_put(r + n, si);
		if (tag != AG_TR_STREAM_DESTROYED)
			n += ag_trace_put(r + n, (uint64_t)per_thread);
	}
	append(r, n);
	if (tag == AG_TR_STREAM_DESTROYED) {
		uintptr_t key = (uintptr_t)s;
		struct known *k;
		HASH_FIND(hh, streams, &key, sizeof key, k);
		if (k) {
			HASH_DEL(streams, k);
			free(k);
		}
	}
	if (tag == AG_TR_FORGET_ALL)
		forget_kernels();
out:
	pthread_mutex_unlock(&lock);
}

/* A record of one or two values (statuses, ranges, handles). */
void ag_trace_values(int tag, uint64_t a, uint64_t b, int count)
{
	pthread_mutex_lock(&lock);
	if (ag_trace_file_ok()) {
		uint8_t r[64];
		size_t n = begin(r, tag);
		n += ag_trace_put(r + n, a);
		if (count > 1)
			n += ag_trace_put(r + n, b);
		append(r, n);
		if (tag == AG_TR_CTX_DESTROYED)
			forget_kernels();
	}
	pthread_mutex_unlock(&lock);
}
