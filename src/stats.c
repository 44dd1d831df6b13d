/*
 * Per-thread counter blocks and the exit report. Blocks are linked into one
 * list that is never shortened, so the report sums every thread that ever
 * counted; a thread's block goes onto a free list when it exits and the next
 * new thread adopts it, counts and all, which keeps totals exact while memory
 * stays bounded by the most threads alive at once. The report formats into a
 * fixed buffer (no allocation at exit) as text on stderr or JSON in a file.
 */
#include "stats.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "engine/kernels.h"
#include "hook/hook.h"
#include "log.h"

__thread struct ag_stats_block *ag_stats_tls __attribute__((tls_model("initial-exec")));

static struct ag_stats_block *all_blocks;
static struct ag_stats_block *free_blocks;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *p)
{
	struct ag_stats_block *b = p;
	pthread_mutex_lock(&free_lock);
	b->next_free = free_blocks;
	free_blocks = b;
	pthread_mutex_unlock(&free_lock);
}

static void make_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
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
			static struct ag_stats_block overflow;
			return &overflow;
		}
		b->next_all = __atomic_load_n(&all_blocks, __ATOMIC_ACQUIRE);
		while (!__atomic_compare_exchange_n(&all_blocks, &b->next_all, b, 1, __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE))
			;
	}
	ag_stats_tls = b;
	pthread_setspecific(exit_key, b);
	return b;
}

void ag_stats_count_lookup(int door, int known)
{
	if (!known)
		ag_stats_add(AG_S_LOOKUPS_UNKNOWN, 1);
	else
		ag_stats_add(door == AG_DOOR_DLSYM ? AG_S_LOOKUPS_DLSYM : AG_S_LOOKUPS_PROC, 1);
}

static const char *const scalar_key[AG_S_COUNT] = {
#define AG_STAT(id, key, help) key,
#include "stats.def"
#undef AG_STAT
};

static const char *const door_key[AG_DOOR_COUNT] = {"link", "dlsym", "cuGetProcAddress"};

static struct {
	uint64_t calls[AG_FN_COUNT][AG_DOOR_COUNT];
	uint64_t scalar[AG_S_COUNT];
	uint64_t by_stat[AG_STAT_SYNC + 1];
	uint64_t by_door[AG_DOOR_COUNT];
} sum;

static void add_up(void)
{
	memset(&sum, 0, sizeof sum);
	for (struct ag_stats_block *b = __atomic_load_n(&all_blocks, __ATOMIC_ACQUIRE); b;
	     b = b->next_all) {
		for (int f = 0; f < AG_FN_COUNT; f++)
			for (int d = 0; d < AG_DOOR_COUNT; d++) {
				uint64_t n = __atomic_load_n(&b->calls[f][d], __ATOMIC_RELAXED);
				sum.calls[f][d] += n;
				sum.by_stat[ag_hook_fns[f].stat] += n;
				sum.by_door[d] += n;
			}
		for (int s = 0; s < AG_S_COUNT; s++)
			sum.scalar[s] += __atomic_load_n(&b->scalar[s], __ATOMIC_RELAXED);
	}
}

/* One output sink for both formats: a fixed buffer drained to a descriptor. */
struct out {
	int fd;
	size_t len;
	char buf[8192];
};

static void out_flush(struct out *o)
{
	size_t done = 0;
	while (done < o->len) {
		ssize_t w = write(o->fd, o->buf + done, o->len - done);
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	o->len = 0;
}

__attribute__((format(printf, 2, 3))) static void out_printf(struct out *o, const char *fmt, ...)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(o->buf + o->len, sizeof o->buf - o->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < sizeof o->buf - o->len) {
			o->len += (size_t)n;
			return;
		}
		out_flush(o);
	}
}

/* Kernel names come from the driver: escape what JSON needs escaped. */
static void out_json_string(struct out *o, const char *s)
{
	out_printf(o, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			out_printf(o, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			out_printf(o, "\\u%04x", (unsigned char)*s);
		else
			out_printf(o, "%c", *s);
	}
	out_printf(o, "\"");
}

struct derived {
	uint64_t htod, dtoh, dtod, other;
};

static struct derived copies(void)
{
	struct derived c;
	uint64_t rt = sum.scalar[AG_S_COPY_HTOD_RT] + sum.scalar[AG_S_COPY_DTOH_RT] +
		      sum.scalar[AG_S_COPY_DTOD_RT];
	c.htod = sum.by_stat[AG_STAT_COPY_HTOD] + sum.scalar[AG_S_COPY_HTOD_RT];
	c.dtoh = sum.by_stat[AG_STAT_COPY_DTOH] + sum.scalar[AG_S_COPY_DTOH_RT];
	c.dtod = sum.by_stat[AG_STAT_COPY_DTOD] + sum.scalar[AG_S_COPY_DTOD_RT];
	c.other = sum.by_stat[AG_STAT_COPY] > rt ? sum.by_stat[AG_STAT_COPY] - rt : 0;
	return c;
}

#define TOP_KERNELS 10

static void report_json(struct out *o)
{
	struct derived c = copies();
	out_printf(o, "{\n  \"stat_version\": 1,\n  \"enabled\": %ld,\n", ag_opt.num[AG_OPT_ENABLE]);
	out_printf(o, "  \"launches\": %llu,\n  \"host_functions\": %llu,\n  \"graph_launches\": %llu,\n",
		   (unsigned long long)sum.by_stat[AG_STAT_LAUNCH],
		   (unsigned long long)sum.by_stat[AG_STAT_HOSTFN],
		   (unsigned long long)sum.by_stat[AG_STAT_GRAPH]);
	out_printf(o, "  \"event_records\": %llu,\n  \"memsets\": %llu,\n  \"syncs\": %llu,\n",
		   (unsigned long long)sum.by_stat[AG_STAT_EVENT],
		   (unsigned long long)sum.by_stat[AG_STAT_MEMSET],
		   (unsigned long long)sum.by_stat[AG_STAT_SYNC]);
	out_printf(o, "  \"copies\": {\"htod\": %llu, \"dtoh\": %llu, \"dtod\": %llu, \"other\": %llu},\n",
		   (unsigned long long)c.htod, (unsigned long long)c.dtoh,
		   (unsigned long long)c.dtod, (unsigned long long)c.other);
	out_printf(o, "  \"calls_by_door\": {");
	for (int d = 0; d < AG_DOOR_COUNT; d++)
		out_printf(o, "%s\"%s\": %llu", d ? ", " : "", door_key[d],
			   (unsigned long long)sum.by_door[d]);
	out_printf(o, "},\n");
	for (int s = 0; s < AG_S_COUNT; s++)
		out_printf(o, "  \"%s\": %llu,\n", scalar_key[s], (unsigned long long)sum.scalar[s]);
	out_printf(o, "  \"launches_saved\": %llu,\n",
		   (unsigned long long)(sum.scalar[AG_S_OPS_REPLAYED] > sum.scalar[AG_S_REPLAYS]
						? sum.scalar[AG_S_OPS_REPLAYED] - sum.scalar[AG_S_REPLAYS]
						: 0));
	const struct ag_kern *top[TOP_KERNELS];
	size_t ntop = ag_kern_top(top, TOP_KERNELS);
	out_printf(o, "  \"kernels_distinct\": %zu,\n  \"top_kernels\": [", ag_kern_distinct());
	for (size_t i = 0; i < ntop; i++) {
		out_printf(o, "%s{\"name\": ", i ? ", " : "");
		out_json_string(o, top[i]->name);
		out_printf(o, ", \"launches\": %llu}",
			   (unsigned long long)__atomic_load_n(&top[i]->launches, __ATOMIC_RELAXED));
	}
	out_printf(o, "],\n  \"calls\": {");
	int first = 1;
	for (int f = 0; f < AG_FN_COUNT; f++) {
		const uint64_t *n = sum.calls[f];
		if (!(n[0] | n[1] | n[2]))
			continue;
		out_printf(o, "%s\n    \"%s\": {\"link\": %llu, \"dlsym\": %llu, \"cuGetProcAddress\": %llu}",
			   first ? "" : ",", ag_hook_fns[f].name, (unsigned long long)n[0],
			   (unsigned long long)n[1], (unsigned long long)n[2]);
		first = 0;
	}
	out_printf(o, "\n  }\n}\n");
}

static void report_text(struct out *o)
{
	struct derived c = copies();
	out_printf(o, "autograph: statistics (pid %d, library %s)\n", (int)getpid(),
		   ag_opt.num[AG_OPT_ENABLE] ? "on" : "off: pass-through");
	out_printf(o, "autograph:   kernel launches   %llu (%zu distinct kernels), host functions %llu, graph launches %llu\n",
		   (unsigned long long)sum.by_stat[AG_STAT_LAUNCH], ag_kern_distinct(),
		   (unsigned long long)sum.by_stat[AG_STAT_HOSTFN],
		   (unsigned long long)sum.by_stat[AG_STAT_GRAPH]);
	out_printf(o, "autograph:   copies            htod %llu, dtoh %llu, dtod %llu, other %llu; memsets %llu\n",
		   (unsigned long long)c.htod, (unsigned long long)c.dtoh,
		   (unsigned long long)c.dtod, (unsigned long long)c.other,
		   (unsigned long long)sum.by_stat[AG_STAT_MEMSET]);
	out_printf(o, "autograph:   synchronizations  %llu, event records %llu\n",
		   (unsigned long long)sum.by_stat[AG_STAT_SYNC],
		   (unsigned long long)sum.by_stat[AG_STAT_EVENT]);
	out_printf(o, "autograph:   calls by door     link %llu, dlsym %llu, cuGetProcAddress %llu; unknown functions %llu\n",
		   (unsigned long long)sum.by_door[AG_DOOR_LINK],
		   (unsigned long long)sum.by_door[AG_DOOR_DLSYM],
		   (unsigned long long)sum.by_door[AG_DOOR_PROC],
		   (unsigned long long)sum.scalar[AG_S_UNKNOWN_CALLS]);
	out_printf(o, "autograph:   graphs            %llu sequences, %llu built, %llu replays, %llu ops replayed, %llu ops eager, %llu updates, %llu evictions\n",
		   (unsigned long long)sum.scalar[AG_S_SEQUENCES],
		   (unsigned long long)sum.scalar[AG_S_GRAPHS_BUILT],
		   (unsigned long long)sum.scalar[AG_S_REPLAYS],
		   (unsigned long long)sum.scalar[AG_S_OPS_REPLAYED],
		   (unsigned long long)sum.scalar[AG_S_OPS_EAGER],
		   (unsigned long long)sum.scalar[AG_S_UPDATES],
		   (unsigned long long)sum.scalar[AG_S_EVICTIONS]);
	out_printf(o, "autograph:   fallbacks        ");
	for (int s = AG_S_FB_SHAPE; s <= AG_S_FB_EXCLUDED; s++)
		if (sum.scalar[s])
			out_printf(o, " %s %llu", scalar_key[s] + 9, (unsigned long long)sum.scalar[s]);
	out_printf(o, "\n");
	const struct ag_kern *top[TOP_KERNELS];
	size_t ntop = ag_kern_top(top, TOP_KERNELS);
	for (size_t i = 0; i < ntop; i++)
		out_printf(o, "autograph:   %-17s %llu %s\n", i ? "" : "top kernels",
			   (unsigned long long)__atomic_load_n(&top[i]->launches, __ATOMIC_RELAXED),
			   top[i]->name);
}

/* "%p" in the path becomes the process id, as in nsys and compute-sanitizer. */
static void expand_path(const char *in, char *out, size_t len)
{
	size_t n = 0;
	for (; *in && n + 1 < len; in++) {
		if (in[0] == '%' && in[1] == 'p') {
			n += (size_t)snprintf(out + n, len - n, "%d", (int)getpid());
			in++;
		} else {
			out[n++] = *in;
		}
	}
	out[n < len ? n : len - 1] = '\0';
}

void ag_stats_report(void)
{
	static int done;
	if (ag_opt.num[AG_OPT_STATS] == 0 || __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	add_up();
	/* A process that never reached the driver (a shell, timeout, a launcher) has nothing to say,
	 * and must not overwrite the file of the program it ran. */
	if (!(sum.by_door[AG_DOOR_LINK] | sum.by_door[AG_DOOR_DLSYM] | sum.by_door[AG_DOOR_PROC]))
		return;
	static struct out o;
	if (ag_opt.num[AG_OPT_STATS] == 1) {
		o.fd = 2;
		report_text(&o);
	} else {
		char path[4096];
		expand_path(ag_opt.text[AG_OPT_STATS], path, sizeof path);
		o.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (o.fd < 0) {
			ag_log_msg(AG_LOG_ERROR, "cannot write statistics to %s", path);
			return;
		}
		report_json(&o);
	}
	out_flush(&o);
	if (o.fd != 2)
		close(o.fd);
}
