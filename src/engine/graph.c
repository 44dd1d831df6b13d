/*
 * Graphs for sequences, built with the explicit API: one node per operation,
 * chained in stream order, launch attributes copied onto kernel nodes, and
 * instantiated as up to AG_VARIANTS executables per sequence, each keyed by
 * the full hash of the run it replays. A run whose arguments match no variant
 * gets a new one, or (AUTOGRAPH_UPDATE) has the least recently used variant
 * updated in place node by node. The number of executables alive is bounded
 * by AUTOGRAPH_MAX_GRAPHS (evict.c).
 * Before the program destroys an event, executable nodes that record it are
 * pointed at a spare event of the sequence's.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine/internal.h"
#include "driver/real.h"
#include "log.h"
#include "stats.h"

unsigned ag_graph_count;
unsigned ag_graph_event_seqs;
static uint64_t use_clock;

static void kernel_params(const struct ag_op *op, const uint8_t *args, CUcontext ctx, void **extra,
			  size_t *size, CUDA_KERNEL_NODE_PARAMS *p)
{
	memset(p, 0, sizeof *p);
	if (op->k->is_kernel) {
		p->kern = (CUkernel)op->call.u.kern.f;
		p->ctx = ctx;
	} else {
		p->func = op->call.u.kern.f;
	}
	p->gridDimX = op->call.u.kern.grid[0];
	p->gridDimY = op->call.u.kern.grid[1];
	p->gridDimZ = op->call.u.kern.grid[2];
	p->blockDimX = op->call.u.kern.block[0];
	p->blockDimY = op->call.u.kern.block[1];
	p->blockDimZ = op->call.u.kern.block[2];
	p->sharedMemBytes = op->call.u.kern.shmem;
	*size = op->argbytes;
	extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	extra[1] = (void *)args;
	extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	extra[3] = size;
	extra[4] = CU_LAUNCH_PARAM_END;
	p->extra = extra;
}

/* c's copy, with the addresses and size args holds if it is not NULL (a device copy's). */
static void copy_params(const struct ag_call *c, const uint8_t *args, CUDA_MEMCPY3D *p)
{
	struct ag_call a = *c;
	if (args)
		memcpy(&a.u.copy, args, AG_COPY_ARGS);
	CUdeviceptr dst = a.u.copy.dst, src = a.u.copy.src;
	memset(p, 0, sizeof *p);
	p->WidthInBytes = a.u.copy.bytes;
	p->Height = 1;
	p->Depth = 1;
	p->srcMemoryType = p->dstMemoryType = CU_MEMORYTYPE_UNIFIED;
	p->srcDevice = src;
	p->dstDevice = dst;
	if (c->api == AG_COPY_HTOD) {
		p->srcMemoryType = CU_MEMORYTYPE_HOST;
		p->srcHost = (const void *)src;
		p->dstMemoryType = CU_MEMORYTYPE_DEVICE;
	} else if (c->api == AG_COPY_DTOH) {
		p->srcMemoryType = CU_MEMORYTYPE_DEVICE;
		p->dstMemoryType = CU_MEMORYTYPE_HOST;
		p->dstHost = (void *)dst;
	} else if (c->api == AG_COPY_DTOD) {
		p->srcMemoryType = p->dstMemoryType = CU_MEMORYTYPE_DEVICE;
	}
}

/* Programmatic serialization only lets a kernel start early: dropping it is always safe. (The
 * event-recording attributes are never on a node: op.c keeps such launches eager.) */
static int droppable(CUlaunchAttributeID id)
{
	return id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
}

static CUresult add_node(const struct ag_op *op, CUgraph g, CUgraphNode *prev, CUcontext ctx,
			 CUgraphNode *node)
{
	size_t nd = *prev ? 1 : 0;
	const struct ag_call *c = &op->call;
	CUresult rc;
	switch (c->kind) {
	case AG_OP_KERNEL: {
		void *extra[5];
		size_t size;
		CUDA_KERNEL_NODE_PARAMS p;
		kernel_params(op, op->args, ctx, extra, &size, &p);
		rc = AG_REAL(cuGraphAddKernelNode_v2)(node, g, prev, nd, &p);
		for (unsigned i = 0; rc == CUDA_SUCCESS && i < c->u.kern.nattrs; i++) {
			const CUlaunchAttribute *a = &c->u.kern.attrs[i];
			rc = AG_REAL(cuGraphKernelNodeSetAttribute)(*node, a->id, &a->value);
			if (rc != CUDA_SUCCESS && droppable(a->id))
				rc = CUDA_SUCCESS;
		}
		if (rc == CUDA_SUCCESS && c->api == AG_LAUNCH_COOPERATIVE) {
			CUkernelNodeAttrValue v = {0};
			v.cooperative = 1;
			rc = AG_REAL(cuGraphKernelNodeSetAttribute)(*node, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v);
		}
		return rc;
	}
	case AG_OP_MEMSET: {
		CUDA_MEMSET_NODE_PARAMS p = {c->u.set.dst, c->u.set.pitch, c->u.set.value, c->u.set.elem,
					     c->u.set.width, c->u.set.height};
		return AG_REAL(cuGraphAddMemsetNode)(node, g, prev, nd, &p, ctx);
	}
	case AG_OP_COPY: {
		CUDA_MEMCPY3D p;
		copy_params(c, op->argbytes ? op->args : NULL, &p); /* the node is what the arguments say */
		return AG_REAL(cuGraphAddMemcpyNode)(node, g, prev, nd, &p, ctx);
	}
	case AG_OP_EVENT:
		return AG_REAL(cuGraphAddEventRecordNode)(node, g, prev, nd, ag_op_event(op->args));
	default: {
		CUDA_HOST_NODE_PARAMS p = {c->u.host.fn, c->u.host.data};
		return AG_REAL(cuGraphAddHostNode)(node, g, prev, nd, &p);
	}
	}
}

/*
 * The sequence's own graph names the run's events before it is instantiated
 * again: an event it was built with may have been destroyed since (a JAX
 * step destroys the event the step before recorded). The new executable's
 * event nodes are then the run's, which update() leaves alone where they
 * equal the sequence's and sets where they differ, as for any node.
 */
static int template_events(const struct ag_stream *st, struct ag_seq *seq)
{
	if (!seq->nevents)
		return 1;
	for (uint32_t i = 0; i < seq->n; i++)
		if (seq->ops[i].call.kind == AG_OP_EVENT &&
		    AG_REAL(cuGraphEventRecordNodeSetEvent)(seq->nodes[i], ag_op_event(st->held[i])) != CUDA_SUCCESS)
			return 0;
	return 1;
}

static int instantiate(struct ag_seq *seq, struct ag_variant *v)
{
	ag_graph_make_room();
	CUresult rc = AG_REAL(cuGraphInstantiateWithFlags)(&v->exec, seq->graph, 0);
	if (rc != CUDA_SUCCESS) {
		v->exec = NULL;
		AG_LOG(AG_LOG_DEBUG, "sequence %u: instantiation failed (%d)", seq->id, rc);
		return 0;
	}
	__atomic_add_fetch(&ag_graph_count, 1, __ATOMIC_RELAXED);
	ag_stats_add(AG_S_GRAPHS_BUILT, 1);
	seq->instantiations++;
	return 1;
}

int ag_graph_build(struct ag_seq *seq, CUcontext ctx)
{
	CUgraph g;
	if (AG_REAL(cuGraphCreate)(&g, 0) != CUDA_SUCCESS)
		return 0;
	seq->nodes = calloc(seq->n, sizeof *seq->nodes);
	CUgraphNode prev = NULL;
	CUresult rc = seq->nodes ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
	for (uint32_t i = 0; rc == CUDA_SUCCESS && i < seq->n; i++) {
		rc = add_node(&seq->ops[i], g, &prev, ctx, &seq->nodes[i]);
		prev = seq->nodes[i];
	}
	seq->graph = g;
	seq->ctx = ctx;
	for (uint32_t i = 0; i < seq->n; i++)
		seq->nevents += seq->ops[i].call.kind == AG_OP_EVENT;
	if (seq->nevents)
		__atomic_add_fetch(&ag_graph_event_seqs, 1, __ATOMIC_RELEASE);
	if (rc != CUDA_SUCCESS || !instantiate(seq, &seq->var[0])) {
		AG_LOG(AG_LOG_DEBUG, "sequence %u: building its graph failed (%d)", seq->id, rc);
		ag_graph_destroy(seq);
		return 0;
	}
	seq->var[0].key = seq->hash;
	seq->nvar = 1;
	return 1;
}

/* A node's arguments: a kernel's parameter buffer, or a device copy's addresses. */
static CUresult set_node_args(struct ag_seq *seq, CUgraphExec exec, uint32_t i, const uint8_t *args)
{
	const struct ag_op *op = &seq->ops[i];
	if (op->call.kind == AG_OP_COPY) {
		CUDA_MEMCPY3D p;
		copy_params(&op->call, args, &p);
		return AG_REAL(cuGraphExecMemcpyNodeSetParams)(exec, seq->nodes[i], &p, seq->ctx);
	}
	if (op->call.kind == AG_OP_EVENT)
		return AG_REAL(cuGraphExecEventRecordNodeSetEvent)(exec, seq->nodes[i], ag_op_event(args));
	void *extra[5];
	size_t size;
	CUDA_KERNEL_NODE_PARAMS p;
	kernel_params(op, args, seq->ctx, extra, &size, &p);
	return AG_REAL(cuGraphExecKernelNodeSetParams_v2)(exec, seq->nodes[i], &p);
}

/* Records that v's node i now holds args (its arguments differ from the sequence's own). */
static int note_dirty(struct ag_seq *seq, struct ag_variant *v, uint32_t i, const void *args)
{
	uint32_t j = 0;
	while (j < v->ndirty && v->dirty[j] != i)
		j++;
	if (!v->dirty && !(v->dirty = calloc(seq->n, sizeof *v->dirty)))
		return 0;
	if (!v->dirty_args && !(v->dirty_args = calloc(seq->n, sizeof *v->dirty_args)))
		return 0;
	if (!v->dirty_args[i] && !(v->dirty_args[i] = malloc(seq->ops[i].argbytes)))
		return 0;
	memcpy(v->dirty_args[i], args, seq->ops[i].argbytes);
	if (j == v->ndirty)
		v->dirty[v->ndirty++] = i;
	return 1;
}

/* Brings v's executable to the held run: nodes dirty before or now get their new values. */
static int update(struct ag_stream *st, struct ag_seq *seq, struct ag_variant *v)
{
	for (uint32_t j = 0; j < v->ndirty; j++) {
		uint32_t i = v->dirty[j];
		if (!st->dirty[i] && set_node_args(seq, v->exec, i, seq->ops[i].args) != CUDA_SUCCESS)
			return 0;
	}
	v->ndirty = 0;
	for (uint32_t i = 0; i < seq->n; i++)
		if (st->dirty[i] && (set_node_args(seq, v->exec, i, st->held[i]) != CUDA_SUCCESS ||
				     !note_dirty(seq, v, i, st->held[i])))
			return 0;
	return 1;
}

/*
 * An update the driver refused part-way (a copy's new addresses in memory it
 * will not put on this node) leaves the executable matching no key: it goes,
 * and the variant is the sequence's own graph again, instantiated when next used.
 */
static void drop_exec(struct ag_seq *seq, struct ag_variant *v)
{
	if (v->exec) {
		AG_REAL(cuGraphExecDestroy)(v->exec);
		v->exec = NULL;
		__atomic_sub_fetch(&ag_graph_count, 1, __ATOMIC_RELAXED);
	}
	v->ndirty = 0;
	v->key = seq->hash;
}

static void discard(struct ag_seq *seq, struct ag_variant *v)
{
	drop_exec(seq, v);
	AG_LOG(AG_LOG_DEBUG, "sequence %u: the driver refused a graph update; the run goes eagerly", seq->id);
}

struct ag_variant *ag_graph_variant(struct ag_stream *st, struct ag_seq *seq)
{
	uint64_t key = st->ndirty ? st->run_hash : seq->hash;
	struct ag_variant *lru = NULL;
	for (int i = 0; i < seq->nvar; i++) {
		struct ag_variant *v = &seq->var[i];
		if (v->key == key && (v->exec || (template_events(st, seq) && instantiate(seq, v)))) {
			if (v->ndirty && !update(st, seq, v)) {
				discard(seq, v);
				return NULL;
			}
			v->last_used = ++use_clock;
			return v;
		}
		if (!lru || v->last_used < lru->last_used)
			lru = v;
	}
	struct ag_variant *v;
	if (seq->nvar < AG_VARIANTS) {
		v = &seq->var[seq->nvar];
		memset(v, 0, sizeof *v);
		if (!template_events(st, seq) || !instantiate(seq, v))
			return NULL;
		seq->nvar++;
	} else if (ag_opt.num[AG_OPT_UPDATE] && lru) {
		v = lru;
		if (!v->exec && (!template_events(st, seq) || !instantiate(seq, v)))
			return NULL;
		ag_stats_add(AG_S_UPDATES, 1);
		AG_LOG(AG_LOG_DEBUG, "stream %p: sequence %u: arguments changed, graph updated in place",
		       (void *)st->handle, seq->id);
	} else {
		return NULL;
	}
	if (!update(st, seq, v)) {
		discard(seq, v);
		return NULL;
	}
	v->key = key;
	v->last_used = ++use_clock;
	return v;
}

/*
 * The program is about to destroy ev: every executable node that records it is
 * pointed at the sequence's spare event (no timing, never recorded by the
 * program) while ev still exists. On the H200 the driver refused to give a
 * record node a new event once the node's event had been destroyed (run 11 of
 * docs/gpu-results.md: 9 of 22 in-place updates in `holes xla-steps`, each followed by
 * a new instantiation, until the sequence was given up), and a JAX step
 * destroys the event that a variant's node recorded the step before. Cost: one
 * node update for each destroyed event an executable names. The node counts
 * as changed, so the next run that records the sequence's own event sets it back.
 */
void ag_graph_event_destroying(const struct ag_stream *st, struct ag_seq *seq, CUevent ev)
{
	if (!seq->nevents || !seq->nvar)
		return;
	for (int k = 0; k < seq->nvar; k++) {
		struct ag_variant *v = &seq->var[k];
		for (uint32_t i = 0; v->exec && i < seq->n; i++) {
			if (seq->ops[i].call.kind != AG_OP_EVENT)
				continue;
			const uint8_t *now = seq->ops[i].args;
			for (uint32_t j = 0; j < v->ndirty; j++)
				if (v->dirty[j] == i)
					now = v->dirty_args[i];
			if (ag_op_event(now) != ev)
				continue;
			if (!seq->spare) {
				CUcontext saved = ag_stream_enter_ctx(st);
				if (AG_REAL(cuEventCreate)(&seq->spare, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
					seq->spare = NULL;
				ag_stream_leave_ctx(st, saved);
			}
			struct ag_event_arg spare = {seq->spare, 0};
			if (!seq->spare ||
			    AG_REAL(cuGraphExecEventRecordNodeSetEvent)(v->exec, seq->nodes[i], seq->spare) != CUDA_SUCCESS ||
			    !note_dirty(seq, v, i, &spare))
				drop_exec(seq, v); /* instantiated again when next used */
		}
	}
}

void ag_graph_destroy(struct ag_seq *seq)
{
	for (int i = 0; i < seq->nvar; i++) {
		struct ag_variant *v = &seq->var[i];
		if (v->exec) {
			AG_REAL(cuGraphExecDestroy)(v->exec);
			__atomic_sub_fetch(&ag_graph_count, 1, __ATOMIC_RELAXED);
		}
		for (uint32_t j = 0; v->dirty_args && j < seq->n; j++)
			free(v->dirty_args[j]);
		free(v->dirty);
		free(v->dirty_args);
		memset(v, 0, sizeof *v);
	}
	seq->nvar = 0;
	if (seq->spare)
		AG_REAL(cuEventDestroy_v2)(seq->spare);
	seq->spare = NULL;
	if (seq->nevents)
		__atomic_sub_fetch(&ag_graph_event_seqs, 1, __ATOMIC_RELEASE);
	seq->nevents = 0;
	if (seq->graph)
		AG_REAL(cuGraphDestroy)(seq->graph);
	seq->graph = NULL;
	free(seq->nodes);
	seq->nodes = NULL;
}
