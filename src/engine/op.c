/*
 * What an operation is: the description of a stream operation call (its shape,
 * its argument values packed as the driver's parameter buffer, its launch
 * attributes normalized, whether it can be a graph node) and its hashes; the
 * comparison of a call with a recorded operation, field by field and in place;
 * and the resubmission of a recorded operation to the driver.
 */
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "driver/real.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/op.h"
#include "stats.h"

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
		/* A copy's addresses and size are its arguments (copy.c), unless it is a
		 * unified-address one, whose direction depends on them. */
		if (c->api == AG_COPY_UNIFIED)
			w[0] = c->u.copy.dst, w[1] = c->u.copy.src, w[2] = c->u.copy.bytes;
		break;
	case AG_OP_EVENT:
		/* The event is the record's argument (ag_op_event_pack). */
		w[0] = c->u.event.flags, w[1] = c->u.event.with_flags;
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
int ag_op_pack(struct ag_stream *st, const struct ag_call *c, const struct ag_kern *k,
		struct ag_op *op)
{
	size_t n = k->argbytes, a = attr_bytes(c);
	uint8_t *buf = ag_arena_alloc(st, AG_ALIGN8(n) + a, &op->arena_pos);
	if (!buf)
		return 0;
	if (c->u.kern.params) {
		if (!k->dense)
			memset(buf, 0, n);
		for (unsigned i = 0; i < k->nparams; i++) {
			uint8_t *d = buf + k->offset[i];
			const void *v = c->u.kern.params[i];
			if (!v)
				return 0; /* the driver refuses the launch: leave it to say so */
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
		CUlaunchAttribute *attrs = (CUlaunchAttribute *)(buf + AG_ALIGN8(n));
		normalize_attrs(attrs, c);
		op->call.u.kern.attrs = attrs;
	}
	return 1;
}

/* Whether the operation can be a graph node (and be held). */
/*
 * Whether a launch attribute can be a graph node's. An attribute that records
 * an event (programmatic or launch-completion events) has an effect the
 * program can observe, and a graph node set from it would not record it on
 * each replay: such launches stay eager. So do attributes this build does not
 * know: what they do, and which bytes of their value matter, is unknown.
 */
static int attr_nodeable(CUlaunchAttributeID id)
{
	switch (id) {
	case CU_LAUNCH_ATTRIBUTE_IGNORE:
	case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
	case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
	case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
		return 1;
	default:
		return 0;
	}
}

static int kernel_nodeable(const struct ag_call *c, const struct ag_kern *k)
{
	if (!k || !k->layout_ok || !k->graphable || c->u.kern.nattrs > AG_MAX_ATTRS ||
	    (c->api == AG_LAUNCH_COOPERATIVE && k->nparams > AG_MAX_COOP_PARAMS))
		return 0;
	for (unsigned i = 0; i < c->u.kern.nattrs; i++)
		if (!attr_nodeable(c->u.kern.attrs[i].id))
			return 0;
	return 1;
}

static int nodeable(const struct ag_call *c, const struct ag_kern *k, int unified_ok,
		    struct ag_event_arg *ev)
{
	switch (c->kind) {
	case AG_OP_KERNEL:
		return kernel_nodeable(c, k);
	case AG_OP_COPY:
		if (c->api == AG_COPY_HTOD)
			return ag_engine_pinned((const void *)c->u.copy.src, c->u.copy.bytes);
		if (c->api == AG_COPY_DTOH)
			return ag_engine_pinned((const void *)c->u.copy.dst, c->u.copy.bytes);
		return c->api == AG_COPY_DTOD || unified_ok;
	case AG_OP_EVENT:
		/* Timing events and external records keep their eager semantics. */
		return !c->u.event.flags && ag_facts_event_arg(c->u.event.ev, ev);
	default:
		return 1;
	}
}

void ag_op_describe(struct ag_stream *st, const struct ag_call *c, struct ag_kern *k,
		     int unified_ok, struct ag_op *op)
{
	op->call = *c;
	op->k = k;
	op->args = NULL;
	op->argbytes = 0;
	op->failed = 0;
	struct shape_key key;
	struct ag_event_arg ev = {c->u.event.ev, 0};
	shape_of(c, &key);
	op->shape = shape_hash(&key);
	op->nodeable = (uint8_t)nodeable(c, k, unified_ok, &ev);
	if (c->kind == AG_OP_KERNEL) {
		op->call.u.kern.params = NULL;
		op->call.u.kern.extra = NULL;
		op->call.u.kern.attrs = NULL;
		if (op->nodeable && !ag_op_pack(st, c, k, op))
			op->nodeable = 0;
		if (op->call.u.kern.attrs)
			op->shape = XXH3_64bits_withSeed(op->call.u.kern.attrs, attr_bytes(c), op->shape);
	} else if (c->kind == AG_OP_COPY && c->api != AG_COPY_UNIFIED && !ag_copy_pack(st, c, op)) {
		op->nodeable = 0;
	} else if (c->kind == AG_OP_EVENT && !ag_op_event_pack(st, &ev, op)) {
		op->nodeable = 0;
	}
	op->hash = op->argbytes ? ag_op_args_hash(op, op->args) : op->shape;
}

/*
 * An event record's event, recorded as its argument: XLA records a new event
 * after every step (and destroys the one before), so the records of a step
 * differ from step to step the way kernel arguments do, and are replayed by
 * setting the node's event. Returns 0 if it cannot be recorded.
 */
int ag_op_event_pack(struct ag_stream *st, const struct ag_event_arg *a, struct ag_op *op)
{
	uint8_t *buf = ag_arena_alloc(st, sizeof *a, &op->arena_pos);
	if (!buf)
		return 0;
	memcpy(buf, a, sizeof *a);
	op->args = buf;
	op->argbytes = sizeof *a;
	return 1;
}

CUevent ag_op_event(const uint8_t *args)
{
	CUevent ev;
	memcpy(&ev, args, sizeof ev);
	return ev;
}

uint64_t ag_op_args_hash(const struct ag_op *op, const uint8_t *args)
{
	return XXH3_64bits_withSeed(args, op->argbytes, op->shape);
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

static int same_shape_key(const struct ag_op *e, const struct ag_call *c, const struct shape_key *key)
{
	struct shape_key ek;
	shape_of(&e->call, &ek);
	if (memcmp(&ek, key, sizeof ek) != 0)
		return 0;
	return c->kind != AG_OP_KERNEL || !c->u.kern.nattrs || same_attrs(e, c);
}

/* The parts of ag_op_same_shape (op.h) that are not on the hot path. */
int ag_op_same_other_shape(const struct ag_op *e, const struct ag_call *c)
{
	struct shape_key key;
	shape_of(c, &key);
	return same_shape_key(e, c, &key);
}

int ag_op_same_attrs(const struct ag_op *e, const struct ag_call *c)
{
	return same_attrs(e, c);
}

CUresult ag_op_submit(const struct ag_op *op, const uint8_t *args)
{
	struct ag_call c = op->call;
	if (c.kind == AG_OP_COPY && op->argbytes)
		memcpy(&c.u.copy, args, AG_COPY_ARGS);
	else if (c.kind == AG_OP_EVENT && op->argbytes)
		c.u.event.ev = ag_op_event(args);
	if (c.kind != AG_OP_KERNEL)
		return ag_call_submit(&c);
	void *extra[5];
	size_t size = op->argbytes;
	void *params[AG_MAX_COOP_PARAMS];
	if (c.api == AG_LAUNCH_COOPERATIVE) {
		for (unsigned i = 0; i < op->k->nparams; i++)
			params[i] = (void *)(args + op->k->offset[i]);
		c.u.kern.params = params;
		c.u.kern.extra = NULL;
	} else {
		extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
		extra[1] = (void *)args;
		extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
		extra[3] = &size;
		extra[4] = CU_LAUNCH_PARAM_END;
		c.u.kern.params = NULL;
		c.u.kern.extra = extra;
	}
	return ag_call_submit(&c);
}

/* The bytes a copy or memset touches, on either side, overlap [lo, hi). */
int ag_op_touches(const struct ag_op *op, uintptr_t lo, uintptr_t hi)
{
	const struct ag_call *c = &op->call;
	if (c->kind == AG_OP_COPY) {
		uintptr_t n = c->u.copy.bytes;
		return (c->u.copy.src < hi && c->u.copy.src + n > lo) ||
		       (c->u.copy.dst < hi && c->u.copy.dst + n > lo);
	}
	if (c->kind == AG_OP_MEMSET) {
		uintptr_t end = c->u.set.dst + (c->u.set.height > 1 ? c->u.set.pitch * (c->u.set.height - 1) : 0) +
				c->u.set.width * c->u.set.elem;
		return c->u.set.dst < hi && end > lo;
	}
	return 0;
}
