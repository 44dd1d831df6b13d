/*
 * Statistics counters: per thread, summed when the report is written. Each
 * thread owns a block (allocated once, on its first counted call, and reused
 * by a later thread after it exits), so counting is a plain add with no shared
 * cache line and no lock, and the totals are exact with any number of threads.
 * A leaf: it knows the entry points and doors only by their numbers
 * (g_hook.h); the report (report.c) gives them names.
 */
#ifndef AG_STATS_H
#define AG_STATS_H

#include <stdint.h>
#include <x86intrin.h>

#include "g_hook.h"

enum ag_stat {
	AG_STAT_NONE, AG_STAT_LAUNCH, AG_STAT_HOSTFN, AG_STAT_GRAPH, AG_STAT_COPY_HTOD,
	AG_STAT_COPY_DTOH, AG_STAT_COPY_DTOD, AG_STAT_COPY, AG_STAT_MEMSET, AG_STAT_EVENT,
	AG_STAT_SYNC, AG_STAT_KINDS
};

enum ag_scalar {
#define AG_STAT(id, key, row, word, help) AG_S_##id,
#define AG_KEY(key, type, help)
#include "stats.def"
#undef AG_KEY
#undef AG_STAT
	AG_S_COUNT
};

/*
 * The library measuring itself, in TSC ticks (the report converts them to time): the
 * wrappers of engine and barrier functions take a tick at entry and exit, and every real
 * driver call the library makes through AG_REAL takes one before and after, so the time
 * inside the library less the driver's own time is known per call. Pass-through wrappers
 * (queries) are not measured: they stay one tail call.
 */
enum ag_ticks {
	AG_T_SELF,          /* ticks in measured wrappers, less the driver calls inside them */
	AG_T_SELF_CALLS,    /* measured wrapper calls */
	AG_T_DRIVER,        /* ticks inside real driver calls, from anywhere in the library */
	AG_T_EAGER,         /* ... of those, in asynchronous stream operations submitted eagerly */
	AG_T_EAGER_OPS,     /* how many such submissions */
	AG_T_GRAPH,         /* ticks in graph launches (the library's and the program's own) */
	AG_T_GRAPH_LAUNCHES,
	AG_T_COUNT
};

/* What a real driver call is, for AG_T_EAGER and AG_T_GRAPH (decided by the generator). */
enum ag_driver_kind { AG_DRIVER_OTHER, AG_DRIVER_EAGER_OP, AG_DRIVER_GRAPH_LAUNCH };

struct ag_stats_block {
	uint64_t calls[AG_FN_COUNT][AG_DOOR_COUNT];
	uint64_t scalar[AG_S_COUNT];
	uint64_t ticks[AG_T_COUNT];
	/* Not a statistic: measured wrappers this thread is inside. Kept here because every
	 * measured wrapper already holds its block. Non-zero at exit means exit() was called
	 * from a signal handler that interrupted a driver call, whose locks (the driver's and
	 * the engine's) may be held: the exit path must not call the driver then. */
	unsigned depth;
	struct ag_stats_block *next_all;
	struct ag_stats_block *next_free;
};

extern __thread struct ag_stats_block *ag_stats_tls __attribute__((tls_model("initial-exec")));

struct ag_stats_block *ag_stats_block_new(void);

static inline struct ag_stats_block *ag_stats_block(void)
{
	struct ag_stats_block *b = ag_stats_tls;
	return __builtin_expect(b != NULL, 1) ? b : ag_stats_block_new();
}

static inline void ag_stats_bump(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

static inline void ag_stats_count_call(int fn, int door)
{
	ag_stats_bump(&ag_stats_block()->calls[fn][door], 1);
}

static inline void ag_stats_add(enum ag_scalar s, uint64_t n)
{
	ag_stats_bump(&ag_stats_block()->scalar[s], n);
}

/* A real driver call of this kind took dt ticks (AG_REAL, driver/real.h). */
static inline void ag_stats_driver_time(enum ag_driver_kind kind, uint64_t dt)
{
	uint64_t *t = ag_stats_block()->ticks;
	ag_stats_bump(&t[AG_T_DRIVER], dt);
	if (kind == AG_DRIVER_EAGER_OP) {
		ag_stats_bump(&t[AG_T_EAGER], dt);
		ag_stats_bump(&t[AG_T_EAGER_OPS], 1);
	} else if (kind == AG_DRIVER_GRAPH_LAUNCH) {
		ag_stats_bump(&t[AG_T_GRAPH], dt);
		ag_stats_bump(&t[AG_T_GRAPH_LAUNCHES], 1);
	}
}

/* True while this thread is inside a measured wrapper (see depth above). Makes no block:
 * a thread that has none never called the driver (and a first block is a first call). */
static inline int ag_stats_in_call(void)
{
	const struct ag_stats_block *b = ag_stats_tls;
	return b && b->depth != 0;
}

/* A measured wrapper ends: it began at tick t0, when the thread's driver total was d0. */
static inline void ag_stats_self(struct ag_stats_block *b, uint64_t t0, uint64_t d0)
{
	uint64_t elapsed = __rdtsc() - t0, driver = b->ticks[AG_T_DRIVER] - d0;
	ag_stats_bump(&b->ticks[AG_T_SELF], elapsed > driver ? elapsed - driver : 0);
	ag_stats_bump(&b->ticks[AG_T_SELF_CALLS], 1);
}

static inline void ag_stats_count_unknown(void)
{
	ag_stats_add(AG_S_UNKNOWN_CALLS, 1);
}

static inline void ag_stats_count_lookup(int door, int known)
{
	ag_stats_add(!known ? AG_S_LOOKUPS_UNKNOWN
			    : door == AG_DOOR_DLSYM ? AG_S_LOOKUPS_DLSYM : AG_S_LOOKUPS_PROC, 1);
}

/* fn is called once, at the first counted call of the process: the moment it is known to
 * use the driver. Set by the library's constructor (autograph.c); when a call was counted
 * already (a library initialized before ours called the driver), fn runs now. */
void ag_stats_on_first_call(void (*fn)(void));

/* The sum of every block that ever counted, into *out. Reads without locks (counts of
 * threads still running may be a moment old), so it may run at exit or in a signal
 * handler. */
void ag_stats_sum(struct ag_stats_block *out);

#endif
