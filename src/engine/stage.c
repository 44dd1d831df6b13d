/*
 * Async copies from and to pageable memory, staged at the call. An asynchronous copy
 * from pageable memory reads the program's buffer before the call returns
 * (the driver stages it: CUDA's "API synchronization behavior"), so the
 * program may overwrite the buffer at once, and such a copy could be neither
 * held nor a graph node. Copied here, at the call, into page-locked memory
 * the library owns, it keeps that promise and becomes an ordinary copy from
 * page-locked memory: recorded, held and replayed like any other. A decode
 * loop that uploads a token or a position every step stays graphable.
 *
 * Each stream that stages gets one arena (AG_STAGE_BYTES of page-locked
 * memory, allocated in the stream's context) and takes slots from its start.
 * A slot is reused only after the program's own synchronization showed the
 * stream's earlier work complete: a cuStreamSynchronize, or a cuStreamQuery
 * that answered CUDA_SUCCESS, with nothing staged on the stream since the
 * call began (held work is submitted before such calls, so no held copy can
 * still name a slot), or a cuCtxSynchronize of its context. The library never
 * waits for a slot. A loop that synchronizes every step therefore stages into
 * the same slots each step, and its graphs replay without updates.
 *
 * An asynchronous copy to pageable memory returns only once the copy is done,
 * and the program reads its buffer at once (cuBLAS's dot and norm results in
 * host pointer mode: a CG solver makes two a step). Such a copy goes to a slot
 * instead, as an ordinary copy to page-locked memory that can end a graph; the
 * call then ends the stream's segment, submits what it held, waits for the
 * stream (the driver's copy waits for the stream's earlier work too) and
 * copies the slot out. While a slot waits to be read, no synchronization on
 * another thread frees the arena's slots.
 *
 * A copy is left as the program made it (so it is neither held nor a node, as
 * before) when it is larger than AG_STAGE_MAX, when its host side is memory the
 * driver knows (device, managed or registered: its own rules apply), when
 * the arena has no room left until the next synchronization, or when no arena
 * can be had. At most AG_STAGE_ARENAS arenas exist, and they are never freed,
 * since freeing page-locked memory may wait for the device: a destroyed
 * stream's arena is reused by another stream of its context once a context
 * synchronize showed its copies done, and a destroyed or reset context takes
 * its arenas with it.
 */
#include <pthread.h>
#include <string.h>

#include "driver/real.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "stats.h"

#define AG_STAGE_BYTES (256u << 10) /* one stream's arena */
#define AG_STAGE_MAX (64u << 10)    /* larger copies (weights, batches) are not staged */
#define AG_STAGE_ARENAS 8
#define AG_STAGE_ALIGN(n) (((n) + 63) & ~(size_t)63)

enum arena_state { ARENA_FREE, ARENA_USED, ARENA_RETIRED };

struct ag_stage {
	CUcontext ctx;
	uint8_t *base;        /* NULL until allocated, and again once its context is gone */
	unsigned state;       /* enum arena_state, under the lock */
	unsigned gen;         /* bumped whenever the arena changes hands */
	/* under the owning stream's lock */
	size_t head;          /* bytes handed out since the stream was last seen idle */
	uint64_t staged;      /* copies staged, ever */
	unsigned reading;     /* device-to-host slots not yet copied out: head stays */
};

/*
 * What the calling thread's synchronizing call found when it began: two threads may
 * wait for one stream at once, and each call's completion vouches only for the copies
 * staged before it began.
 */
static __thread struct {
	const struct ag_stage *a;
	unsigned gen;
	uint64_t staged;
} waiting __attribute__((tls_model("initial-exec")));

static struct ag_stage arenas[AG_STAGE_ARENAS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int retired; /* arenas waiting for a context synchronize: the check is one load */
static int began;   /* some stream asked for an arena: only then do synchronizations look */

/* The analyzer has no program memory to read: it replaces this with a no-op. */
void *(*ag_stage_read)(void *, const void *, size_t) = memcpy;

/* The stream's arena if it still holds it, else NULL. */
static struct ag_stage *arena_of(const struct ag_stream *st)
{
	struct ag_stage *a = st->stage;
	if (a && __atomic_load_n(&a->gen, __ATOMIC_ACQUIRE) == st->stage_gen &&
	    __atomic_load_n(&a->state, __ATOMIC_ACQUIRE) == ARENA_USED)
		return a;
	return NULL;
}

/*
 * A free arena of the stream's context (or an unallocated one, allocated now)
 * for the stream. Page-locked allocation is rare: once per arena.
 */
static struct ag_stage *take_arena(struct ag_stream *st)
{
	struct ag_stage *a = NULL;
	__atomic_store_n(&began, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < AG_STAGE_ARENAS && !a; i++)
		if (arenas[i].state == ARENA_FREE && arenas[i].base && arenas[i].ctx == st->ctx)
			a = &arenas[i];
	for (unsigned i = 0; i < AG_STAGE_ARENAS && !a; i++) {
		if (arenas[i].state != ARENA_FREE || arenas[i].base)
			continue;
		void *p = NULL;
		CUcontext saved = ag_stream_enter_ctx(st);
		CUresult rc = AG_REAL(cuMemHostAlloc)(&p, AG_STAGE_BYTES, CU_MEMHOSTALLOC_PORTABLE);
		ag_stream_leave_ctx(st, saved);
		if (rc != CUDA_SUCCESS)
			break;
		arenas[i].base = p;
		arenas[i].ctx = st->ctx;
		ag_facts_pinned_add(p, AG_STAGE_BYTES);
		a = &arenas[i];
	}
	if (a) {
		a->head = 0;
		a->staged = 0;
		a->reading = 0;
		__atomic_store_n(&a->gen, a->gen + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&a->state, ARENA_USED, __ATOMIC_RELEASE);
		st->stage = a;
		st->stage_gen = a->gen;
	}
	pthread_mutex_unlock(&lock);
	return a;
}

/* Memory the driver does not know: pageable host memory, where the driver would stage. */
static int pageable(const void *p, size_t n)
{
	unsigned type = 0;
	if ((uintptr_t)p < 4096 || ag_engine_pinned(p, n))
		return 0;
	return AG_REAL(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p) ==
	       CUDA_ERROR_INVALID_VALUE;
}

int ag_stage_copy(struct ag_stream *st, const struct ag_call *c, struct ag_call *out)
{
	size_t n = c->u.copy.bytes;
	int in = c->api == AG_COPY_HTOD;
	const void *host = (const void *)(in ? c->u.copy.src : c->u.copy.dst);
	if ((!in && c->api != AG_COPY_DTOH) || !n || n > AG_STAGE_MAX || st->stage_off || !pageable(host, n))
		return 0;
	struct ag_stage *a = arena_of(st);
	if (!a && (st->stage_tried || !(a = take_arena(st)))) {
		st->stage_tried = 1; /* no arena now: not asked again until a synchronization */
		return 0;
	}
	if (a->head + AG_STAGE_ALIGN(n) > AG_STAGE_BYTES) {
		/* The stream does not synchronize often enough for its copies to be staged: from
		 * now on they go as the program makes them, so that the sequences learned without
		 * them are not disturbed by the occasional staged one (decided by the calls alone,
		 * never by asking the device how far it got). */
		st->stage_off = 1;
		ag_stats_add(AG_S_STAGE_FULL, 1);
		return 0;
	}
	uint8_t *slot = a->base + a->head;
	a->head += AG_STAGE_ALIGN(n);
	a->staged++;
	*out = *c;
	if (in) {
		ag_stage_read(slot, host, n);
		out->u.copy.src = (CUdeviceptr)slot;
	} else {
		a->reading++;
		out->u.copy.dst = (CUdeviceptr)slot;
	}
	ag_stats_add(AG_S_STAGED, 1);
	return 1;
}

/*
 * The staged device-to-host copy c (the program's) was submitted as staged with
 * status rc, and the stream's segment ended (engine.c): its data reaches the
 * program's buffer once the stream's work is done, as the driver's own copy
 * to pageable memory would return. The stream is not locked.
 */
CUresult ag_stage_copy_out(struct ag_stream *st, const struct ag_call *c, const struct ag_call *staged,
			   CUresult rc)
{
	if (rc == CUDA_SUCCESS) {
		ag_stage_sync_begin(st);
		rc = ag_engine_status(AG_REAL(cuStreamSynchronize)(c->stream));
		if (rc == CUDA_SUCCESS)
			ag_stage_read((void *)c->u.copy.dst, (const void *)staged->u.copy.dst, c->u.copy.bytes);
	}
	ag_stream_lock(st);
	struct ag_stage *a = arena_of(st);
	const uint8_t *slot = (const uint8_t *)staged->u.copy.dst;
	if (a && slot >= a->base && slot < a->base + AG_STAGE_BYTES && a->reading)
		a->reading--; /* not if the arena changed hands meanwhile (its count started over) */
	ag_stream_unlock(st);
	if (rc == CUDA_SUCCESS)
		ag_stage_sync_done(st);
	return rc;
}

/* A stream that never staged costs a synchronizing call two loads, no lock. */
void ag_stage_sync_begin(struct ag_stream *st)
{
	waiting.a = NULL;
	if (!__atomic_load_n(&st->stage, __ATOMIC_RELAXED))
		return;
	ag_stream_lock(st);
	struct ag_stage *a = arena_of(st);
	waiting.a = a;
	waiting.gen = st->stage_gen;
	waiting.staged = a ? a->staged : 0;
	ag_stream_unlock(st);
}

void ag_stage_sync_done(struct ag_stream *st)
{
	if (!waiting.a && !__atomic_load_n(&st->stage_tried, __ATOMIC_RELAXED))
		return;
	ag_stream_lock(st);
	struct ag_stage *a = arena_of(st);
	if (a && a == waiting.a && st->stage_gen == waiting.gen && a->staged == waiting.staged && !a->reading)
		a->head = 0;
	waiting.a = NULL;
	st->stage_tried = 0;
	ag_stream_unlock(st);
}

/* The stream goes: its arena waits for a context synchronize before another stream takes it. */
void ag_stage_release(struct ag_stream *st)
{
	pthread_mutex_lock(&lock);
	struct ag_stage *a = arena_of(st);
	if (a) {
		__atomic_store_n(&a->state, ARENA_RETIRED, __ATOMIC_RELEASE);
		__atomic_add_fetch(&retired, 1, __ATOMIC_RELEASE);
	}
	st->stage = NULL;
	pthread_mutex_unlock(&lock);
}

/* Every stream of the context finished its work: retired arenas can be handed out again. */
int ag_stage_began(void)
{
	return __atomic_load_n(&began, __ATOMIC_ACQUIRE);
}

int ag_stage_retired(void)
{
	return __atomic_load_n(&retired, __ATOMIC_ACQUIRE);
}

void ag_stage_ctx_idle(CUcontext ctx)
{
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < AG_STAGE_ARENAS; i++)
		if (arenas[i].state == ARENA_RETIRED && arenas[i].ctx == ctx) {
			arenas[i].state = ARENA_FREE;
			__atomic_sub_fetch(&retired, 1, __ATOMIC_RELEASE);
		}
	pthread_mutex_unlock(&lock);
}

/*
 * A context is destroyed or reset (NULL: a primary context, which one not
 * known): the driver freed its page-locked memory, so its arenas are forgotten
 * (and, for NULL, every arena: one of another context is then lost, not
 * freed), their ranges no longer page-locked for the engine, and the streams
 * that held them see the generation change.
 */
void ag_stage_ctx_gone(CUcontext ctx)
{
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < AG_STAGE_ARENAS; i++) {
		struct ag_stage *a = &arenas[i];
		if (!a->base || (ctx && a->ctx != ctx))
			continue;
		if (a->state == ARENA_RETIRED)
			__atomic_sub_fetch(&retired, 1, __ATOMIC_RELEASE);
		ag_facts_pinned_remove(a->base);
		a->base = NULL;
		a->ctx = NULL;
		__atomic_store_n(&a->gen, a->gen + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&a->state, ARENA_FREE, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lock);
}

/* A forked child has no driver: its copies are never staged, and the parent's arenas are not its own. */
void ag_stage_after_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	lock = fresh;
	memset(arenas, 0, sizeof arenas);
	retired = began = 0;
}
