/*
 * The exit report: the top of the library, reading the counters (stats.h),
 * the entry points' names and categories (hook.h), the kernel table and the
 * options. Everything is said once, through the emitter, which writes text or
 * JSON. Static buffers and no allocation, because it runs from the library
 * destructor and from the SIGTERM/SIGINT handler (signals.c).
 */
#include "process/report.h"

#include <dlfcn.h>
#include <x86intrin.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "driver/real.h"
#include "emit.h"
#include "engine/kernels.h"
#include "hook/hook.h"
#include "log.h"
#include "pathfmt.h"
#include "stats.h"

#define STAT_VERSION 2
#define TOP_KERNELS 10

static const struct {
	const char *key, *row, *word;
} scalar[AG_S_COUNT] = {
#define AG_STAT(id, key, row, word, help) {key, row, word},
#define AG_KEY(key, type, help)
#include "stats.def"
#undef AG_KEY
#undef AG_STAT
};

static const char *const door_key[AG_DOOR_COUNT] = {
	[AG_DOOR_LINK] = "link", [AG_DOOR_DLSYM] = "dlsym", [AG_DOOR_PROC] = "cuGetProcAddress"};

static char start_time[32];
static uint64_t start_tsc, start_ns; /* so that ticks (stats.h) can be told in time */

static uint64_t monotonic_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void ag_report_init(void)
{
	struct timespec now;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &now);
	if (gmtime_r(&now.tv_sec, &tm))
		strftime(start_time, sizeof start_time, "%Y-%m-%dT%H:%M:%SZ", &tm);
	start_ns = monotonic_ns();
	start_tsc = __rdtsc();
}

/* The counters summed, and what the report derives from them. */
static struct ag_stats_block sum;
static struct {
	uint64_t by_stat[AG_STAT_KINDS];
	uint64_t by_door[AG_DOOR_COUNT];
	uint64_t htod, dtoh, dtod, other;
} derived;

static void add_up(void)
{
	ag_stats_sum(&sum);
	memset(&derived, 0, sizeof derived);
	for (int f = 0; f < AG_FN_COUNT; f++)
		for (int d = 0; d < AG_DOOR_COUNT; d++) {
			derived.by_stat[ag_hook_fns[f].stat] += sum.calls[f][d];
			derived.by_door[d] += sum.calls[f][d];
		}
	const uint64_t *s = sum.scalar, *k = derived.by_stat;
	uint64_t unified = s[AG_S_COPY_HTOD_RT] + s[AG_S_COPY_DTOH_RT] + s[AG_S_COPY_DTOD_RT];
	derived.htod = k[AG_STAT_COPY_HTOD] + s[AG_S_COPY_HTOD_RT];
	derived.dtoh = k[AG_STAT_COPY_DTOH] + s[AG_S_COPY_DTOH_RT];
	derived.dtod = k[AG_STAT_COPY_DTOD] + s[AG_S_COPY_DTOD_RT];
	derived.other = k[AG_STAT_COPY] > unified ? k[AG_STAT_COPY] - unified : 0;
}

/* The driver's version, if the driver is loaded. Outside a signal handler that is asked
 * first even where a door learned the function: the program may have closed the driver
 * (cudart does when its initialization failed), and the pointer would lead into unmapped
 * memory. In a signal handler only a pointer some door already learned is used: asking
 * takes the dynamic loader's lock, which the interrupted thread may hold. Not asked at all
 * when exit() interrupted this thread inside a driver call, whose locks the driver may
 * hold (stats.h, depth). */
static int driver_version(int in_signal, int *v)
{
	if (ag_stats_in_call())
		return 0;
	void *fn = __atomic_load_n(&ag_real_fn[AG_FN_cuDriverGetVersion], __ATOMIC_ACQUIRE);
	if (!in_signal) {
		void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (!h)
			return 0;
		dlclose(h);
		if (!fn)
			fn = ag_real_get(AG_FN_cuDriverGetVersion);
	}
	return fn && ((ag_pfn_cuDriverGetVersion)fn)(v) == CUDA_SUCCESS;
}

static void emit_argv(struct ag_emit *e)
{
	static char cmd[4096];
	ssize_t n = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, cmd, sizeof cmd);
		close(fd);
	}
	ag_emit_array(e, "argv", 1);
	for (ssize_t i = 0; i < n;) {
		size_t len = strnlen(cmd + i, (size_t)(n - i));
		ag_emit_strn(e, NULL, cmd + i, len);
		i += (ssize_t)len + 1;
	}
	ag_emit_close(e);
}

static void emit_meta(struct ag_emit *e, const char *how, int in_signal)
{
	int v;
	ag_emit_line(e, "autograph: statistics (pid %d, library %s)", (int)getpid(),
		     ag_opt.num[AG_OPT_ENABLE] ? "on" : "off: pass-through");
	ag_emit_int(e, "stat_version", NULL, STAT_VERSION);
	ag_emit_str(e, "library_version", AG_VERSION);
	ag_emit_int(e, "cuda_headers", NULL, CUDA_VERSION);
	if (driver_version(in_signal, &v))
		ag_emit_int(e, "driver_version", NULL, v);
	else
		ag_emit_null(e, "driver_version");
	ag_emit_int(e, "pid", NULL, (long)getpid());
	emit_argv(e);
	ag_emit_str(e, "start_time", start_time);
	ag_emit_str(e, "end", how);
	ag_emit_object(e, "options", 0);
	for (int id = 0; id < AG_OPT_COUNT; id++) {
		char buf[32];
		ag_emit_str(e, ag_opt_table[id].env, ag_opt_shown((enum ag_opt_id)id, buf, sizeof buf));
	}
	ag_emit_close(e);
	ag_emit_int(e, "enabled", NULL, ag_opt.num[AG_OPT_ENABLE]);
}

static void emit_totals(struct ag_emit *e)
{
	const uint64_t *k = derived.by_stat;
	ag_emit_row(e, "kernel launches");
	ag_emit_u64(e, "launches", "", k[AG_STAT_LAUNCH]);
	ag_emit_u64(e, "kernels_distinct", "distinct kernels", ag_kern_distinct());
	ag_emit_u64(e, "host_functions", "host functions", k[AG_STAT_HOSTFN]);
	ag_emit_u64(e, "graph_launches", "graph launches", k[AG_STAT_GRAPH]);
	ag_emit_row(e, "copies");
	ag_emit_object(e, "copies", 1);
	ag_emit_u64(e, "htod", "htod", derived.htod);
	ag_emit_u64(e, "dtoh", "dtoh", derived.dtoh);
	ag_emit_u64(e, "dtod", "dtod", derived.dtod);
	ag_emit_u64(e, "other", "other", derived.other);
	ag_emit_close(e);
	ag_emit_u64(e, "memsets", "memsets", k[AG_STAT_MEMSET]);
	ag_emit_row(e, "synchronizations");
	ag_emit_u64(e, "syncs", "", k[AG_STAT_SYNC]);
	ag_emit_u64(e, "event_records", "event records", k[AG_STAT_EVENT]);
	ag_emit_row(e, "calls by door");
	ag_emit_object(e, "calls_by_door", 1);
	for (int d = 0; d < AG_DOOR_COUNT; d++)
		ag_emit_u64(e, door_key[d], door_key[d], derived.by_door[d]);
	ag_emit_close(e);
}

/* The counters of stats.def, a text row per run of rows with the same row label. */
static void emit_counters(struct ag_emit *e)
{
	for (int s = 0; s < AG_S_COUNT; s++) {
		if (s == 0 || strcmp(scalar[s].row, scalar[s - 1].row) != 0)
			ag_emit_row(e, scalar[s].row);
		ag_emit_u64(e, scalar[s].key, scalar[s].word, sum.scalar[s]);
	}
	uint64_t replayed = sum.scalar[AG_S_OPS_REPLAYED], replays = sum.scalar[AG_S_REPLAYS];
	ag_emit_row(e, "launches saved");
	ag_emit_u64(e, "launches_saved", "", replayed > replays ? replayed - replays : 0);
}

/* What the library cost and bought, from its own measurements (stats.h): nanoseconds per
 * TSC tick from the ticks and the clock since the library was loaded. */
static void emit_self(struct ag_emit *e)
{
	const uint64_t *t = sum.ticks, *k = derived.by_stat;
	uint64_t ns = monotonic_ns() - start_ns, ticks = __rdtsc() - start_tsc;
	double ns_per_tick = ticks ? (double)ns / (double)ticks : 0;
	double eager = t[AG_T_EAGER_OPS] ? t[AG_T_EAGER] * ns_per_tick / t[AG_T_EAGER_OPS] : 0;
	double graph = t[AG_T_GRAPH_LAUNCHES] ? t[AG_T_GRAPH] * ns_per_tick / t[AG_T_GRAPH_LAUNCHES] : 0;
	double saved = eager ? sum.scalar[AG_S_OPS_REPLAYED] * eager - sum.scalar[AG_S_REPLAYS] * graph : 0;
	uint64_t ops = k[AG_STAT_LAUNCH] + k[AG_STAT_HOSTFN] + k[AG_STAT_MEMSET] + k[AG_STAT_EVENT] +
		       derived.htod + derived.dtoh + derived.dtod + derived.other;
	ag_emit_row(e, "self-measurement");
	ag_emit_u64(e, "self_ns_per_call", "ns in the library per call",
		    t[AG_T_SELF_CALLS] ? (uint64_t)(t[AG_T_SELF] * ns_per_tick / t[AG_T_SELF_CALLS]) : 0);
	ag_emit_u64(e, "self_calls", "calls measured", t[AG_T_SELF_CALLS]);
	ag_emit_u64(e, "self_ns", "ns in all", (uint64_t)(t[AG_T_SELF] * ns_per_tick));
	ag_emit_u64(e, "driver_ns", "ns in the driver", (uint64_t)(t[AG_T_DRIVER] * ns_per_tick));
	ag_emit_row(e, "savings");
	ag_emit_u64(e, "eager_ns_per_op", "ns per eager operation", (uint64_t)eager);
	ag_emit_u64(e, "graph_launch_ns", "ns per graph launch", (uint64_t)graph);
	ag_emit_int(e, "launch_time_saved_ns", "ns of launch time saved", (long)saved);
	ag_emit_ratio(e, "replayed_share", "of operations replayed",
		      ops ? (double)sum.scalar[AG_S_OPS_REPLAYED] / (double)ops : 0);
}

static void emit_kernels(struct ag_emit *e)
{
	const struct ag_kern *top[TOP_KERNELS];
	size_t ntop = ag_kern_top(top, TOP_KERNELS);
	ag_emit_array(e, "top_kernels", 0);
	for (size_t i = 0; i < ntop; i++) {
		ag_emit_row(e, i ? "" : "top kernels");
		ag_emit_object(e, NULL, 1);
		ag_emit_str(e, "name", top[i]->name);
		ag_emit_u64(e, "launches", top[i]->name,
			    __atomic_load_n(&top[i]->launches, __ATOMIC_RELAXED));
		ag_emit_close(e);
	}
	ag_emit_close(e);
	ag_emit_object(e, "calls", 0);
	for (int f = 0; f < AG_FN_COUNT; f++) {
		const uint64_t *n = sum.calls[f];
		uint64_t any = 0;
		for (int d = 0; d < AG_DOOR_COUNT; d++)
			any |= n[d];
		if (!any)
			continue;
		ag_emit_object(e, ag_hook_fns[f].name, 1);
		for (int d = 0; d < AG_DOOR_COUNT; d++)
			ag_emit_u64(e, door_key[d], NULL, n[d]);
		ag_emit_close(e);
	}
	ag_emit_close(e);
}

/*
 * Written once. A second caller waits until the first has finished: `timeout`
 * signals a program twice (the process, then its group), the second signal
 * reaches another thread, and that thread's handler must not let the process
 * die while the first is still writing (seen on the H200: an empty file).
 * Bounded, so that a writer that cannot finish does not hang the exit.
 */
enum { REPORT_IDLE, REPORT_WRITING, REPORT_DONE };
static int report_state;

static void wait_for_writer(void)
{
	struct timespec ms = {0, 1000000};
	for (int i = 0; i < 2000 && __atomic_load_n(&report_state, __ATOMIC_ACQUIRE) == REPORT_WRITING; i++)
		nanosleep(&ms, NULL);
}

static void write_once(const char *how, int in_signal);

void ag_report_write(const char *how, int in_signal)
{
	int idle = REPORT_IDLE;
	if (ag_opt.num[AG_OPT_STATS] == 0)
		return;
	if (!__atomic_compare_exchange_n(&report_state, &idle, REPORT_WRITING, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		wait_for_writer();
		return;
	}
	write_once(how, in_signal);
	__atomic_store_n(&report_state, REPORT_DONE, __ATOMIC_RELEASE);
}

static void write_once(const char *how, int in_signal)
{
	add_up();
	/* A process that never reached the driver (a shell, timeout, a launcher) has nothing to say,
	 * and must not overwrite the file of the program it ran. */
	uint64_t calls = 0;
	for (int d = 0; d < AG_DOOR_COUNT; d++)
		calls |= derived.by_door[d];
	if (!calls)
		return;
	static struct ag_emit e;
	int fd = 2, json = ag_opt.num[AG_OPT_STATS] == 2;
	if (json) {
		char path[4096];
		if (ag_path_expand(ag_opt.text[AG_OPT_STATS], path, sizeof path) != 0) {
			ag_log_msg(AG_LOG_ERROR, "cannot write statistics: %s expands to more than %zu bytes",
				   ag_opt.text[AG_OPT_STATS], sizeof path - 1);
			return;
		}
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			ag_log_msg(AG_LOG_ERROR, "cannot write statistics to %s", path);
			return;
		}
	}
	ag_emit_begin(&e, fd, json);
	emit_meta(&e, how, in_signal);
	emit_totals(&e);
	emit_counters(&e);
	emit_self(&e);
	emit_kernels(&e);
	ag_emit_end(&e);
	if (fd != 2)
		close(fd);
}
