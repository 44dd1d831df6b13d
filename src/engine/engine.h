/*
 * What the hook layer asks of the engine. Every stream operation the engine
 * records arrives through ag_engine_submit(); everything else that touches
 * stream order arrives as one of the ordering calls below, which submit held
 * work that the call could observe before the call itself is forwarded.
 */
#ifndef AG_ENGINE_H
#define AG_ENGINE_H

#include "engine/call.h"
#include <cuda.h>

/*
 * Which driver function the ordering call that follows comes from, for the
 * AUTOGRAPH_TRACE and AUTOGRAPH_REPORT files: the generated wrappers say it
 * (an enum ag_fn value) before they call the engine; it costs one test while
 * neither is written.
 */
extern int ag_engine_callers_wanted; /* a trace or a report is written, or the analyzer runs */
extern __thread int ag_trace_caller __attribute__((tls_model("initial-exec")));
static inline void ag_engine_caller(int fn)
{
	if (__builtin_expect(ag_engine_callers_wanted, 0))
		ag_trace_caller = fn + 1;
}

/* A recordable operation: held, replayed or forwarded; returns the caller's status. */
CUresult ag_engine_submit(const struct ag_call *c);

/* A barrier-class call (one the engine does not understand, an unknown function among
 * them), or a call that waits for all work, a context or an event. */
void ag_engine_barrier(void);

/* An operation on stream s that the engine does not record. */
void ag_engine_stream_op(CUstream s, int per_thread);

/* The program launches its own graph on stream s. */
void ag_engine_graph_launch(CUstream s, int per_thread);

/* A call that waits for stream s. */
void ag_engine_sync_stream(CUstream s, int per_thread);

/* After a waiting call: an error that eager submission of held work met is reported here. */
CUresult ag_engine_sync_done(CUresult rc, CUstream s, int per_thread);

/* The program's own stream capture starts (before the call, then with its status) or ends
 * (with the call's status): the engine stands aside meanwhile. The *_began/_ended calls
 * return rc. */
void ag_engine_capture_begin(void);
CUresult ag_engine_capture_began(CUresult rc);
CUresult ag_engine_capture_ended(CUresult rc);

/* Memory goes away: held work first, then sequences that copy or set there are dropped. */
void ag_engine_memory_gone(uintptr_t lo, uintptr_t hi);
void ag_engine_device_free(CUdeviceptr p);

/* Handles that recorded work may refer to are going away. */
void ag_engine_forget_all(void);

/* A context is destroyed (handles its work referred to go too); NULL: a primary context
 * is reset, and which one is not known. */
void ag_engine_ctx_destroyed(CUcontext ctx);

/* Every status the driver returns to the program passes here: a device fault stops holding. */
CUresult ag_engine_status(CUresult rc);

/* A primary context's last reference was released (handles were forgotten before the call):
 * its stream states go, as for a destroyed context. */
void ag_engine_ctx_released(CUcontext ctx);

/* A stream is destroyed. */
void ag_engine_stream_destroyed(CUstream s);

/* Event flags (timing events cannot be graph nodes) and page-locked host ranges. */
void ag_engine_event_created(CUevent ev, unsigned flags);
/* The event is gone: its entry goes (a later event may get its handle, and is another
 * argument of the records that name it). The caller has submitted held work first. */
void ag_engine_event_destroyed(CUevent ev);
/* The program is about to destroy the event (held work was submitted): graph nodes that
 * record it are pointed elsewhere while the event still exists (graph.c says why). */
void ag_engine_event_destroying(CUevent ev);
void ag_engine_pinned_add(const void *p, size_t bytes);
size_t ag_engine_pinned_remove(const void *p); /* the range's size, 0 if none */
int ag_engine_pinned(const void *p, size_t bytes);

/* Something the engine cannot observe will run from now on (a driver function handed out
 * unwrapped): held work is submitted and nothing is held for the rest of the process. */
void ag_engine_stand_aside(void);

/* AUTOGRAPH_REPORT (process/explain.c): what became of the program's operations. Sequences
 * still alive are counted into their kernels' replays first. */
enum ag_diverge_field {
	AG_DIV_KIND, AG_DIV_KERNEL, AG_DIV_GRID, AG_DIV_BLOCK, AG_DIV_SHMEM, AG_DIV_OTHER,
	AG_DIV_LENGTH /* segments only: a different number of operations */
};
extern const char *const ag_diverge_field_names[AG_DIV_LENGTH + 1];
void ag_engine_explain_prepare(void);
/* Held work submitted because of each driver function's calls, by enum ag_fn value. */
const uint64_t *ag_engine_flushes_by_fn(void);
const uint64_t *ag_engine_diverged_fields(void);
/* Operations other than launches that stayed eager, by why. */
enum ag_eager_other {
	AG_EAGER_TO_PAGEABLE,     /* a device-to-host copy to pageable memory */
	AG_EAGER_FROM_PAGEABLE,   /* a host-to-device copy from memory not page-locked, not staged */
	AG_EAGER_UNIFIED_PAGEABLE, /* a unified-address copy with a pageable side */
	AG_EAGER_TIMING_EVENT,    /* a record of an event with timing, or an interprocess one */
	AG_EAGER_NOT_A_NODE,      /* anything else that cannot be a graph node */
	AG_EAGER_NO_SEQUENCE,     /* could be a node, but no learned sequence held it */
	AG_EAGER_OTHER_COUNT
};
const uint64_t *ag_engine_eager_others(void);
/* Operations that could be nodes and were in no learned sequence, by the segment (the run
 * between two boundaries) they were in, decided when it ended; and every operation a stream
 * submitted while it was not observed, which the engine did not look at. */
enum ag_unlearned {
	AG_UNL_FIRST_SEEN, /* the segment's shapes had not been seen before */
	AG_UNL_SHORT,      /* fewer operations than AUTOGRAPH_MIN_OPS */
	AG_UNL_WARMING,    /* seen before, not yet learned: at most AUTOGRAPH_WARMUP + 1 sightings */
	AG_UNL_OTHER,      /* a loop's period not yet confirmed, a sequence set aside, open at exit */
	AG_UNL_UNOBSERVED, /* submitted while the stream was not observed (AUTOGRAPH_IDLE_OPS) */
	AG_UNL_COUNT
};
extern const char *const ag_unlearned_keys[AG_UNL_COUNT], *const ag_unlearned_texts[AG_UNL_COUNT];
const uint64_t *ag_engine_unlearned(void);
/* Segments seen for the first time, by the field of their first operation that differed from
 * the stream's previous segment (AG_DIV_LENGTH: the two differ in length). */
const uint64_t *ag_engine_first_seen_fields(void);
/* What became of one learned sequence (engine/ledger.c). */
struct ag_ledger_entry {
	unsigned id;
	uint32_t n, replays, instantiations;
	uint32_t kernels, others, top_launches; /* distinct kernels; other operations; launches of kernel */
	const char *why;  /* how it was learned */
	const char *fate; /* what became of it */
	char kernel[128]; /* the kernel it launches most, demangled */
};
/* Every sequence, freed ones first; returns how many freed ones gave way to others. */
unsigned long long ag_engine_sequences(void (*fn)(const struct ag_ledger_entry *, void *), void *arg);

/* Process lifecycle (autograph.c). */
void ag_engine_init(void);
/* The process's first driver call (the trace file is opened here, not at load). */
void ag_engine_first_driver_call(void);
void ag_engine_at_exit(void);
void ag_engine_before_fork(void);
void ag_engine_after_fork_child(void);

#endif
