/*
 * The engine: decides, per stream operation, to submit it now, hold it as
 * the next expected operation of a known sequence, or complete a sequence by
 * launching its graph; and submits held work before anything that could
 * observe or reorder it.
 *
 * Invariants that keep programs correct:
 *  - An operation is held only if it is identical in shape (kernel, launch
 *    configuration, attributes, copy and set parameters) to one that already
 *    succeeded eagerly, so no submission-time error can be hidden; only
 *    kernel argument values may differ, and they are compared byte for byte.
 *  - Held work is submitted, in its original order, before: a barrier-class
 *    call, a synchronizing call or query, an unrecorded operation on the same
 *    stream, an operation on a stream it is implicitly ordered with (legacy
 *    default stream vs blocking streams), an event wait, the program's own
 *    stream capture, module or context teardown, fork, exit, and
 *    AUTOGRAPH_FLUSH_US without a new operation.
 *  - Nothing is ever held on a per-thread default stream (no other thread
 *    could name it to submit the work), nor while the program captures.
 *  - A failure met while submitting held work is reported by the next
 *    synchronizing call on that stream (or on all work), where eager
 *    execution of an asynchronous failure would have shown up too.
 */
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "config.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "hook/real.h"
#include "log.h"
#include "nvtx.h"
#include "stats.h"

uint64_t ag_engine_epoch;
int ag_engine_holding;
uint64_t ag_engine_tick;
__thread struct ag_stream *ag_engine_locked __attribute__((tls_model("initial-exec")));

static int holding_legacy, holding_blocking;
static int capture_depth;
static int engine_off;
static int pending_errors;

#define THRASH_MIN_STARTS 8
#define NOT_FASTER_SAMPLES 8

/* Everything that defines an operation except kernel argument values, laid out for memcmp. */
struct shape_key {
	uint64_t word[10];
	uint8_t kind, api, per_thread, nattrs;
	uint32_t zero;
};

static void shape_of(const struct ag_call *c, struct shape_key *key)
{
	memset(key, 0, sizeof *key);
	key->kind = c->kind;
	key->api = c->api;
	key->per_thread = c->per_thread;
	uint64_t *w = key->word;
	switch (c->kind) {
	case AG_OP_KERNEL:
		w[0] = (uintptr_t)c->u.kern.f;
		for (int i = 0; i < 3; i++) {
			w[1 + i] = c->u.kern.grid[i];
			w[4 + i] = c->u.kern.block[i];
		}
		w[7] = c->u.kern.shmem;
		key->nattrs = (uint8_t)c->u.kern.nattrs;
		break;
	case AG_OP_MEMSET:
		w[0] = c->u.set.dst, w[1] = c->u.set.pitch, w[2] = c->u.set.width;
		w[3] = c->u.set.height, w[4] = c->u.set.value, w[5] = c->u.set.elem;
		w[6] = c->u.set.two_d;
		break;
	case AG_OP_COPY:
		w[0] = c->u.copy.dst, w[1] = c->u.copy.src, w[2] = c->u.copy.bytes;
		break;
	case AG_OP_EVENT:
		w[0] = (uintptr_t)c->u.event.ev, w[1] = c->u.event.flags, w[2] = c->u.event.with_flags;
		break;
	default:
		w[0] = (uintptr_t)c->u.host.fn, w[1] = (uintptr_t)c->u.host.data;
	}
}

/* The key is a few words: one multiply per word and a final avalanche is as good as XXH3 here, and cheaper. */
static uint64_t shape_hash(const struct shape_key *key)
{
	const uint64_t *w = key->word;
	uint64_t h = (uint64_t)key->kind << 24 | (uint64_t)key->api << 16 |
		     (uint64_t)key->per_thread << 8 | key->nattrs;
	h += w[0] * 0x9e3779b97f4a7c15ull + w[1] * 0xc2b2ae3d27d4eb4full +
	     w[2] * 0x165667b19e3779f9ull + w[3] * 0xd6e8feb86659fd93ull +
	     w[4] * 0xff51afd7ed558ccdull + w[5] * 0xc4ceb9fe1a85ec53ull +
	     w[6] * 0x94d049bb133111ebull + w[7] * 0xbf58476d1ce4e5b9ull +
	     w[8] * 0x2545f4914f6cdd1dull + w[9] * 0x9fb21c651e98df25ull;
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	return h ^ (h >> 32);
}

static size_t attr_bytes(const struct ag_call *c)
{
	return c->kind == AG_OP_KERNEL ? c->u.kern.nattrs * sizeof(CUlaunchAttribute) : 0;
}

/*
 * A launch attribute by value: only the member its id selects, field by field. Callers
 * commonly fill one member of the 64-byte union on the stack and leave the rest (and the
 * padding after the id) unset; comparing those bytes would make every launch look new.
 * An id this build does not know keeps the whole union, so it still compares exactly.
 */
static void normalize_attr(CUlaunchAttribute *d, const CUlaunchAttribute *a)
{
	const CUlaunchAttributeValue *s = &a->value;
	CUlaunchAttributeValue *v = &d->value;
	memset(d, 0, sizeof *d);
	d->id = a->id;
	switch (a->id) {
	case CU_LAUNCH_ATTRIBUTE_IGNORE:
		break;
	case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
		v->accessPolicyWindow.base_ptr = s->accessPolicyWindow.base_ptr;
		v->accessPolicyWindow.num_bytes = s->accessPolicyWindow.num_bytes;
		v->accessPolicyWindow.hitRatio = s->accessPolicyWindow.hitRatio;
		v->accessPolicyWindow.hitProp = s->accessPolicyWindow.hitProp;
		v->accessPolicyWindow.missProp = s->accessPolicyWindow.missProp;
		break;
	case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
		v->cooperative = s->cooperative;
		break;
	case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
		v->syncPolicy = s->syncPolicy;
		break;
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
		v->clusterDim.x = s->clusterDim.x;
		v->clusterDim.y = s->clusterDim.y;
		v->clusterDim.z = s->clusterDim.z;
		break;
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		v->clusterSchedulingPolicyPreference = s->clusterSchedulingPolicyPreference;
		break;
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
		v->programmaticStreamSerializationAllowed = s->programmaticStreamSerializationAllowed;
		break;
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
		v->programmaticEvent.event = s->programmaticEvent.event;
		v->programmaticEvent.flags = s->programmaticEvent.flags;
		v->programmaticEvent.triggerAtBlockStart = s->programmaticEvent.triggerAtBlockStart;
		break;
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
		v->priority = s->priority;
		break;
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
		v->memSyncDomainMap.default_ = s->memSyncDomainMap.default_;
		v->memSyncDomainMap.remote = s->memSyncDomainMap.remote;
		break;
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
		v->memSyncDomain = s->memSyncDomain;
		break;
	default:
		*v = *s;
	}
}

static void normalize_attrs(CUlaunchAttribute *d, const struct ag_call *c)
{
	for (unsigned i = 0; i < c->u.kern.nattrs; i++)
		normalize_attr(&d[i], &c->u.kern.attrs[i]);
}

/*
 * Copies the argument values into the arena, laid out as the driver's packed
 * parameter buffer (padding zeroed so equal values compare equal), followed
 * by the launch attributes. Returns 0 if they cannot be recorded.
 */
static int pack(struct ag_stream *st, const struct ag_call *c, const struct ag_kern *k,
		struct ag_op *op)
{
	size_t n = k->argbytes, a = attr_bytes(c);
	uint8_t *buf = ag_arena_alloc(st, ((n + 7) & ~(size_t)7) + a, &op->arena_pos);
	if (!buf)
		return 0;
	if (c->u.kern.params) {
		if (!k->dense)
			memset(buf, 0, n);
		for (unsigned i = 0; i < k->nparams; i++) {
			uint8_t *d = buf + k->offset[i];
			const void *v = c->u.kern.params[i];
			switch (k->size[i]) {
			case 8: memcpy(d, v, 8); break;
			case 4: memcpy(d, v, 4); break;
			case 2: memcpy(d, v, 2); break;
			case 1: memcpy(d, v, 1); break;
			default: memcpy(d, v, k->size[i]);
			}
		}
	} else if (c->u.kern.extra) {
		const void *src = NULL;
		size_t len = (size_t)-1;
		for (void **e = c->u.kern.extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
			if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
				src = e[1];
			else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE)
				len = *(size_t *)e[1];
			else
				return 0;
		}
		if (!src || len != n)
			return 0;
		memcpy(buf, src, n);
	} else {
		return 0;
	}
	op->args = buf;
	op->argbytes = (uint32_t)n;
	if (a) {
		CUlaunchAttribute *attrs = (CUlaunchAttribute *)(buf + ((n + 7) & ~(size_t)7));
		normalize_attrs(attrs, c);
		op->call.u.kern.attrs = attrs;
	}
	return 1;
}

/* Where a unified-address copy goes: counted by direction, recordable unless pageable. */
enum side { SIDE_PAGEABLE, SIDE_HOST, SIDE_DEVICE };

static enum side side_of(CUdeviceptr p, size_t bytes)
{
	if (ag_engine_pinned((const void *)p, bytes))
		return SIDE_HOST;
	unsigned type = 0;
	if (AG_REAL(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) != CUDA_SUCCESS)
		return SIDE_PAGEABLE;
	return type == CU_MEMORYTYPE_HOST ? SIDE_HOST : SIDE_DEVICE;
}

static int unified_copy_recordable(const struct ag_call *c)
{
	enum side src = side_of(c->u.copy.src, c->u.copy.bytes);
	enum side dst = side_of(c->u.copy.dst, c->u.copy.bytes);
	int from_dev = src == SIDE_DEVICE, to_dev = dst == SIDE_DEVICE;
	ag_stats_add(from_dev ? (to_dev ? AG_S_COPY_DTOD_RT : AG_S_COPY_DTOH_RT)
			      : (to_dev ? AG_S_COPY_HTOD_RT : AG_S_COPY_HTOH_RT),
		     1);
	return src != SIDE_PAGEABLE && dst != SIDE_PAGEABLE;
}

static int recordable(const struct ag_call *c, const struct ag_kern *k, int unified_ok)
{
	unsigned flags;
	switch (c->kind) {
	case AG_OP_KERNEL:
		return k && k->layout_ok && k->graphable && c->u.kern.nattrs <= AG_MAX_ATTRS &&
		       (c->api != AG_LAUNCH_COOPERATIVE || k->nparams <= 256);
	case AG_OP_COPY:
		if (c->api == AG_COPY_HTOD)
			return ag_engine_pinned((const void *)c->u.copy.src, c->u.copy.bytes);
		if (c->api == AG_COPY_DTOH)
			return ag_engine_pinned((const void *)c->u.copy.dst, c->u.copy.bytes);
		return c->api == AG_COPY_DTOD || unified_ok;
	case AG_OP_EVENT:
		/* Timing events and external records keep their eager semantics. */
		return !c->u.event.flags && ag_engine_event_flags(c->u.event.ev, &flags) &&
		       (flags & CU_EVENT_DISABLE_TIMING);
	default:
		return 1;
	}
}

static void describe(struct ag_stream *st, const struct ag_call *c, struct ag_kern *k,
		     int unified_ok, struct ag_op *op)
{
	op->call = *c;
	op->k = k;
	op->args = NULL;
	op->argbytes = 0;
	op->failed = 0;
	struct shape_key key;
	shape_of(c, &key);
	op->shape = shape_hash(&key);
	op->nodeable = (uint8_t)recordable(c, k, unified_ok);
	if (c->kind == AG_OP_KERNEL) {
		op->call.u.kern.params = NULL;
		op->call.u.kern.extra = NULL;
		op->call.u.kern.attrs = NULL;
		if (op->nodeable && !pack(st, c, k, op))
			op->nodeable = 0;
		if (op->call.u.kern.attrs)
			op->shape = XXH3_64bits_withSeed(op->call.u.kern.attrs, attr_bytes(c), op->shape);
	}
	op->hash = op->argbytes ? XXH3_64bits_withSeed(op->args, op->argbytes, op->shape) : op->shape;
}

/* The recorded attributes are normalized: compare the call's the same way. */
static int same_attrs(const struct ag_op *e, const struct ag_call *c)
{
	CUlaunchAttribute mine[AG_MAX_ATTRS];
	if (c->u.kern.nattrs > AG_MAX_ATTRS || !e->call.u.kern.attrs)
		return 0;
	normalize_attrs(mine, c);
	return memcmp(e->call.u.kern.attrs, mine, attr_bytes(c)) == 0;
}

static int same_shape(const struct ag_op *e, const struct ag_call *c, const struct shape_key *key)
{
	struct shape_key ek;
	shape_of(&e->call, &ek);
	if (memcmp(&ek, key, sizeof ek) != 0)
		return 0;
	return c->kind != AG_OP_KERNEL || !c->u.kern.nattrs || same_attrs(e, c);
}

static uint64_t mix(uint64_t acc, uint64_t h)
{
	return acc ^ (h + 0x9e3779b97f4a7c15ull + (acc << 6) + (acc >> 2));
}

/* --- holding ------------------------------------------------------------ */

static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void flush_all(int reason);

/* Registered at the first hold, so it runs before exit handlers registered earlier (cudart's). */
static void exit_flush(void)
{
	flush_all(AG_S_FB_BARRIER);
	__atomic_store_n(&engine_off, 1, __ATOMIC_RELEASE);
}

static void register_exit_flush(void)
{
	atexit(exit_flush);
}

/* Holders that other streams are implicitly ordered with: counted so the check is one load. */
static int *order_counter(const struct ag_stream *st)
{
	return st->legacy ? &holding_legacy : st->blocking ? &holding_blocking : NULL;
}

static void hold_begin(struct ag_stream *st, struct ag_seq *seq)
{
	st->cur = seq;
	st->pos = 0;
	st->ndirty = 0;
	st->run_hash = 0;
	__atomic_store_n(&st->hold_tick, __atomic_load_n(&ag_engine_tick, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	__atomic_store_n(&st->holding, 1, __ATOMIC_RELEASE);
	/* The history does not see held operations: no window may span them. */
	st->gap = st->t;
	st->seg_start = st->t;
	st->seg_hash = st->seg_shape = 0;
	__atomic_add_fetch(&ag_engine_holding, 1, __ATOMIC_ACQ_REL);
	int *kind = order_counter(st);
	if (kind)
		__atomic_add_fetch(kind, 1, __ATOMIC_ACQ_REL);
	pthread_once(&exit_once, register_exit_flush);
	ag_watchdog_start();
	seq->starts++;
}

static void hold_end(struct ag_stream *st)
{
	for (uint32_t i = 0; st->ndirty && i < st->pos; i++)
		st->dirty[i] = 0;
	st->cur = NULL;
	st->pos = 0;
	st->ndirty = 0;
	__atomic_store_n(&st->holding, 0, __ATOMIC_RELEASE);
	int *kind = order_counter(st);
	if (kind)
		__atomic_sub_fetch(kind, 1, __ATOMIC_ACQ_REL);
	__atomic_sub_fetch(&ag_engine_holding, 1, __ATOMIC_ACQ_REL);
}

/* Held work goes to the stream's context, whichever thread submits it. */
static CUcontext enter_ctx(const struct ag_stream *st)
{
	CUcontext cur = NULL;
	AG_REAL(cuCtxGetCurrent)(&cur);
	if (cur != st->ctx)
		AG_REAL(cuCtxSetCurrent)(st->ctx);
	return cur;
}

static void leave_ctx(const struct ag_stream *st, CUcontext saved)
{
	if (saved != st->ctx)
		AG_REAL(cuCtxSetCurrent)(saved);
}

static void defer_error(struct ag_stream *st, CUresult rc)
{
	if (rc != CUDA_SUCCESS && st->pending == CUDA_SUCCESS) {
		__atomic_store_n(&st->pending, rc, __ATOMIC_RELAXED);
		__atomic_add_fetch(&pending_errors, 1, __ATOMIC_ACQ_REL);
	}
}

void ag_engine_flush(struct ag_stream *st, int reason)
{
	struct ag_seq *seq = st->cur;
	if (!seq)
		return;
	ag_nvtx_push("autograph: fallback");
	CUcontext saved = enter_ctx(st);
	for (uint32_t i = 0; i < st->pos; i++)
		defer_error(st, ag_op_submit(&seq->ops[i], st->held[i]));
	leave_ctx(st, saved);
	ag_nvtx_pop();
	ag_stats_add(AG_S_OPS_EAGER, st->pos);
	ag_stats_add((enum ag_scalar)reason, 1);
	AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u: %u held ops submitted eagerly (%s)",
	       (void *)st->handle, seq->id, st->pos,
	       reason == AG_S_FB_SHAPE	 ? "an operation's shape changed"
	       : reason == AG_S_FB_ARGS	 ? "arguments changed"
	       : reason == AG_S_FB_TIMEOUT ? "AUTOGRAPH_FLUSH_US passed"
	       : reason == AG_S_FB_BUILD	 ? "graph launch failed"
					 : "a barrier or synchronization");
	hold_end(st);
}

static void complete(struct ag_stream *st)
{
	struct ag_seq *seq = st->cur;
	ag_nvtx_push("autograph: replay");
	struct ag_variant *v = ag_graph_variant(st, seq);
	CUresult rc = CUDA_ERROR_NOT_READY;
	if (v) {
		CUcontext saved = enter_ctx(st);
		uint64_t t0 = __rdtsc();
		rc = AG_REAL(cuGraphLaunch)(v->exec, st->handle);
		uint64_t cycles = __rdtsc() - t0;
		leave_ctx(st, saved);
		/* The cheapest of the first few graph launches against the eager estimate, with a
		 * margin: a preempted measurement must not condemn a graph that pays. */
		if (rc == CUDA_SUCCESS && seq->timed < NOT_FASTER_SAMPLES) {
			seq->graph_cycles = seq->timed && seq->graph_cycles < cycles ? seq->graph_cycles : cycles;
			if (++seq->timed == NOT_FASTER_SAMPLES && seq->eager_cycles &&
			    seq->graph_cycles > 2 * seq->eager_cycles) {
				seq->slow = 1;
				ag_stats_add(AG_S_FB_NOT_FASTER, 1);
				AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u: graph launch not faster than eager; no longer graphed",
				       (void *)st->handle, seq->id);
			}
		}
	}
	ag_nvtx_pop();
	if (rc != CUDA_SUCCESS) {
		ag_engine_flush(st, AG_S_FB_BUILD);
		return;
	}
	ag_stats_add(AG_S_REPLAYS, 1);
	ag_stats_add(AG_S_OPS_REPLAYED, seq->n);
	hold_end(st);
}

static void diverge(struct ag_stream *st, int reason)
{
	struct ag_seq *seq = st->cur;
	seq->diverges++;
	ag_engine_flush(st, reason);
	if (seq->starts >= THRASH_MIN_STARTS && 2 * seq->diverges > seq->starts) {
		seq->disabled_until = st->t + seq->backoff;
		if (seq->backoff < (1u << 24))
			seq->backoff *= 2;
		seq->starts = seq->diverges = 0;
		ag_stats_add(AG_S_FB_THRASH, 1);
		AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u changes on most runs; set aside for %u ops",
		       (void *)st->handle, seq->id, seq->backoff / 2);
	}
}

/* Field by field, because this runs for every held operation. */
static int same_held_shape(const struct ag_op *e, const struct ag_call *c)
{
	const struct ag_call *x = &e->call;
	if (x->kind != c->kind || x->api != c->api || x->per_thread != c->per_thread)
		return 0;
	if (c->kind != AG_OP_KERNEL) {
		struct shape_key key;
		shape_of(c, &key);
		return same_shape(e, c, &key);
	}
	const unsigned *g = c->u.kern.grid, *b = c->u.kern.block, *xg = x->u.kern.grid,
		       *xb = x->u.kern.block;
	return x->u.kern.f == c->u.kern.f && xg[0] == g[0] && xg[1] == g[1] && xg[2] == g[2] &&
	       xb[0] == b[0] && xb[1] == b[1] && xb[2] == b[2] && x->u.kern.shmem == c->u.kern.shmem &&
	       x->u.kern.nattrs == c->u.kern.nattrs && (!c->u.kern.nattrs || same_attrs(e, c));
}

/* Whether the call's argument values equal the recorded ones, compared where they lie. */
static int same_args(const struct ag_kern *k, const struct ag_call *c, const uint8_t *args)
{
	if (!c->u.kern.params)
		return 0;
	for (unsigned i = 0; i < k->nparams; i++) {
		const uint8_t *r = args + k->offset[i];
		const void *v = c->u.kern.params[i];
		uint64_t a = 0, b = 0;
		switch (k->size[i]) {
		case 8: memcpy(&a, v, 8), memcpy(&b, r, 8); break;
		case 4: memcpy(&a, v, 4), memcpy(&b, r, 4); break;
		case 2: memcpy(&a, v, 2), memcpy(&b, r, 2); break;
		case 1: memcpy(&a, v, 1), memcpy(&b, r, 1); break;
		default: a = memcmp(v, r, k->size[i]) != 0;
		}
		if (a != b)
			return 0;
	}
	return 1;
}

/* The next operation of a held sequence: 1 if it was taken, 0 if the sequence diverged. */
static int match(struct ag_stream *st, const struct ag_call *c)
{
	struct ag_seq *seq = st->cur;
	const struct ag_op *e = &seq->ops[st->pos];
	if (!same_held_shape(e, c)) {
		diverge(st, AG_S_FB_SHAPE);
		return 0;
	}
	const uint8_t *args = e->args;
	uint64_t h = e->hash;
	if (c->kind == AG_OP_KERNEL && !same_args(e->k, c, e->args)) {
		struct ag_op in;
		in.call = *c;
		if (!pack(st, c, e->k, &in)) {
			diverge(st, AG_S_FB_SHAPE);
			return 0;
		}
		if (memcmp(in.args, e->args, e->argbytes) != 0) {
			if (!ag_opt.num[AG_OPT_UPDATE]) {
				diverge(st, AG_S_FB_ARGS);
				return 0;
			}
			args = in.args;
			h = XXH3_64bits_withSeed(args, e->argbytes, e->shape);
			st->dirty[st->pos] = 1;
			st->ndirty++;
		}
	}
	st->held[st->pos++] = args;
	st->run_hash = mix(st->run_hash, h);
	/* The timer measures time without a new operation, not the length of the hold. */
	__atomic_store_n(&st->hold_tick, __atomic_load_n(&ag_engine_tick, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	if (st->pos == seq->n)
		complete(st);
	return 1;
}

/* Hashes only propose: the call must equal the sequence's first operation field by field. */
static int startable(const struct ag_stream *st, const struct ag_seq *seq, const struct ag_op *op,
		     const struct ag_call *c)
{
	const struct ag_op *e = &seq->ops[0];
	return !seq->broken && !seq->slow && st->t >= seq->disabled_until && e->hash == op->hash &&
	       e->argbytes == op->argbytes && same_held_shape(e, c) &&
	       (!op->argbytes || memcmp(e->args, op->args, op->argbytes) == 0);
}

/* Finds the kernel's entry and counts the launch against it. */
static struct ag_kern *kern_of(const struct ag_call *c)
{
	struct ag_kern *k = ag_kern_get(c->u.kern.f);
	if (k)
		__atomic_add_fetch(&k->launches, 1, __ATOMIC_RELAXED);
	return k;
}

static CUresult step(struct ag_stream *st, const struct ag_call *c, int unified_ok)
{
	struct ag_kern *k = NULL;
	if (st->cur) {
		const struct ag_op *e = &st->cur->ops[st->pos];
		if (c->kind == AG_OP_KERNEL && e->call.kind == AG_OP_KERNEL &&
		    e->call.u.kern.f == c->u.kern.f) {
			k = e->k;
			__atomic_add_fetch(&k->launches, 1, __ATOMIC_RELAXED);
		}
		if (match(st, c))
			return CUDA_SUCCESS;
	}
	if (c->kind == AG_OP_KERNEL && !k)
		k = kern_of(c);
	struct ag_op *op = ag_detect_next(st);
	describe(st, c, k, unified_ok, op);
	op->epoch = ag_engine_epoch_of(st);
	struct ag_seq *seq = op->nodeable ? ag_detect_first(st, op->hash) : NULL;
	while (seq && !startable(st, seq, op, c))
		seq = seq->same_first;
	if (seq) {
		ag_detect_epoch(st, op->epoch);
		hold_begin(st, seq);
		st->held[st->pos++] = seq->ops[0].args;
		st->run_hash = mix(0, seq->ops[0].hash);
		if (st->pos == seq->n)
			complete(st);
		return CUDA_SUCCESS;
	}
	CUresult rc;
	/* One eager submission in 16 is timed: enough for the "not faster" check. */
	if ((st->t & 15) == 0) {
		uint64_t t0 = __rdtsc();
		rc = ag_call_submit(c);
		uint64_t dt = __rdtsc() - t0;
		st->eager_avg = st->eager_avg ? (7 * st->eager_avg + dt) / 8 : dt;
	} else {
		rc = ag_call_submit(c);
	}
	op->failed = rc != CUDA_SUCCESS;
	ag_detect_commit(st);
	return rc;
}

/* --- ordering between streams ------------------------------------------- */

struct flush_filter {
	const struct ag_stream *except;
	int legacy_only, blocking_only;
	int reason;
};

static void flush_matching(struct ag_stream *st, void *arg)
{
	const struct flush_filter *f = arg;
	if (st == f->except || !__atomic_load_n(&st->holding, __ATOMIC_ACQUIRE))
		return;
	if ((f->legacy_only && !st->legacy) || (f->blocking_only && (st->legacy || !st->blocking)))
		return;
	ag_stream_lock(st);
	ag_engine_flush(st, f->reason);
	ag_stream_unlock(st);
}

static void flush_all(int reason)
{
	if (!__atomic_load_n(&ag_engine_holding, __ATOMIC_ACQUIRE))
		return;
	struct flush_filter f = {NULL, 0, 0, reason};
	ag_stream_for_each(flush_matching, &f);
}

/*
 * Work on the legacy default stream waits for earlier work on every blocking
 * stream, and the other way round: such held work must go first. st is NULL
 * for the per-thread default stream, which behaves as a blocking stream.
 */
static void order_others(const struct ag_stream *st)
{
	struct flush_filter f = {st, 0, 0, AG_S_FB_BARRIER};
	if (st && st->legacy) {
		if (!__atomic_load_n(&holding_blocking, __ATOMIC_ACQUIRE))
			return;
		f.blocking_only = 1;
	} else if (!st || st->blocking) {
		if (!__atomic_load_n(&holding_legacy, __ATOMIC_ACQUIRE))
			return;
		f.legacy_only = 1;
	} else {
		return;
	}
	ag_stream_for_each(flush_matching, &f);
}

/* --- entry points --------------------------------------------------------- */

uint64_t ag_engine_epoch_of(struct ag_stream *st)
{
	return __atomic_load_n(&ag_engine_epoch, __ATOMIC_ACQUIRE) + st->local_epoch;
}

static void lock(struct ag_stream *st)
{
	ag_stream_lock(st);
	ag_engine_locked = st;
}

static void unlock(struct ag_stream *st)
{
	ag_engine_locked = NULL;
	ag_stream_unlock(st);
}

CUresult ag_engine_submit(const struct ag_call *c)
{
	int off = __atomic_load_n(&engine_off, __ATOMIC_ACQUIRE);
	int unified_ok = 0;
	if (c->kind == AG_OP_COPY && c->api == AG_COPY_UNIFIED && (!off || ag_opt.num[AG_OPT_STATS]))
		unified_ok = unified_copy_recordable(c);
	struct ag_stream *st = NULL;
	if (!off && !__atomic_load_n(&capture_depth, __ATOMIC_ACQUIRE)) {
		st = ag_stream_of(c->stream, c->per_thread, 1);
		if (__atomic_load_n(&ag_engine_holding, __ATOMIC_ACQUIRE))
			order_others(st);
	}
	if (st) {
		lock(st);
		if (ag_detect_ready(st)) {
			CUresult rc = step(st, c, unified_ok);
			unlock(st);
			return rc;
		}
		unlock(st);
	}
	if (c->kind == AG_OP_KERNEL && (!off || ag_opt.num[AG_OPT_STATS]))
		kern_of(c);
	return ag_call_submit(c);
}

void ag_engine_barrier(int fn)
{
	(void)fn;
	__atomic_add_fetch(&ag_engine_epoch, 1, __ATOMIC_ACQ_REL);
	flush_all(AG_S_FB_BARRIER);
}

void ag_engine_sync_all(void)
{
	__atomic_add_fetch(&ag_engine_epoch, 1, __ATOMIC_ACQ_REL);
	flush_all(AG_S_FB_BARRIER);
}

/* An operation or a wait on one stream: its held work first, and a boundary for detection. */
static void stream_boundary(CUstream s, int per_thread)
{
	if (__atomic_load_n(&engine_off, __ATOMIC_ACQUIRE))
		return;
	struct ag_stream *st = ag_stream_of(s, per_thread, 0);
	if (__atomic_load_n(&ag_engine_holding, __ATOMIC_ACQUIRE))
		order_others(st);
	if (!st)
		return;
	lock(st);
	ag_engine_flush(st, AG_S_FB_BARRIER);
	st->local_epoch++;
	unlock(st);
}

void ag_engine_stream_op(CUstream s, int per_thread)
{
	stream_boundary(s, per_thread);
}

void ag_engine_sync_stream(CUstream s, int per_thread)
{
	struct ag_stream *st = ag_stream_of(s, per_thread, 0);
	if (st && !st->legacy)
		stream_boundary(s, per_thread);
	else
		ag_engine_sync_all();
}

static void take_pending(struct ag_stream *st, void *arg)
{
	CUresult *rc = arg;
	if (__atomic_load_n(&st->pending, __ATOMIC_RELAXED) == CUDA_SUCCESS)
		return;
	ag_stream_lock(st);
	if (*rc == CUDA_SUCCESS)
		*rc = st->pending;
	if (st->pending != CUDA_SUCCESS) {
		__atomic_store_n(&st->pending, CUDA_SUCCESS, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&pending_errors, 1, __ATOMIC_ACQ_REL);
	}
	ag_stream_unlock(st);
}

CUresult ag_engine_sync_done(CUresult rc, CUstream s, int per_thread)
{
	if (rc != CUDA_SUCCESS || !__atomic_load_n(&pending_errors, __ATOMIC_ACQUIRE))
		return rc;
	if (per_thread < 0) {
		ag_stream_for_each(take_pending, &rc);
		return rc;
	}
	struct ag_stream *st = ag_stream_of(s, per_thread, 0);
	if (st)
		take_pending(st, &rc);
	return rc;
}

CUresult ag_engine_capture_began(CUresult rc)
{
	if (rc == CUDA_SUCCESS)
		__atomic_add_fetch(&capture_depth, 1, __ATOMIC_ACQ_REL);
	return rc;
}

/* A capture ends whether it succeeded or was invalidated; other errors mean it was not ours. */
CUresult ag_engine_capture_ended(CUresult rc)
{
	if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED &&
	    rc != CUDA_ERROR_STREAM_CAPTURE_UNJOINED)
		return rc;
	int d = __atomic_load_n(&capture_depth, __ATOMIC_ACQUIRE);
	while (d > 0 && !__atomic_compare_exchange_n(&capture_depth, &d, d - 1, 0, __ATOMIC_ACQ_REL,
						     __ATOMIC_ACQUIRE))
		;
	return rc;
}

static void drop_learned(struct ag_stream *st)
{
	for (struct ag_seq *s = st->seqs, *next; s; s = next) {
		next = s->next;
		ag_graph_destroy(s);
		free(s->ops);
		free(s->blob);
		free(s);
	}
	HASH_CLEAR(by_first, st->by_first);
	st->seqs = NULL;
	ag_detect_reset(st);
}

static void forget_stream(struct ag_stream *st, void *arg)
{
	(void)arg;
	ag_stream_lock(st);
	ag_engine_flush(st, AG_S_FB_BARRIER);
	drop_learned(st);
	ag_stream_unlock(st);
}

void ag_engine_forget_all(void)
{
	__atomic_add_fetch(&ag_engine_epoch, 1, __ATOMIC_ACQ_REL);
	ag_stream_for_each(forget_stream, NULL);
	ag_kern_forget_all();
}

void ag_engine_stream_destroyed(CUstream s)
{
	if (__atomic_load_n(&engine_off, __ATOMIC_ACQUIRE))
		return;
	struct ag_stream *st = ag_stream_of(s, 0, 0);
	if (!st || st->legacy)
		return;
	forget_stream(st, NULL);
	ag_stream_remove(st);
}

void ag_engine_init(void)
{
	engine_off = !ag_opt.num[AG_OPT_ENABLE];
	ag_nvtx_init(ag_opt.num[AG_OPT_NVTX]);
}

void ag_engine_at_exit(void)
{
	flush_all(AG_S_FB_BARRIER);
	__atomic_store_n(&engine_off, 1, __ATOMIC_RELEASE);
}

void ag_engine_before_fork(void)
{
	flush_all(AG_S_FB_BARRIER);
}

/* The driver does not work in a forked child: the library only passes calls through there. */
void ag_engine_after_fork_child(void)
{
	engine_off = 1;
	ag_engine_holding = holding_legacy = holding_blocking = 0;
}
