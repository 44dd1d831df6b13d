/*
 * The engine's own data and the calls between its files. A stream's state
 * holds what it observed (history.c writes the ring of recorded operations
 * and the argument arena; detect.c the segment and period state), what it
 * learned (seq.c: sequences, each with its graph and variants from graph.c)
 * and what it holds now (hold.c: the sequence being matched and how far).
 * The stream's lock guards all of it; fields other threads read without the
 * lock are marked "lock-free" and accessed atomically. The hot path touches
 * no other lock.
 */
#ifndef AG_ENGINE_INTERNAL_H
#define AG_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

/* A table that cannot grow is still correct (a key not found is a key not learned):
 * never exit the program over it. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "engine/call.h"
#include "engine/engine.h"
#include "engine/kernels.h"

#define AG_HIST 4096u          /* operations remembered per stream */
#define AG_ARENA (1u << 20)    /* argument bytes remembered per stream */
#define AG_PERIOD_MAX (AG_HIST / 2) /* longest period proposed by a repeated operation */
#define AG_SEGS 256u           /* segment hashes counted per stream, per kind (exact, shape) */
#define AG_VARIANTS 4          /* instantiated graphs per sequence */
#define AG_MAX_ATTRS 8
/* Cooperative launches pass parameters by pointer: op.c rebuilds that array on the stack. */
#define AG_MAX_COOP_PARAMS 256

_Static_assert(AG_HIST > AG_PERIOD_MAX, "a period's last position must still be in the ring");
_Static_assert(AG_HIST >= 2048, "AUTOGRAPH_MAX_OPS (at most 2048) must fit in the history");

#define AG_ALIGN8(n) (((n) + 7) & ~(size_t)7)

/* Combines hashes in order: sequences, segments and runs are hashed this one way. */
static inline uint64_t ag_mix(uint64_t acc, uint64_t h)
{
	return acc ^ (h + 0x9e3779b97f4a7c15ull + (acc << 6) + (acc >> 2));
}

/* Why held work is submitted eagerly (hold.c maps each to its statistic and text). */
enum ag_flush {
	AG_FLUSH_SHAPE,         /* an operation differs from the sequence in shape */
	AG_FLUSH_ARGS,          /* arguments differ and AUTOGRAPH_UPDATE is off, or a copy left device memory */
	AG_FLUSH_BOUNDARY,      /* a barrier, sync, query, wait, teardown, fork or exit */
	AG_FLUSH_TIMEOUT,       /* AUTOGRAPH_FLUSH_US without a new operation */
	AG_FLUSH_LAUNCH_FAILED, /* the graph could not be launched */
	AG_FLUSH_COUNT
};

/* An event record's argument: the event, and which creation under its handle it is
 * (facts.c): a new event under a destroyed one's handle is another argument. Two words,
 * no padding: it is compared with memcmp. */
struct ag_event_arg {
	CUevent ev;
	uint64_t gen;
};

/* One recorded operation; argument bytes and launch attributes live elsewhere. */
struct ag_op {
	struct ag_call call; /* params and extra unused; attrs point at a copy */
	struct ag_kern *k;
	const uint8_t *args;
	uint64_t arena_pos;  /* where args were stored, to know when they are overwritten */
	uint64_t hash;       /* everything that defines the operation */
	uint64_t shape;      /* everything but argument values (kernel arguments, device copy addresses) */
	uint64_t epoch;      /* changes across a boundary (sync, barrier, unrecorded op) */
	uint32_t argbytes;
	struct ag_lastpos *last; /* detect.c: its hash's entry when it was observed */
	uint8_t nodeable;    /* can be a graph node */
	uint8_t failed;      /* its eager submission returned an error */
};

struct ag_variant {
	uint64_t key;        /* full hash of the run it replays */
	CUgraphExec exec;
	uint64_t last_used;
	uint32_t ndirty;     /* nodes whose arguments differ from the sequence's own */
	uint32_t *dirty;
	uint8_t **dirty_args;
};

struct ag_seq {
	struct ag_seq *next;
	unsigned id;
	uint32_t n;
	uint64_t hash;
	uint64_t shape_hash; /* of its operations' shapes */
	CUcontext ctx;
	struct ag_op *ops;
	uint8_t *blob;
	CUgraph graph;
	CUgraphNode *nodes;
	uint32_t nevents;        /* event records among its operations */
	CUevent spare;           /* graph.c: what its executables record while the program's event goes */
	struct ag_variant var[AG_VARIANTS];
	int nvar;
	uint32_t hold_starts, diverges; /* policy.c: runs started and diverged since judged */
	uint32_t replays, instantiations; /* policy.c, graph.c: to see eviction thrash */
	uint32_t timeouts, flushed;      /* policy.c: runs the timer flushed in a row, and since judged */
	uint64_t disabled_until;
	uint32_t backoff;
	const char *why;     /* how detect.c found it (a static string) */
	uint8_t on_shape;    /* a hold may start where only the first operation's shape matches */
	uint8_t replays_accounted; /* account.c counted its replays into its kernels already */
	uint8_t broken;      /* its graph could not be built: never tried again */
	uint8_t reinstantiated; /* policy.c: instantiated again on most replays; no longer graphed */
	uint64_t last_used;
	uint64_t first_hash;             /* key of by_first: ops[0].hash */
	struct ag_seq *same_first;       /* older sequences with the same first operation */
	UT_hash_handle by_first;
};

/*
 * The engine's tables are keyed by 64-bit hashes and never let one key evict
 * another because their hashes share a slot: which hashes collide depends on
 * pointer values, so on where the heap happens to be, and decisions must not
 * (the same program must make the same decisions on every run).
 */
static inline unsigned ag_key_hash(uint64_t key)
{
	return (unsigned)(key ^ (key >> 32));
}

/* The last position of one operation hash within the last AG_PERIOD_MAX operations. */
struct ag_lastpos {
	uint64_t hash, pos;
	struct ag_lastpos *next_free;
	UT_hash_handle hh;
};

/* How often one segment hash was seen; a table of them forgets the least recently seen. */
struct ag_segment {
	uint64_t hash;
	uint32_t count;
	UT_hash_handle hh;
};

struct ag_segment_table {
	struct ag_segment *by_hash; /* in order of last sight, oldest first */
	struct ag_segment *pool;    /* AG_SEGS entries */
	unsigned used;
};

struct ag_stream {
	int lock;            /* see ag_stream_lock() */
	uintptr_t key;
	CUstream handle;     /* CU_STREAM_LEGACY for a context's legacy stream */
	CUcontext ctx;
	uint8_t legacy;
	uint8_t blocking;    /* orders with the legacy stream */
	UT_hash_handle hh;
	struct ag_stream *next_all;

	/* observed (history.c, detect.c) */
	struct ag_op *hist;
	uint8_t *arena;
	uint64_t arena_head;
	struct ag_lastpos *lastpos;      /* pool of AG_PERIOD_MAX + 1 entries */
	struct ag_lastpos *lastpos_by_hash, *lastpos_free;
	unsigned lastpos_used;
	uint64_t observed;   /* operations observed */
	uint64_t gap;        /* no window may start before this position */
	uint64_t period, run;
	uint64_t period_retry; /* a confirmed period waits for its window until this many observed */
	/* policy.c: observed since the last sign of repetition (a hold, a segment or a loop seen
	 * again); operations still to submit unobserved; the last pause (0 after a sign) */
	uint64_t quiet, unobserved, pause;
	uint64_t seg_start, seg_hash, seg_shape, last_epoch, local_epoch;
	uint64_t prev_seg_start, prev_seg_len; /* the last segment that ended (for the report) */
	uint32_t seg_unlearned; /* its operations that could be nodes and went eager unlearned */
	struct ag_segment_table counts_exact, counts_shape;

	/* learned (seq.c) */
	struct ag_seq *seqs;
	struct ag_seq *by_first;         /* sequences by their first operation's hash */

	/* held (hold.c) */
	struct ag_seq *held_seq;         /* the sequence being matched, or NULL */
	uint32_t held_n, ndirty;         /* operations taken so far; how many with new arguments */
	uint64_t run_hash;
	const uint8_t **held;
	uint8_t *dirty;
	uint64_t hold_tick;  /* lock-free: timer tick of the last operation taken into the hold */
	uint64_t hold_epoch; /* the boundary epoch its operations were submitted in */
	int holding;         /* lock-free: held_seq != NULL */
	CUresult pending;    /* lock-free: an error met while flushing, for the next sync */

	/* staged (stage.c) */
	struct ag_stage *stage; /* its arena, valid while the arena's generation is stage_gen */
	unsigned stage_gen;
	int stage_tried;        /* no arena could be had: not asked again until a synchronization */
	int stage_off;          /* its arena filled up between two synchronizations: no more staging */
};

/* stream.c */
struct ag_stream *ag_stream_of(CUstream s, int per_thread, int create);
struct ag_stream *ag_stream_all(void); /* caller holds the registry */
void ag_stream_for_each(void (*fn)(struct ag_stream *, void *), void *arg);
int ag_stream_try_registry(void);
void ag_stream_unlock_registry(void);
void ag_stream_remove(struct ag_stream *st);
/* Unlinks every state of ctx (its streams and legacy stream) into *out, linked by next_all. */
void ag_stream_unlink_ctx(CUcontext ctx, struct ag_stream **out);
/* The stream this thread has locked. initial-exec here as at the definition: a declaration
 * without it makes every other file reach it through __tls_get_addr (two calls an operation,
 * about 30 instructions, in engine.c). */
extern __thread struct ag_stream *ag_stream_locked __attribute__((tls_model("initial-exec")));
/* Held work goes to the stream's context, whichever thread submits it. */
CUcontext ag_stream_enter_ctx(const struct ag_stream *st);
void ag_stream_leave_ctx(const struct ag_stream *st, CUcontext saved);
/*
 * A stream's lock is almost never contended (its own thread takes it once per
 * operation; other threads only to submit held work), so it is a test-and-set
 * word: two atomic instructions, where a mutex costs a call and several more.
 * A waiter spins briefly, then yields, since the holder may be inside a
 * driver call that blocks.
 */
void ag_stream_lock_wait(struct ag_stream *st);

static inline int ag_stream_trylock(struct ag_stream *st)
{
	return !__atomic_exchange_n(&st->lock, 1, __ATOMIC_ACQUIRE);
}

static inline void ag_stream_lock(struct ag_stream *st)
{
	if (!ag_stream_trylock(st))
		ag_stream_lock_wait(st);
}

static inline void ag_stream_unlock(struct ag_stream *st)
{
	__atomic_store_n(&st->lock, 0, __ATOMIC_RELEASE);
}

/* engine.c */
int ag_engine_is_off(void);

/* order.c */
void ag_order_flush_all(enum ag_flush why);
/* ag_engine_barrier and ag_engine_stream_op for the engine's own callers (not traced again). */
void ag_order_barrier(void);
void ag_order_stream_op(CUstream s, int per_thread);
void ag_order_others(const struct ag_stream *st);
void ag_order_flush_at_exit(void);
void ag_order_event_record(const struct ag_call *c);

/* hold.c */
extern int ag_hold_streams; /* streams holding work now */
extern uint64_t ag_hold_begins; /* holds begun, for the timer's idleness */
extern int ag_hold_errors;  /* streams with an error kept for their next sync */
int ag_hold_legacy(void);   /* legacy streams holding work */
int ag_hold_blocking(void); /* blocking streams holding work */
CUresult ag_hold_submit(struct ag_stream *st, const struct ag_call *c, int unified_ok);
void ag_hold_flush(struct ag_stream *st, enum ag_flush why);
CUresult ag_hold_take_error(struct ag_stream *st);
struct ag_kern *ag_hold_kernel_of(const struct ag_call *c);
void ag_hold_after_fork_child(void);

/* policy.c */
void ag_policy_learned(struct ag_seq *seq);
int ag_policy_allows(const struct ag_stream *st, const struct ag_seq *seq);
void ag_policy_diverged(struct ag_stream *st, struct ag_seq *seq);
void ag_policy_timed_out(struct ag_stream *st, struct ag_seq *seq);
void ag_policy_replayed(struct ag_stream *st, struct ag_seq *seq);
void ag_policy_repeating(struct ag_stream *st); /* a sign of repetition: the idle count starts over */
void ag_policy_observed(struct ag_stream *st);  /* one more operation observed: pause when idle */

/* op.c */
void ag_op_describe(struct ag_stream *st, const struct ag_call *c, struct ag_kern *k,
		    int unified_ok, struct ag_op *op);
int ag_op_pack(struct ag_stream *st, const struct ag_call *c, const struct ag_kern *k,
	       struct ag_op *op);
uint64_t ag_op_args_hash(const struct ag_op *op, const uint8_t *args);
int ag_op_event_pack(struct ag_stream *st, const struct ag_event_arg *a, struct ag_op *op);
/* The event an event record's argument bytes name. */
CUevent ag_op_event(const uint8_t *args);

/* The bytes a copy or memset touches, on either side, overlap [lo, hi). */
int ag_op_touches(const struct ag_op *op, uintptr_t lo, uintptr_t hi);
CUresult ag_op_submit(const struct ag_op *op, const uint8_t *args);

/* copy.c. A copy's arguments: dst, src and bytes, as they lie in struct ag_call. */
#define AG_COPY_ARGS sizeof(((struct ag_call *)0)->u.copy)
int ag_copy_pack(struct ag_stream *st, const struct ag_call *c, struct ag_op *op);
int ag_copy_same_args(const struct ag_call *c, const uint8_t *args);
/* The driver would accept the copy's addresses now: device memory, or page-locked host memory. */
int ag_copy_addresses_ok(const struct ag_call *c);
int ag_copy_unified_nodeable(const struct ag_call *c);
/* Inside one device allocation, not managed: a synchronous copy or set there does not wait. */
int ag_copy_device_only(CUdeviceptr p, size_t n);

/* history.c */
int ag_history_alloc(struct ag_stream *st);
void ag_history_free(struct ag_stream *st);
uint8_t *ag_arena_alloc(struct ag_stream *st, size_t n, uint64_t *pos);
int ag_arena_alive(const struct ag_stream *st, const struct ag_op *op);
/* The slot the next observed operation is described into, then committed (detect.c). */
struct ag_op *ag_history_next(struct ag_stream *st);
uint64_t ag_history_epoch_of(const struct ag_stream *st);
void ag_history_boundary(struct ag_stream *st);
void ag_history_boundary_all(void);
void ag_history_gap(struct ag_stream *st);
/* A held operation submitted eagerly by a flush, observed in order; ag_detect_commit follows. */
void ag_history_observe_held(struct ag_stream *st, const struct ag_op *recorded, const uint8_t *args,
			     uint64_t epoch, int failed);
/* Memory went away: observed operations that touch it are never learned. */
void ag_history_forget_touching(struct ag_stream *st, uintptr_t lo, uintptr_t hi);

/* detect.c */
void ag_detect_commit(struct ag_stream *st);
/* A boundary before the next operation ends the segment being observed. */
void ag_detect_epoch(struct ag_stream *st, uint64_t epoch);
void ag_detect_reset(struct ag_stream *st);
void ag_detect_hold_starts(struct ag_stream *st);

/* seq.c */
/* on_shape: its runs' first operations differ in arguments, so a hold starts on the shape. */
void ag_seq_learn(struct ag_stream *st, uint64_t first, uint32_t n, const char *why, int on_shape);
/* The newest sequence whose first operation has this hash; older ones follow same_first. */
struct ag_seq *ag_seq_first(struct ag_stream *st, uint64_t hash);
void ag_seq_forget_all(struct ag_stream *st);
void ag_seq_forget_touching(struct ag_stream *st, uintptr_t lo, uintptr_t hi);

/* ledger.c: what became of each learned sequence, kept after it is freed */
struct ag_ledger_entry; /* engine.h */
void ag_ledger_describe(const struct ag_stream *st, const struct ag_seq *s, struct ag_ledger_entry *e);
void ag_ledger_retire(const struct ag_stream *st, const struct ag_seq *s);
/* Every sequence, freed ones first; returns how many freed ones gave way to others. */
unsigned long long ag_ledger_each(void (*fn)(const struct ag_ledger_entry *, void *), void *arg);

/* graph.c */
int ag_graph_build(struct ag_seq *seq, CUcontext ctx);
struct ag_variant *ag_graph_variant(struct ag_stream *st, struct ag_seq *seq);
void ag_graph_destroy(struct ag_seq *seq);
void ag_graph_make_room(void);
void ag_graph_event_destroying(const struct ag_stream *st, struct ag_seq *seq, CUevent ev);
extern unsigned ag_graph_count;
extern unsigned ag_graph_event_seqs; /* sequences with a graph and event records: 0 skips the scan */

/* facts.c */
/* 1 (and *out set) if ev exists without timing: only then may a graph's node record it. */
int ag_facts_event_arg(CUevent ev, struct ag_event_arg *out);
/* The destroyed event's entry goes. */
void ag_facts_event_forget(CUevent ev);
/* The library's own page-locked memory (stage.c): not in the trace, which records the program's. */
void ag_facts_pinned_add(const void *p, size_t bytes);
size_t ag_facts_pinned_remove(const void *p);

/* stage.c: async copies from and to pageable memory go through library page-locked memory.
 * ag_stage_copy: 1 if *out is the call with its host side staged (the stream is locked);
 * ag_stage_copy_out: a staged device-to-host copy was submitted: waits, copies it out. */
int ag_stage_copy(struct ag_stream *st, const struct ag_call *c, struct ag_call *out);
CUresult ag_stage_copy_out(struct ag_stream *st, const struct ag_call *c, const struct ag_call *staged,
			   CUresult rc);
void ag_stage_sync_begin(struct ag_stream *st); /* a call that waits for the stream begins */
void ag_stage_sync_done(struct ag_stream *st);  /* ... and found its work complete */
void ag_stage_release(struct ag_stream *st);    /* the stream's state goes */
int ag_stage_began(void);                       /* some stream asked for an arena */
int ag_stage_retired(void);                     /* arenas wait for a context synchronize */
void ag_stage_ctx_idle(CUcontext ctx);          /* a context synchronize succeeded */
void ag_stage_ctx_gone(CUcontext ctx);          /* NULL: a primary context, which one not known */
void ag_stage_after_fork_child(void);
extern void *(*ag_stage_read)(void *, const void *, size_t);

/* trace.c (AUTOGRAPH_TRACE): records what the front door is asked; see trace.h */
extern int ag_trace_active;
void ag_trace_open(void);
void ag_trace_close(void);
void ag_trace_after_fork_child(void);
void ag_trace_op(const struct ag_call *c, CUresult rc);
void ag_trace_order(int tag, CUstream s, int per_thread);
void ag_trace_values(int tag, uint64_t a, uint64_t b, int count);

/* account.c: where operations went, for AUTOGRAPH_REPORT */
void ag_account_eager(struct ag_stream *st, const struct ag_op *op);
void ag_account_unobserved(struct ag_kern *k); /* k: the launch's kernel, or NULL */
/* The segment's unlearned operations (st->seg_unlearned) are counted under why. */
void ag_account_segment(struct ag_stream *st, enum ag_unlearned why);
/* The segment [st->seg_start, + len) ended, its shapes seen shape_count times: its unlearned
 * operations are counted by what it was (new, and then what first differed from the stream's
 * previous segment; warming up; otherwise elsewhere). */
void ag_account_segment_ended(struct ag_stream *st, uint64_t len, unsigned shape_count);
void ag_account_flushed(const struct ag_stream *st, enum ag_flush why);
enum ag_diverge_field ag_account_diverged(const struct ag_op *expected, const struct ag_call *c);
void ag_account_replays(const struct ag_seq *s); /* once per sequence, when it is retired */

/* watchdog.c */
extern uint64_t ag_watchdog_tick;
extern int ag_watchdog_running; /* holding is allowed only while the timer runs */
int ag_watchdog_start(void);    /* 0 if the thread could not be created */
void ag_watchdog_wake(void);    /* a hold began: the timer must tick */

#endif
