/*
 * autograph compare: did the library help this program? Runs the program once to
 * warm up (without the library; that run's timing is not counted), then N pairs
 * of runs, one without ("plain") and one with the library, the side that goes
 * first alternating from pair to pair, so that drift and the slow first run after
 * a pause hit both sides alike.
 *
 * DESIGN
 * - Per side: the median, the range (min-max) and the median absolute deviation
 *   (MAD, the median of |x - median|) of the wall time and of the optional
 *   metric (the first capture group of --metric REGEX on the last line of stdout
 *   that matches it).
 * - The verdict is "spread too large to conclude" when the two sides' ranges
 *   overlap. When they do not, every run of one side beat every run of the
 *   other; if both sides came from one distribution, the chance of that with 5
 *   runs a side is 2 / C(10,5) = 1 in 126.
 * - The share of operations replayed comes from the library's own statistics:
 *   the library side runs with AUTOGRAPH_STATS=<temporary dir>/r<run>-%p.json,
 *   so every process of the run (Python workers too) leaves its counters.
 * - stdout is captured and compared: a line that differs between the plain
 *   runs themselves (the warm-up counts as one) or that --metric matches is
 *   not compared; any other difference on the library side is reported with
 *   the first differing line, as is a differing exit status. Exit status 1
 *   then, so that scripts can use compare as a differential test.
 * - stdin is /dev/null (the program runs 2N+1 times); stderr is passed through.
 * - Ctrl-C or SIGTERM reaches the program (same process group) and is noted
 *   here; once the run ends, the temporary statistics are removed and compare
 *   exits 128 + the signal's number, as a shell would report it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include "launcher.h"
#include "log.h"
#include "statfile.h"

enum side { PLAIN, LIBRARY };
static const char *const side_name[] = {"plain", "library"};

/* The stream operations a graph can hold; ops_replayed is counted against their sum. */
static const char *const op_counters[] = {"launches",    "event_records", "memsets",
					  "host_functions", "copies.htod", "copies.dtoh",
					  "copies.dtod", "copies.other"};

struct run {
	enum side side;
	int pair; /* 0 for the warm-up, 1..N */
	double wall_s;
	int status; /* exit code, or 128 + signal */
	char *out;  /* stdout, NUL-terminated */
	int has_metric;
	double metric;
	int stats_files; /* library side: statistics files found */
	long long ops, ops_replayed, replays, graphs_built;
};

struct options {
	int n;
	const char *metric_text, *json_path;
	regex_t metric;
	const char *value[AG_OPT_COUNT];
	char **argv; /* the program and its arguments */
	char lib[PATH_MAX];
	char stats_dir[PATH_MAX];
};

/* The signal that asked compare to stop, 0 if none: set by on_signal(), read between runs. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void fatal_errno(const char *what)
{
	ag_log_msg(AG_LOG_ERROR, "compare: %s: %s", what, strerror(errno));
	exit(AG_EXIT_CANNOT_RUN);
}

/* ---- the command line ------------------------------------------------------------------- */

static void parse(int argc, char **argv, struct options *o)
{
	o->n = 5;
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			printf("%s\nSee autograph --help for the options and what is printed.\n",
			       ag_compare_usage_line);
			exit(0);
		}
		if (strcmp(a, "-n") == 0 || strcmp(a, "--metric") == 0 || strcmp(a, "--json") == 0) {
			if (i + 1 >= argc)
				ag_launch_usage_error("compare: this option needs a value: ", a);
			const char *v = argv[++i];
			if (a[1] == 'n') {
				char *end;
				errno = 0;
				long n = strtol(v, &end, 10);
				if (errno || end == v || *end || n < 1 || n > 1000) {
					ag_log_msg(AG_LOG_ERROR, "compare: -n %s is not valid: expected "
						   "a whole number of runs a side, 1 to 1000", v);
					exit(AG_EXIT_USAGE);
				}
				o->n = (int)n;
			} else if (a[2] == 'm') {
				o->metric_text = v;
			} else {
				o->json_path = v;
			}
			continue;
		}
		int before = i;
		if (!ag_launch_option(argc, argv, &i, o->value))
			ag_launch_usage_error("compare: unknown option ", a);
		if (o->value[AG_OPT_STATS])
			ag_launch_usage_error("compare: sets AUTOGRAPH_STATS itself; drop ", argv[before]);
	}
	if (i >= argc)
		ag_launch_usage_error("compare: no program given; ", ag_compare_usage_line);
	o->argv = argv + i;

	if (o->metric_text) {
		int rc = regcomp(&o->metric, o->metric_text, REG_EXTENDED);
		if (rc != 0) {
			char why[160];
			regerror(rc, &o->metric, why, sizeof why);
			ag_log_msg(AG_LOG_ERROR, "compare: --metric %s is not valid: %s (expected a "
				   "POSIX extended regular expression with one capture group)",
				   o->metric_text, why);
			exit(AG_EXIT_USAGE);
		}
		if (o->metric.re_nsub < 1) {
			ag_log_msg(AG_LOG_ERROR, "compare: --metric %s has no capture group: expected "
				   "one around the number, e.g. 'step=([0-9.]+) us'", o->metric_text);
			exit(AG_EXIT_USAGE);
		}
	}
}

/* ---- one run ---------------------------------------------------------------------------- */

/* Reads fd to its end into a NUL-terminated buffer. */
static char *slurp(int fd)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf)
			fatal_errno("reading the program's output");
		if (len + 1 >= cap) {
			char *more = realloc(buf, cap *= 2);
			if (!more)
				free(buf);
			buf = more;
			continue;
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fatal_errno("reading the program's output");
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return buf;
}

/* Child side of a run: environment, stdin and stdout, exec. Reports exec's errno on errfd. */
static void child(const struct options *o, enum side side, int index, int outfd, int errfd)
{
	if (side == LIBRARY) {
		char *preload = ag_launch_preload_value(o->lib, getenv("LD_PRELOAD"));
		setenv("LD_PRELOAD", preload, 1);
		for (int id = 0; id < AG_OPT_COUNT; id++)
			if (o->value[id])
				setenv(ag_opt_table[id].env, o->value[id], 1);
		char path[PATH_MAX + 32];
		snprintf(path, sizeof path, "%s/r%d-%%p.json", o->stats_dir, index);
		setenv(ag_opt_table[AG_OPT_STATS].env, path, 1);
	}
	int null = open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, 0) < 0 || dup2(outfd, 1) < 0)
		_exit(AG_EXIT_CANNOT_RUN);
	execvp(o->argv[0], o->argv);
	int err = errno;
	if (write(errfd, &err, sizeof err) != (ssize_t)sizeof err)
		_exit(AG_EXIT_CANNOT_RUN);
	_exit(err == ENOENT ? AG_EXIT_NOT_FOUND : AG_EXIT_CANNOT_RUN);
}

/* Removes the temporary statistics directory and whatever is left in it. */
static void remove_stats_dir(const struct options *o)
{
	DIR *d = opendir(o->stats_dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			char path[PATH_MAX + 256];
			snprintf(path, sizeof path, "%s/%s", o->stats_dir, e->d_name);
			if (e->d_name[0] != '.')
				unlink(path);
		}
		closedir(d);
	}
	rmdir(o->stats_dir);
}

/* Sums the counters of every statistics file run index left, and removes them. */
static void read_stats(const struct options *o, int index, struct run *r)
{
	char prefix[32];
	snprintf(prefix, sizeof prefix, "r%d-", index);
	DIR *d = opendir(o->stats_dir);
	if (!d)
		fatal_errno(o->stats_dir);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		char path[PATH_MAX + 256];
		snprintf(path, sizeof path, "%s/%s", o->stats_dir, e->d_name);
		struct ag_statfile st;
		if (ag_statfile_read(path, &st) != 0) {
			ag_log_msg(AG_LOG_WARN, "compare: cannot read the statistics file %s; "
				   "its counters are left out", path);
		} else {
			r->stats_files++;
			for (size_t k = 0; k < sizeof op_counters / sizeof op_counters[0]; k++)
				r->ops += ag_statfile_get(&st, op_counters[k]);
			r->ops_replayed += ag_statfile_get(&st, "ops_replayed");
			r->replays += ag_statfile_get(&st, "replays");
			r->graphs_built += ag_statfile_get(&st, "graphs_built");
		}
		unlink(path);
	}
	closedir(d);
}

/* The metric of one run's stdout: group 1 of the last line the regex matches. */
static void find_metric(const struct options *o, struct run *r)
{
	if (!o->metric_text)
		return;
	for (char *line = r->out; *line;) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char save = line[len];
		line[len] = '\0';
		regmatch_t m[2];
		if (regexec(&o->metric, line, 2, m, 0) == 0 && m[1].rm_so >= 0) {
			char num[64];
			int n = (int)(m[1].rm_eo - m[1].rm_so);
			snprintf(num, sizeof num, "%.*s", n < 63 ? n : 63, line + m[1].rm_so);
			char *end;
			double v = strtod(num, &end);
			r->has_metric = end != num && *end == '\0' && isfinite(v);
			r->metric = v;
		}
		line[len] = save;
		line += len + (nl != NULL);
	}
}

static void run_once(const struct options *o, enum side side, int index, int pair, struct run *r)
{
	memset(r, 0, sizeof *r);
	r->side = side;
	r->pair = pair;
	int out[2], err[2];
	if (pipe(out) != 0 || pipe2(err, O_CLOEXEC) != 0)
		fatal_errno("pipe");
	fflush(NULL);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid < 0)
		fatal_errno("fork");
	if (pid == 0) {
		close(out[0]);
		close(err[0]);
		child(o, side, index, out[1], err[1]);
	}
	close(out[1]);
	close(err[1]);
	r->out = slurp(out[0]);
	close(out[0]);
	int wstatus;
	while (waitpid(pid, &wstatus, 0) < 0)
		if (errno != EINTR)
			fatal_errno("waitpid");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int exec_errno;
	if (read(err[0], &exec_errno, sizeof exec_errno) == (ssize_t)sizeof exec_errno) {
		ag_log_msg(AG_LOG_ERROR, "compare: cannot run %s: %s", o->argv[0], strerror(exec_errno));
		exit(exec_errno == ENOENT ? AG_EXIT_NOT_FOUND : AG_EXIT_CANNOT_RUN);
	}
	close(err[0]);
	r->wall_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	r->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	find_metric(o, r);
	if (side == LIBRARY)
		read_stats(o, index, r);
	if (stop_signal) {
		remove_stats_dir(o);
		ag_log_msg(AG_LOG_ERROR, "compare: stopped by signal %d (%s) after %s run %d; nothing "
			   "summarized", (int)stop_signal, strsignal(stop_signal),
			   pair ? side_name[side] : "the warm-up", pair);
		exit(128 + stop_signal);
	}
	if (isatty(2))
		ag_log_msg(AG_LOG_INFO, "compare: %s %d: %.3f s, exit status %d",
			   pair ? side_name[side] : "warm-up", pair, r->wall_s, r->status);
}

/* ---- summaries -------------------------------------------------------------------------- */

struct spread {
	int count;
	double median, min, max, mad;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The spread of the wall time (metric 0) or the metric (1) of one side's counted runs. */
static struct spread spread_of(const struct run *runs, int nruns, enum side side, int metric)
{
	struct spread s = {0};
	double v[2000];
	for (int i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		if (r->pair == 0 || r->side != side || (metric && !r->has_metric))
			continue;
		v[s.count++] = metric ? r->metric : r->wall_s;
	}
	if (s.count == 0)
		return s;
	s.median = median_of(v, s.count);
	s.min = v[0];
	s.max = v[s.count - 1];
	for (int i = 0; i < s.count; i++)
		v[i] = fabs(v[i] - s.median);
	s.mad = median_of(v, s.count);
	return s;
}

/* "library lower", "library higher" or the inconclusive sentence; NULL without both sides. */
static const char *verdict(const struct spread *plain, const struct spread *lib)
{
	if (!plain->count || !lib->count)
		return NULL;
	if (lib->max < plain->min)
		return "library lower";
	if (lib->min > plain->max)
		return "library higher";
	return "spread too large to conclude";
}

/* ---- the outputs ------------------------------------------------------------------------ */

struct lines {
	int count;
	char **line;
};

static struct lines split(const char *text)
{
	struct lines l = {0, NULL};
	int cap = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (l.count == cap) {
			cap = cap ? 2 * cap : 64;
			char **more = realloc(l.line, (size_t)cap * sizeof *more);
			if (!more)
				fatal_errno("comparing outputs");
			l.line = more;
		}
		l.line[l.count] = strndup(p, len);
		if (!l.line[l.count++])
			fatal_errno("comparing outputs");
		p += len + (nl != NULL);
	}
	return l;
}

static void free_lines(struct lines *l)
{
	for (int i = 0; i < l->count; i++)
		free(l->line[i]);
	free(l->line);
}

struct diff {
	int plain_varies;     /* the plain runs' line counts differ: nothing compared */
	int compared, skipped; /* lines compared, lines left out (vary or match --metric) */
	int differs;          /* a library run's output differs */
	int run;              /* its index in runs[] */
	int line;             /* 1-based */
	char *plain_line, *lib_line; /* NULL where that side has no such line */
	int status_differs, plain_status, lib_status;
};

static void compare_outputs(const struct options *o, const struct run *runs, int nruns,
			    struct diff *d)
{
	memset(d, 0, sizeof *d);
	struct lines ref = split(runs[0].out); /* the warm-up: a plain run */
	char *skip = calloc((size_t)ref.count + 1, 1);
	if (!skip)
		fatal_errno("comparing outputs");
	for (int i = 1; i < nruns && !d->plain_varies; i++) {
		if (runs[i].side != PLAIN)
			continue;
		struct lines l = split(runs[i].out);
		if (l.count != ref.count)
			d->plain_varies = 1;
		for (int k = 0; k < l.count && k < ref.count; k++)
			skip[k] |= strcmp(l.line[k], ref.line[k]) != 0;
		free_lines(&l);
	}
	for (int k = 0; k < ref.count && o->metric_text; k++)
		skip[k] |= regexec(&o->metric, ref.line[k], 0, NULL, 0) == 0;
	for (int k = 0; k < ref.count; k++)
		d->skipped += skip[k];
	d->compared = d->plain_varies ? 0 : ref.count - d->skipped;

	d->plain_status = runs[0].status;
	for (int i = 1; i < nruns; i++) {
		const struct run *r = &runs[i];
		if (r->side == LIBRARY && r->status != runs[0].status && !d->status_differs) {
			d->status_differs = 1;
			d->lib_status = r->status;
		}
		if (r->side != LIBRARY || d->plain_varies || d->differs)
			continue;
		struct lines l = split(r->out);
		int n = l.count > ref.count ? l.count : ref.count;
		for (int k = 0; k < n; k++) {
			int in_ref = k < ref.count, in_lib = k < l.count;
			if (in_ref && in_lib && (skip[k] || strcmp(ref.line[k], l.line[k]) == 0))
				continue;
			d->differs = 1;
			d->run = i;
			d->line = k + 1;
			d->plain_line = in_ref ? strdup(ref.line[k]) : NULL;
			d->lib_line = in_lib ? strdup(l.line[k]) : NULL;
			break;
		}
		free_lines(&l);
	}
	free(skip);
	free_lines(&ref);
}

/* ---- the report ------------------------------------------------------------------------- */

static void print_spread_row(const char *what, const char *side, const struct spread *s)
{
	if (!s->count) {
		printf("| %s | %s | - | - | - | 0 |\n", what, side);
		return;
	}
	printf("| %s | %s | %.5g | %.5g-%.5g | %.3g | %d |\n", what, side, s->median, s->min,
	       s->max, s->mad, s->count);
}

static void print_verdict(const char *what, const struct spread *plain, const struct spread *lib)
{
	const char *v = verdict(plain, lib);
	if (!v) {
		printf("%s: not found in the output of %s\n", what,
		       !plain->count && !lib->count ? "either side" :
		       !plain->count ? "the plain runs" : "the library runs");
		return;
	}
	if (plain->median == 0) {
		printf("%s: %s (the plain median is 0: no ratio)\n", what, v);
		return;
	}
	printf("%s: library/plain = %.4g (medians): %s%s\n", what, lib->median / plain->median, v,
	       strcmp(v, "spread too large to conclude") == 0 ? " (the two ranges overlap)" :
								 " (the two ranges do not overlap)");
}

static void print_report(const struct options *o, const struct run *runs, int nruns,
			 const struct diff *d)
{
	struct spread wall[2] = {spread_of(runs, nruns, PLAIN, 0), spread_of(runs, nruns, LIBRARY, 0)};
	struct spread met[2] = {spread_of(runs, nruns, PLAIN, 1), spread_of(runs, nruns, LIBRARY, 1)};
	printf("autograph compare: %d runs a side after 1 warm-up, alternating which side goes first\n\n",
	       o->n);
	printf("| quantity | side | median | min-max | MAD | runs |\n|---|---|---:|---:|---:|---:|\n");
	print_spread_row("wall time (s)", "plain", &wall[PLAIN]);
	print_spread_row("wall time (s)", "library", &wall[LIBRARY]);
	if (o->metric_text) {
		print_spread_row("metric", "plain", &met[PLAIN]);
		print_spread_row("metric", "library", &met[LIBRARY]);
	}
	printf("\n");
	print_verdict("wall time", &wall[PLAIN], &wall[LIBRARY]);
	if (o->metric_text)
		print_verdict("metric", &met[PLAIN], &met[LIBRARY]);

	long long ops = 0, replayed = 0, replays = 0, graphs = 0;
	int files = 0;
	for (int i = 0; i < nruns; i++) {
		ops += runs[i].ops;
		replayed += runs[i].ops_replayed;
		replays += runs[i].replays;
		graphs += runs[i].graphs_built;
		files += runs[i].stats_files;
	}
	if (!files)
		printf("replayed: no statistics were written (the program made no CUDA driver calls?)\n");
	else
		printf("replayed: %.1f%% of the library side's stream operations (%lld in %d runs; "
		       "%lld graph launches, %lld graphs built)\n",
		       ops ? 100.0 * (double)replayed / (double)ops : 0.0, ops, o->n, replays, graphs);

	if (d->plain_varies)
		printf("output: not compared: the number of lines differs between the plain runs\n");
	else if (d->differs)
		printf("output: WARNING: differs on the library side (pair %d), line %d:\n"
		       "  plain:   %s\n  library: %s\n",
		       runs[d->run].pair, d->line,
		       d->plain_line ? d->plain_line : "(no such line)",
		       d->lib_line ? d->lib_line : "(no such line)");
	else
		printf("output: the same on both sides (%d lines compared, %d left out: they vary "
		       "between plain runs or match --metric)\n",
		       d->compared, d->skipped);
	if (d->status_differs)
		printf("exit status: WARNING: plain %d, library %d\n", d->plain_status, d->lib_status);
	else
		printf("exit status: %d on both sides\n", d->plain_status);
}

/* ---- --json ----------------------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void json_spread(FILE *f, const char *name, const struct spread s[2], const char *last)
{
	fprintf(f, "  \"%s\": {", name);
	for (int side = 0; side < 2; side++) {
		if (!s[side].count)
			fprintf(f, "\"%s\": null, ", side_name[side]);
		else
			fprintf(f, "\"%s\": {\"median\": %.9g, \"min\": %.9g, \"max\": %.9g, "
				   "\"mad\": %.9g, \"runs\": %d}, ",
				side_name[side], s[side].median, s[side].min, s[side].max, s[side].mad,
				s[side].count);
	}
	const char *v = verdict(&s[0], &s[1]);
	if (v && s[0].median != 0)
		fprintf(f, "\"ratio\": %.9g, ", s[1].median / s[0].median);
	else
		fprintf(f, "\"ratio\": null, ");
	if (v)
		fprintf(f, "\"verdict\": \"%s\"}%s\n", v, last);
	else
		fprintf(f, "\"verdict\": null}%s\n", last);
}

static void write_json(const struct options *o, const struct run *runs, int nruns,
		       const struct diff *d)
{
	FILE *f = fopen(o->json_path, "w");
	if (!f) {
		ag_log_msg(AG_LOG_ERROR, "compare: cannot write --json %s: %s", o->json_path,
			   strerror(errno));
		exit(AG_EXIT_CANNOT_RUN);
	}
	struct spread wall[2] = {spread_of(runs, nruns, PLAIN, 0), spread_of(runs, nruns, LIBRARY, 0)};
	struct spread met[2] = {spread_of(runs, nruns, PLAIN, 1), spread_of(runs, nruns, LIBRARY, 1)};
	fprintf(f, "{\n  \"compare_version\": 1,\n  \"command\": [");
	for (char **a = o->argv; *a; a++) {
		json_string(f, *a);
		fputs(a[1] ? ", " : "", f);
	}
	fprintf(f, "],\n  \"library\": ");
	json_string(f, o->lib);
	fprintf(f, ",\n  \"options\": {");
	const char *sep = "";
	for (int id = 0; id < AG_OPT_COUNT; id++) {
		if (!o->value[id])
			continue;
		fprintf(f, "%s\"%s\": ", sep, ag_opt_table[id].env);
		json_string(f, o->value[id]);
		sep = ", ";
	}
	fprintf(f, "},\n  \"runs_per_side\": %d,\n  \"metric_regex\": ", o->n);
	json_string(f, o->metric_text);
	fprintf(f, ",\n  \"spread\": \"median, min-max and median absolute deviation; verdict "
		   "'spread too large to conclude' when the two sides' ranges overlap\",\n");
	json_spread(f, "wall_s", wall, ",");
	if (o->metric_text)
		json_spread(f, "metric", met, ",");
	long long ops = 0, replayed = 0;
	for (int i = 0; i < nruns; i++)
		ops += runs[i].ops, replayed += runs[i].ops_replayed;
	if (ops)
		fprintf(f, "  \"replayed_share\": %.6f,\n", (double)replayed / (double)ops);
	else
		fprintf(f, "  \"replayed_share\": null,\n");
	fprintf(f, "  \"output\": {\"compared\": %s, \"lines_compared\": %d, \"lines_left_out\": %d, "
		   "\"differs\": %s, \"line\": %d, \"plain_line\": ",
		d->plain_varies ? "false" : "true", d->compared, d->skipped,
		d->differs ? "true" : "false", d->line);
	json_string(f, d->plain_line);
	fprintf(f, ", \"library_line\": ");
	json_string(f, d->lib_line);
	fprintf(f, "},\n  \"exit_status\": {\"differs\": %s, \"plain\": %d, \"library\": %d},\n",
		d->status_differs ? "true" : "false", d->plain_status,
		d->status_differs ? d->lib_status : d->plain_status);
	fprintf(f, "  \"runs\": [\n");
	for (int i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		fprintf(f, "    {\"side\": \"%s\", \"pair\": %d, \"warmup\": %s, \"wall_s\": %.6f, "
			   "\"exit_status\": %d, \"metric\": ",
			side_name[r->side], r->pair, r->pair ? "false" : "true", r->wall_s, r->status);
		if (r->has_metric)
			fprintf(f, "%.9g", r->metric);
		else
			fputs("null", f);
		if (r->side == LIBRARY)
			fprintf(f, ", \"stats_files\": %d, \"ops\": %lld, \"ops_replayed\": %lld, "
				   "\"replays\": %lld, \"graphs_built\": %lld",
				r->stats_files, r->ops, r->ops_replayed, r->replays, r->graphs_built);
		fprintf(f, "}%s\n", i + 1 < nruns ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	if (fclose(f) != 0) {
		ag_log_msg(AG_LOG_ERROR, "compare: cannot write --json %s: %s", o->json_path,
			   strerror(errno));
		exit(AG_EXIT_CANNOT_RUN);
	}
}

/* ---- main ------------------------------------------------------------------------------- */

int ag_compare_main(int argc, char **argv)
{
	static struct options o;
	parse(argc, argv, &o);
	ag_launch_find_library(o.lib, sizeof o.lib);
	free(ag_launch_preload_value(o.lib, NULL)); /* a path LD_PRELOAD cannot hold: say so once, here */
	const char *tmp = getenv("TMPDIR");
	snprintf(o.stats_dir, sizeof o.stats_dir, "%s/autograph-compare.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(o.stats_dir))
		fatal_errno("creating a temporary directory for the statistics");
	/* No SA_RESTART: waitpid and read see EINTR and go on; exec resets the handlers. */
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	int nruns = 1 + 2 * o.n;
	struct run *runs = calloc((size_t)nruns, sizeof *runs);
	if (!runs)
		fatal_errno("allocating");
	run_once(&o, PLAIN, 0, 0, &runs[0]);
	for (int pair = 1, k = 1; pair <= o.n; pair++) {
		/* Odd pairs start with the plain side, even pairs with the library. */
		enum side first = pair % 2 ? PLAIN : LIBRARY;
		run_once(&o, first, k, pair, &runs[k]);
		k++;
		run_once(&o, first == PLAIN ? LIBRARY : PLAIN, k, pair, &runs[k]);
		k++;
	}
	remove_stats_dir(&o);

	struct diff d;
	compare_outputs(&o, runs, nruns, &d);
	print_report(&o, runs, nruns, &d);
	if (o.json_path)
		write_json(&o, runs, nruns, &d);
	for (int i = 0; i < nruns; i++)
		free(runs[i].out);
	free(runs);
	free(d.plain_line);
	free(d.lib_line);
	if (o.metric_text)
		regfree(&o.metric);
	return d.differs || d.status_differs ? 1 : 0;
}
