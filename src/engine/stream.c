/*
 * The registry of stream states. A state is keyed by the stream handle, or
 * for a context's legacy default stream by that context. Each thread keeps a
 * few recent lookups in a tiny cache checked against a generation number, so
 * the launch path normally takes no lock at all; the registry mutex is taken
 * on a miss and by whole-registry walks. Lock order: registry, then a stream.
 * The per-thread default stream has no state: another thread could not name
 * it to submit held work, so the engine never holds work on it. A forked child
 * starts with an empty registry: the states, their locks and their held work
 * belong to the parent's threads, which do not exist there, and a lock one of
 * them held at the fork would never be released.
 */
#include <sched.h>
#include <stdlib.h>

#include "engine/internal.h"
#include "driver/real.h"

static struct ag_stream *by_key;
static struct ag_stream *all;
static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;
static unsigned generation;
__thread struct ag_stream *ag_stream_locked __attribute__((tls_model("initial-exec")));

#define CACHE 4

static __thread struct {
	uintptr_t key;
	struct ag_stream *st;
	unsigned gen;
} cache[CACHE] __attribute__((tls_model("initial-exec")));
static __thread unsigned cache_next __attribute__((tls_model("initial-exec")));

static void forked_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	registry = fresh;
	by_key = NULL;
	all = NULL;
	__atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
}

/* Called with the registry locked, so a fork cannot take place between the two lines. */
static struct ag_stream *new_stream(uintptr_t key, CUstream s, CUcontext ctx, int legacy)
{
	static int atfork;
	if (!atfork)
		atfork = pthread_atfork(NULL, NULL, forked_child) == 0;
	unsigned flags = 0;
	if (!legacy && (AG_REAL(cuStreamGetCtx)(s, &ctx) != CUDA_SUCCESS ||
			AG_REAL(cuStreamGetFlags)(s, &flags) != CUDA_SUCCESS))
		return NULL;
	struct ag_stream *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->key = key;
	st->handle = legacy ? CU_STREAM_LEGACY : s;
	st->ctx = ctx;
	st->legacy = (uint8_t)legacy;
	st->blocking = legacy || !(flags & CU_STREAM_NON_BLOCKING);
	return st;
}

struct ag_stream *ag_stream_of(CUstream s, int per_thread, int create)
{
	if (s == CU_STREAM_PER_THREAD || (s == NULL && per_thread))
		return NULL;
	uintptr_t key;
	CUcontext ctx = NULL;
	int legacy = s == NULL || s == CU_STREAM_LEGACY;
	if (legacy) {
		if (AG_REAL(cuCtxGetCurrent)(&ctx) != CUDA_SUCCESS || !ctx)
			return NULL;
		key = (uintptr_t)ctx | 1;
	} else {
		key = (uintptr_t)s;
	}
	unsigned gen = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < CACHE; i++)
		if (cache[i].key == key && cache[i].gen == gen && cache[i].st)
			return cache[i].st;
	struct ag_stream *st;
	pthread_mutex_lock(&registry);
	HASH_FIND(hh, by_key, &key, sizeof key, st);
	if (!st && create && (st = new_stream(key, s, ctx, legacy))) {
		HASH_ADD(hh, by_key, key, sizeof st->key, st);
		st->next_all = all;
		all = st;
	}
	pthread_mutex_unlock(&registry);
	if (st) {
		unsigned i = cache_next++ % CACHE;
		cache[i].key = key;
		cache[i].st = st;
		cache[i].gen = gen;
	}
	return st;
}

void ag_stream_for_each(void (*fn)(struct ag_stream *, void *), void *arg)
{
	pthread_mutex_lock(&registry);
	for (struct ag_stream *st = all; st; st = st->next_all)
		fn(st, arg);
	pthread_mutex_unlock(&registry);
}

struct ag_stream *ag_stream_all(void)
{
	return all;
}

int ag_stream_try_registry(void)
{
	return pthread_mutex_trylock(&registry) == 0;
}

void ag_stream_unlock_registry(void)
{
	pthread_mutex_unlock(&registry);
}

/* The handle may be reused for a stream with other flags: forget this state. */
void ag_stream_remove(struct ag_stream *st)
{
	pthread_mutex_lock(&registry);
	HASH_DEL(by_key, st);
	for (struct ag_stream **p = &all; *p; p = &(*p)->next_all) {
		if (*p == st) {
			*p = st->next_all;
			break;
		}
	}
	__atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&registry);
}

CUcontext ag_stream_enter_ctx(const struct ag_stream *st)
{
	CUcontext cur = NULL;
	AG_REAL(cuCtxGetCurrent)(&cur);
	if (cur != st->ctx)
		AG_REAL(cuCtxSetCurrent)(st->ctx);
	return cur;
}

void ag_stream_leave_ctx(const struct ag_stream *st, CUcontext saved)
{
	if (saved != st->ctx)
		AG_REAL(cuCtxSetCurrent)(saved);
}

void ag_stream_unlink_ctx(CUcontext ctx, struct ag_stream **out)
{
	*out = NULL;
	pthread_mutex_lock(&registry);
	for (struct ag_stream **p = &all; *p;) {
		struct ag_stream *st = *p;
		if (st->ctx != ctx) {
			p = &st->next_all;
			continue;
		}
		*p = st->next_all;
		HASH_DEL(by_key, st);
		st->next_all = *out;
		*out = st;
	}
	__atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&registry);
}

void ag_stream_lock_wait(struct ag_stream *st)
{
	for (unsigned spins = 0;; spins++) {
		if (!__atomic_load_n(&st->lock, __ATOMIC_RELAXED) && ag_stream_trylock(st))
			return;
		if (spins < 128)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
}
