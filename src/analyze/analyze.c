/*
 * `autograph analyze TRACE`: replays an AUTOGRAPH_TRACE file through the
 * engine's own front door (engine.h), on the CPU, with driver.c in place of
 * the driver and timer.c in place of the timer thread, then says what the
 * engine made of it: one line per learned sequence, the fallbacks and the
 * calls that ended holds, and last `graphed: N of M operations (P%)`. Options
 * come from AUTOGRAPH_* as for the library, so a trace can be replayed under
 * other settings. A file ending in .gz is read through gzip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "config.h"
#include "engine/engine.h"
#include "engine/internal.h" /* uthash, as the engine configures it */
#include "engine/trace.h"
#include "names.h"
#include "stats.h"

struct kernel_entry {
	struct ag_an_kernel k;
	UT_hash_handle hh;
};

struct stream_entry {
	struct ag_an_stream s;
	UT_hash_handle hh;
};

/* What the replay has met so far. */
static struct kernel_entry **kernels;     /* by trace index */
static size_t nkernels;
static struct kernel_entry *kernel_by_handle;
static struct stream_entry **streams;     /* by trace index */
static size_t nstreams;
static struct stream_entry *stream_by_handle;
static CUcontext *thread_ctx;             /* by writer thread index */
static size_t nthreads;
static size_t thread_now, thread_max;
static char **fn_names;
static size_t nfn;

/* The operation being replayed. */
static CUresult op_status;
static CUdeviceptr op_src, op_dst;
static size_t op_bytes;
static unsigned op_src_type, op_dst_type;

/* Boundaries that submitted held work, by the driver function that made them. */
static uint64_t *flushes_by_fn; /* nfn + 1 entries; [0]: not known */

static const uint8_t *p, *end;
static int bad;
static int ended;         /* the file's last record was AG_TR_END */
static int dump;          /* --dump: one line per operation and ordering call as replayed */
static uint64_t now_us;

static uint64_t get(void)
{
	uint64_t v = 0;
	if (!bad && !ag_trace_get(&p, end, &v))
		bad = 1;
	return v;
}

static const uint8_t *get_bytes(size_t n)
{
	if (bad || (size_t)(end - p) < n) {
		bad = 1;
		return NULL;
	}
	const uint8_t *b = p;
	p += n;
	return b;
}

static void *grow(void *a, size_t *n, size_t want, size_t elem)
{
	if (want < *n)
		return a;
	size_t m = want + 16 + want / 2;
	a = realloc(a, m * elem);
	if (!a) {
		fprintf(stderr, "autograph analyze: out of memory\n");
		exit(1);
	}
	memset((char *)a + *n * elem, 0, (m - *n) * elem);
	*n = m;
	return a;
}

const struct ag_an_kernel *ag_an_kernel_of(uintptr_t handle)
{
	struct kernel_entry *e;
	HASH_FIND(hh, kernel_by_handle, &handle, sizeof handle, e);
	return e ? &e->k : NULL;
}

const struct ag_an_stream *ag_an_stream_of(CUstream s)
{
	uintptr_t h = (uintptr_t)s;
	struct stream_entry *e;
	HASH_FIND(hh, stream_by_handle, &h, sizeof h, e);
	return e ? &e->s : NULL;
}

CUcontext ag_an_thread_ctx(void)
{
	return thread_now < nthreads ? thread_ctx[thread_now] : NULL;
}

void ag_an_set_thread_ctx(CUcontext ctx)
{
	thread_ctx = grow(thread_ctx, &nthreads, thread_now, sizeof *thread_ctx);
	thread_ctx[thread_now] = ctx;
}

unsigned ag_an_memory_type(CUdeviceptr ptr)
{
	return ptr == op_src ? op_src_type : ptr == op_dst ? op_dst_type : 0;
}

CUresult ag_an_status(void)
{
	return op_status;
}

int ag_an_copy_range(CUdeviceptr ptr, size_t *bytes)
{
	*bytes = op_bytes;
	return op_status == CUDA_SUCCESS && op_bytes && (ptr == op_src || ptr == op_dst);
}

static CUstream stream_handle(uint64_t i)
{
	if (i == AG_TR_S_NULL)
		return NULL;
	if (i == AG_TR_S_LEGACY)
		return CU_STREAM_LEGACY;
	if (i == AG_TR_S_PER_THREAD)
		return CU_STREAM_PER_THREAD;
	return i < nstreams && streams[i] ? (CUstream)streams[i]->s.handle : NULL;
}

static void define_kernel(void)
{
	uint64_t index = get();
	struct kernel_entry *e = calloc(1, sizeof *e);
	if (!e)
		exit(1);
	e->k.handle = (uintptr_t)get();
	e->k.is_kernel = (uint8_t)get();
	e->k.layout_ok = (uint8_t)get();
	e->k.nparams = (uint32_t)get();
	if (bad || e->k.nparams > 0xffff) {
		bad = 1;
		free(e);
		return;
	}
	e->k.offset = calloc(e->k.nparams + 1, sizeof *e->k.offset);
	e->k.size = calloc(e->k.nparams + 1, sizeof *e->k.size);
	for (uint32_t i = 0; i < e->k.nparams; i++) {
		e->k.offset[i] = (uint16_t)get();
		e->k.size[i] = (uint16_t)get();
	}
	uint64_t len = get();
	const uint8_t *name = get_bytes(len);
	e->k.name = calloc(len + 1, 1);
	if (name)
		memcpy(e->k.name, name, len);
	kernels = grow(kernels, &nkernels, index, sizeof *kernels);
	kernels[index] = e;
	struct kernel_entry *old;
	HASH_FIND(hh, kernel_by_handle, &e->k.handle, sizeof e->k.handle, old);
	if (old)
		HASH_DEL(kernel_by_handle, old); /* kept in kernels[]: the engine may still name it */
	HASH_ADD(hh, kernel_by_handle, k.handle, sizeof e->k.handle, e);
}

static void define_stream(void)
{
	uint64_t index = get();
	struct stream_entry *e = calloc(1, sizeof *e);
	if (!e)
		exit(1);
	e->s.handle = (uintptr_t)get();
	e->s.ctx = (CUcontext)(uintptr_t)get();
	e->s.flags = (unsigned)get();
	e->s.ok = (int)get();
	streams = grow(streams, &nstreams, index, sizeof *streams);
	streams[index] = e;
	struct stream_entry *old;
	HASH_FIND(hh, stream_by_handle, &e->s.handle, sizeof e->s.handle, old);
	if (old)
		HASH_DEL(stream_by_handle, old);
	HASH_ADD(hh, stream_by_handle, s.handle, sizeof e->s.handle, e);
}

static void define_fn(void)
{
	uint64_t id = get(), len = get();
	const uint8_t *name = get_bytes(len);
	if (!name || id > 65535)
		return;
	size_t old = nfn;
	fn_names = grow(fn_names, &nfn, id, sizeof *fn_names);
	if (nfn != old) {
		flushes_by_fn = realloc(flushes_by_fn, (nfn + 1) * sizeof *flushes_by_fn);
		memset(flushes_by_fn + old, 0, (nfn + 1 - old) * sizeof *flushes_by_fn);
	}
	fn_names[id] = calloc(len + 1, 1);
	memcpy(fn_names[id], name, len);
}

struct counts {
	uint64_t ops, kernels, copies, sets, events, hostfns, boundaries;
};
static struct counts seen;

static const char *const kind_names[] = {"kernel", "memset", "copy", "record", "hostfn"};
static const char *const copy_names[] = {"htod", "dtoh", "dtod", "unified"};

static void dump_op(const struct ag_call *c)
{
	printf("%10.6f t%zu op %llu %s", (double)now_us / 1e6, thread_now, (unsigned long long)seen.ops,
	       kind_names[c->kind]);
	printf(" stream %p%s", (void *)c->stream, c->per_thread ? " (per-thread)" : "");
	switch (c->kind) {
	case AG_OP_KERNEL: {
		const struct ag_an_kernel *k = ag_an_kernel_of((uintptr_t)c->u.kern.f);
		char q[200];
		const char *name = !k ? "?" : ag_name_qualified(k->name, q, sizeof q) ? q : k->name;
		printf(" %s grid %u,%u,%u block %u,%u,%u shmem %u attrs %u args", name, c->u.kern.grid[0],
		       c->u.kern.grid[1], c->u.kern.grid[2], c->u.kern.block[0], c->u.kern.block[1],
		       c->u.kern.block[2], c->u.kern.shmem, c->u.kern.nattrs);
		for (uint32_t i = 0; k && c->u.kern.params && i < k->nparams; i++) {
			printf(i ? "," : " ");
			const uint8_t *a = c->u.kern.params[i];
			for (unsigned b = k->size[i]; b-- > 0;)
				printf("%02x", a[b]);
		}
		break;
	}
	case AG_OP_MEMSET:
		printf(" dst %llx %zux%zu value %x elem %u", (unsigned long long)c->u.set.dst, c->u.set.width,
		       c->u.set.height, c->u.set.value, c->u.set.elem);
		break;
	case AG_OP_COPY:
		printf(" %s dst %llx src %llx bytes %zu", copy_names[c->api], (unsigned long long)c->u.copy.dst,
		       (unsigned long long)c->u.copy.src, c->u.copy.bytes);
		break;
	case AG_OP_EVENT:
		printf(" event %p", (void *)c->u.event.ev);
		break;
	}
	printf("\n");
}

/* A launch's configuration, attributes and packed arguments, into c. */
static void read_kernel(struct ag_call *c)
{
	static void *params[0x10000];
	static uint8_t args[0x10000];
	static CUlaunchAttribute attrs[64];
	uint64_t ki = get();
	const struct kernel_entry *k = ki && ki - 1 < nkernels ? kernels[ki - 1] : NULL;
	c->u.kern.f = (CUfunction)(k ? k->k.handle : 0);
	for (int i = 0; i < 3; i++)
		c->u.kern.grid[i] = (unsigned)get();
	for (int i = 0; i < 3; i++)
		c->u.kern.block[i] = (unsigned)get();
	c->u.kern.shmem = (unsigned)get();
	uint64_t na = get();
	const uint8_t *a = get_bytes(na * sizeof(CUlaunchAttribute));
	if (a && na <= 64) {
		memcpy(attrs, a, na * sizeof *attrs);
		c->u.kern.attrs = attrs;
		c->u.kern.nattrs = (unsigned)na;
	}
	uint64_t len = get();
	const uint8_t *b = get_bytes(len);
	if (b && len && len <= sizeof args && k) {
		memcpy(args, b, len);
		for (uint32_t i = 0; i < k->k.nparams; i++)
			params[i] = args + k->k.offset[i];
		c->u.kern.params = params;
	}
}

static void replay_op(void)
{
	struct ag_call c = {0};
	c.kind = (unsigned char)get();
	c.api = (unsigned char)get();
	c.per_thread = (unsigned char)get();
	c.stream = stream_handle(get());
	op_status = (CUresult)get();
	switch (c.kind) {
	case AG_OP_KERNEL:
		read_kernel(&c);
		seen.kernels++;
		break;
	case AG_OP_MEMSET:
		c.u.set.dst = get();
		c.u.set.pitch = get();
		c.u.set.width = get();
		c.u.set.height = get();
		c.u.set.value = (unsigned)get();
		c.u.set.elem = (unsigned)get();
		c.u.set.two_d = (unsigned char)get();
		seen.sets++;
		break;
	case AG_OP_COPY:
		c.u.copy.dst = op_dst = get();
		c.u.copy.src = op_src = get();
		c.u.copy.bytes = op_bytes = get();
		op_src_type = op_dst_type = 0;
		if (c.api == AG_COPY_UNIFIED) {
			op_src_type = (unsigned)get();
			op_dst_type = (unsigned)get();
		}
		seen.copies++;
		break;
	case AG_OP_EVENT:
		c.u.event.ev = (CUevent)(uintptr_t)get();
		c.u.event.flags = (unsigned)get();
		c.u.event.with_flags = (unsigned char)get();
		seen.events++;
		break;
	case AG_OP_HOSTFN:
		c.u.host.fn = (CUhostFn)(uintptr_t)get();
		c.u.host.data = (void *)(uintptr_t)get();
		seen.hostfns++;
		break;
	default:
		bad = 1;
	}
	if (bad)
		return;
	seen.ops++;
	if (dump)
		dump_op(&c);
	ag_engine_submit(&c);
	op_status = CUDA_SUCCESS;
	op_src = op_dst = 0;
	op_bytes = 0;
}

static uint64_t held_flushes(void)
{
	struct ag_stats_block sum;
	ag_stats_sum(&sum);
	return sum.scalar[AG_S_FB_BARRIER];
}

/* An ordering call: replayed, and the held work it submitted counted under its caller. */
static void replay_order(int tag)
{
	uint64_t fn = get();
	uint64_t before = held_flushes();
	CUstream s = NULL;
	int pt = 0;
	if (tag == AG_TR_STREAM_OP || tag == AG_TR_SYNC_STREAM || tag == AG_TR_GRAPH_LAUNCH) {
		s = stream_handle(get());
		pt = (int)get();
	} else if (tag == AG_TR_STREAM_DESTROYED) {
		s = stream_handle(get());
	}
	if (bad)
		return;
	seen.boundaries++;
	if (dump)
		printf("%10.6f t%zu %s %s stream %p\n", (double)now_us / 1e6, thread_now,
		       fn && fn <= nfn && fn_names[fn - 1] ? fn_names[fn - 1] : "(unknown function)",
		       tag == AG_TR_BARRIER ? "barrier" : tag == AG_TR_SYNC_STREAM ? "sync" : "boundary",
		       (void *)s);
	switch (tag) {
	case AG_TR_BARRIER:
		ag_engine_barrier();
		break;
	case AG_TR_STREAM_OP:
		ag_engine_stream_op(s, pt);
		break;
	case AG_TR_SYNC_STREAM:
		ag_engine_sync_stream(s, pt);
		ag_engine_sync_done(CUDA_SUCCESS, s, pt);
		break;
	case AG_TR_GRAPH_LAUNCH:
		ag_engine_graph_launch(s, pt);
		break;
	case AG_TR_CAPTURE_BEGIN:
		ag_engine_capture_begin();
		break;
	case AG_TR_FORGET_ALL:
		ag_engine_forget_all();
		break;
	case AG_TR_STREAM_DESTROYED: {
		ag_engine_stream_destroyed(s);
		uintptr_t h = (uintptr_t)s;
		struct stream_entry *e;
		HASH_FIND(hh, stream_by_handle, &h, sizeof h, e);
		if (e)
			HASH_DEL(stream_by_handle, e);
		break;
	}
	}
	uint64_t after = held_flushes();
	if (after > before && flushes_by_fn)
		flushes_by_fn[fn <= nfn ? fn : 0] += after - before;
}

static void replay_value(int tag)
{
	uint64_t a = get(), b = 0;
	if (tag == AG_TR_MEMORY_GONE || tag == AG_TR_EVENT_CREATED || tag == AG_TR_PINNED_ADD)
		b = get();
	if (bad)
		return;
	switch (tag) {
	case AG_TR_CTX_DESTROYED:
		ag_engine_ctx_destroyed((CUcontext)(uintptr_t)a);
		break;
	case AG_TR_CAPTURE_BEGAN:
		ag_engine_capture_began((CUresult)a);
		break;
	case AG_TR_CAPTURE_ENDED:
		ag_engine_capture_ended((CUresult)a);
		break;
	case AG_TR_MEMORY_GONE:
		ag_engine_memory_gone((uintptr_t)a, (uintptr_t)b);
		break;
	case AG_TR_EVENT_CREATED:
		ag_engine_event_created((CUevent)(uintptr_t)a, (unsigned)b);
		break;
	case AG_TR_PINNED_ADD:
		ag_engine_pinned_add((const void *)(uintptr_t)a, (size_t)b);
		break;
	case AG_TR_PINNED_REMOVE:
		ag_engine_pinned_remove((const void *)(uintptr_t)a);
		break;
	case AG_TR_EVENT_DESTROYED:
		ag_engine_event_destroyed((CUevent)(uintptr_t)a);
		break;
	}
}

static uint64_t replay(void)
{
	uint64_t now = 0;
	while (p < end && !bad) {
		int tag = *p++;
		now += get();
		now_us = now;
		thread_now = (size_t)get();
		thread_max = thread_now > thread_max ? thread_now : thread_max;
		if (bad)
			break;
		ag_an_timer_advance(now);
		switch (tag) {
		case AG_TR_FN:
			define_fn();
			break;
		case AG_TR_KERNEL:
			define_kernel();
			break;
		case AG_TR_STREAM:
			define_stream();
			break;
		case AG_TR_CTX:
			ag_an_set_thread_ctx((CUcontext)(uintptr_t)get());
			break;
		case AG_TR_OP:
			replay_op();
			break;
		case AG_TR_BARRIER:
		case AG_TR_STREAM_OP:
		case AG_TR_SYNC_STREAM:
		case AG_TR_GRAPH_LAUNCH:
		case AG_TR_CAPTURE_BEGIN:
		case AG_TR_FORGET_ALL:
		case AG_TR_STREAM_DESTROYED:
			replay_order(tag);
			break;
		case AG_TR_CTX_DESTROYED:
		case AG_TR_CAPTURE_BEGAN:
		case AG_TR_CAPTURE_ENDED:
		case AG_TR_MEMORY_GONE:
		case AG_TR_EVENT_CREATED:
		case AG_TR_PINNED_ADD:
		case AG_TR_PINNED_REMOVE:
		case AG_TR_EVENT_DESTROYED:
			replay_value(tag);
			break;
		case AG_TR_END:
			ended = 1;
			break;
		default:
			bad = 1;
		}
	}
	return now;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	size_t n = strlen(path);
	FILE *f;
	int piped = n > 3 && strcmp(path + n - 3, ".gz") == 0;
	if (piped) {
		char cmd[4200];
		if (strchr(path, '\'') || snprintf(cmd, sizeof cmd, "gzip -dc -- '%s'", path) >= (int)sizeof cmd)
			return NULL;
		f = popen(cmd, "r");
	} else {
		f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	}
	if (!f)
		return NULL;
	size_t cap = 1 << 20, used = 0;
	uint8_t *b = malloc(cap);
	for (size_t r; b && (r = fread(b + used, 1, cap - used, f)) > 0;) {
		used += r;
		if (used == cap)
			b = realloc(b, cap *= 2);
	}
	int failed = piped ? pclose(f) != 0 : (f != stdin && fclose(f) != 0);
	if (failed) {
		free(b);
		return NULL;
	}
	*len = used;
	return b;
}

int main(int argc, char **argv)
{
	dump = argc == 3 && strcmp(argv[1], "--dump") == 0;
	if (dump)
		argv++, argc--;
	if (argc != 2 || argv[1][0] == '\0' || (argv[1][0] == '-' && argv[1][1])) {
		fprintf(stderr, "usage: autograph analyze [--dump] TRACE   (a file AUTOGRAPH_TRACE wrote; "
				".gz is read through gzip; - is standard input; --dump prints every "
				"operation and ordering call first)\n");
		return 2;
	}
	size_t len = 0;
	uint8_t *trace = slurp(argv[1], &len);
	size_t magic = strlen(AG_TRACE_MAGIC);
	if (!trace || len < magic || memcmp(trace, AG_TRACE_MAGIC, magic) != 0) {
		fprintf(stderr, "autograph analyze: %s: %s\n", argv[1],
			trace ? "not an AUTOGRAPH_TRACE file" : "cannot be read");
		return 1;
	}
	ag_opt_load();
	ag_opt.num[AG_OPT_TRACE] = 0; /* the replay writes no trace of its own */
	ag_opt.num[AG_OPT_STATS] = 0;
	ag_engine_callers_wanted = 1; /* the summary says what new segments differed in, as a report would */
	ag_an_driver_init();
	ag_engine_init();
	p = trace + magic;
	end = trace + len;
	struct ag_an_totals t = {0};
	t.us = replay();
	ag_engine_at_exit();
	if (bad)
		fprintf(stderr, "autograph analyze: %s: malformed or cut short at byte %zu; "
				"what came before is analyzed\n", argv[1], (size_t)(p - trace));
	else if (!ended)
		fprintf(stderr, "autograph analyze: %s: cut short (no end record: the process did not "
				"exit normally, or the file is incomplete); what it holds is analyzed\n",
			argv[1]);
	t.ops = seen.ops, t.kernels = seen.kernels, t.copies = seen.copies, t.sets = seen.sets;
	t.events = seen.events, t.hostfns = seen.hostfns, t.boundaries = seen.boundaries;
	t.threads = thread_max;
	t.fn_names = (const char *const *)fn_names;
	t.nfn = nfn;
	t.flushes_by_fn = flushes_by_fn;
	ag_an_summary(argv[1], &t);
	return 0;
}
