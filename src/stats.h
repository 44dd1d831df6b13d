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
 * The library measuring itself, in TSC ticks (the report converts them to time). A
 * time-stamp read costs about as much as a short wrapper's whole work, so calls are
 * sampled: about one engine or barrier wrapper call in 16 (AG_STATS_SAMPLE_MEAN), at
 * pseudo-random places so that no loop of the program lines up with them, and the same
 * places on every run. A sampled wrapper takes a tick at entry and exit, and every real
 * driver call the library makes inside it (AG_REAL) one before and after, so the time
 * inside the library less the driver's own time is known for that call; each sample is
 * taken less the cost of its own reads, measured once per process (ag_stats_stamp), so it
 * estimates the calls that were not sampled. Calls not sampled read no clock. Pass-through
 * wrappers (queries) are never measured: they stay one tail call.
 */
enum ag_ticks {
	AG_T_SELF,          /* ticks in sampled wrappers, less the driver calls inside them */
	AG_T_SELF_CALLS,    /* sampled wrapper calls */
	AG_T_DRIVER,        /* ticks inside timed real driver calls (those inside sampled wrappers) */
	AG_T_DRIVER_CALLS,  /* timed real driver calls */
	AG_T_EAGER,         /* ... of those, in asynchronous stream operations submitted eagerly */
	AG_T_EAGER_OPS,     /* how many such submissions */
	AG_T_GRAPH,         /* ticks in graph launches (the library's and the program's own) */
	AG_T_GRAPH_LAUNCHES,
	AG_T_COUNT
};

#ifndef AG_STATS_SAMPLE_MEAN
#define AG_STATS_SAMPLE_MEAN 16 /* a build may set another, 1 for every call */
#endif

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
	unsigned timing;       /* sampled wrappers this thread is inside: its driver calls are timed */
	uint32_t until_sample; /* measured wrapper calls until the next sampled one, this included */
	uint32_t sampler;      /* the sampler's state (xorshift32): the same places on every run */
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

/* Ticks one time-stamp read costs, measured when the first block is made (stats.c). */
extern uint64_t ag_stats_stamp;

/* True if this thread is inside a sampled wrapper: a real driver call is timed then. */
static inline int ag_stats_timing(void)
{
	const struct ag_stats_block *b = ag_stats_tls;
	return __builtin_expect(b && b->timing, 0);
}

/* A timed real driver call of this kind took dt ticks, one read's cost included (AG_REAL). */
static inline void ag_stats_driver_time(enum ag_driver_kind kind, uint64_t dt)
{
	uint64_t *t = ag_stats_tls->ticks;
	dt = dt > ag_stats_stamp ? dt - ag_stats_stamp : 0;
	ag_stats_bump(&t[AG_T_DRIVER], dt);
	ag_stats_bump(&t[AG_T_DRIVER_CALLS], 1);
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

/* A measured wrapper's clock: t0 is 0 unless the call is sampled. */
struct ag_stats_clock {
	uint64_t t0, d0, k0;
};

void ag_stats_sample_next(struct ag_stats_block *b);

/* A measured wrapper begins: sampled or not (see enum ag_ticks). */
static inline void ag_stats_clock_in(struct ag_stats_block *b, struct ag_stats_clock *c)
{
	c->t0 = 0;
	if (__builtin_expect(--b->until_sample != 0, 1))
		return;
	ag_stats_sample_next(b);
	b->timing++;
	c->d0 = b->ticks[AG_T_DRIVER];
	c->k0 = b->ticks[AG_T_DRIVER_CALLS];
	c->t0 = __rdtsc();
}

/* A measured wrapper ends. A sample with k timed driver calls in it read the clock 2k + 2
 * times; the driver's times are already less one read each, and the span from the first
 * read to the last holds 2k + 1 more. */
static inline void ag_stats_clock_out(struct ag_stats_block *b, const struct ag_stats_clock *c)
{
	if (__builtin_expect(!c->t0, 1))
		return;
	uint64_t elapsed = __rdtsc() - c->t0;
	b->timing--;
	uint64_t k = b->ticks[AG_T_DRIVER_CALLS] - c->k0;
	uint64_t other = b->ticks[AG_T_DRIVER] - c->d0 + (2 * k + 1) * ag_stats_stamp;
	ag_stats_bump(&b->ticks[AG_T_SELF], elapsed > other ? elapsed - other : 0);
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
