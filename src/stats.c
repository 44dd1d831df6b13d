/*
 * Per-thread counter blocks. Blocks are linked into one list that is never
 * shortened, so a sum covers every thread that ever counted; a thread's block
 * goes onto a free list when it exits and the next new thread adopts it,
 * counts and all, which keeps totals exact while memory stays bounded by the
 * most threads alive at once. Each block also carries its thread's sampler for
 * the self-measurement (stats.h), seeded alike so that every run samples the
 * same calls, and the cost of one clock read is measured here once.
 */
#include "stats.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

__thread struct ag_stats_block *ag_stats_tls __attribute__((tls_model("initial-exec")));
static void (*first_call_fn)(void);

static struct ag_stats_block *all_blocks;
static struct ag_stats_block *free_blocks;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int first_call_done;
uint64_t ag_stats_stamp;

#define SAMPLER_SEED 0x2545f491u

static void thread_exit(void *p)
{
	struct ag_stats_block *b = p;
	pthread_mutex_lock(&free_lock);
	b->next_free = free_blocks;
	free_blocks = b;
	pthread_mutex_unlock(&free_lock);
}

/* The fewest ticks between two reads in a row: a sample's own cost, never overstated. */
static void measure_stamp(void)
{
	uint64_t least = UINT64_MAX;
	for (int i = 0; i < 64; i++) {
		uint64_t a = __rdtsc(), b = __rdtsc();
		if (b - a < least)
			least = b - a;
	}
	ag_stats_stamp = least;
}

static void make_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
	measure_stamp();
}

/* The gap to the next sample: 1 to 2 x AG_STATS_SAMPLE_MEAN - 1 calls, evenly. */
void ag_stats_sample_next(struct ag_stats_block *b)
{
	uint32_t x = b->sampler;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	b->sampler = x;
	b->until_sample = 1 + x % (2 * AG_STATS_SAMPLE_MEAN - 1);
}

/* A thread's first counted call lands here, so the process's first one does too. */
static void first_call(void)
{
	void (*fn)(void) = __atomic_load_n(&first_call_fn, __ATOMIC_ACQUIRE);
	if (fn && !__atomic_exchange_n(&first_call_done, 1, __ATOMIC_ACQ_REL))
		fn();
}

void ag_stats_on_first_call(void (*fn)(void))
{
	__atomic_store_n(&first_call_fn, fn, __ATOMIC_RELEASE);
	if (__atomic_load_n(&all_blocks, __ATOMIC_ACQUIRE))
		first_call();
}

struct ag_stats_block *ag_stats_block_new(void)
{
	pthread_once(&key_once, make_key);
	pthread_mutex_lock(&free_lock);
	struct ag_stats_block *b = free_blocks;
	if (b)
		free_blocks = b->next_free;
	pthread_mutex_unlock(&free_lock);
	if (!b) {
		b = calloc(1, sizeof *b);
		if (!b) {
			static struct ag_stats_block overflow; /* shared, counts only: never sampled */
			return &overflow;
		}
		b->until_sample = 1; /* a thread's first call is sampled */
		b->sampler = SAMPLER_SEED;
		b->next_all = __atomic_load_n(&all_blocks, __ATOMIC_ACQUIRE);
		while (!__atomic_compare_exchange_n(&all_blocks, &b->next_all, b, 1, __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE))
			;
	}
	ag_stats_tls = b;
	pthread_setspecific(exit_key, b);
	first_call();
	return b;
}

void ag_stats_sum(struct ag_stats_block *out)
{
	memset(out, 0, sizeof *out);
	for (struct ag_stats_block *b = __atomic_load_n(&all_blocks, __ATOMIC_ACQUIRE); b;
	     b = b->next_all) {
		for (int f = 0; f < AG_FN_COUNT; f++)
			for (int d = 0; d < AG_DOOR_COUNT; d++)
				out->calls[f][d] += __atomic_load_n(&b->calls[f][d], __ATOMIC_RELAXED);
		for (int s = 0; s < AG_S_COUNT; s++)
			out->scalar[s] += __atomic_load_n(&b->scalar[s], __ATOMIC_RELAXED);
		for (int t = 0; t < AG_T_COUNT; t++)
			out->ticks[t] += __atomic_load_n(&b->ticks[t], __ATOMIC_RELAXED);
	}
}
