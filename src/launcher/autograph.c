/*
 * autograph: the launcher. `autograph [options] [--] program [args...]` turns
 * its options into AUTOGRAPH_* variables, puts libautograph.so first in
 * LD_PRELOAD and execs the program, so it exits with the program's status.
 * `autograph compare ...` measures the program without and with the library
 * (compare.c). This file owns the command line's top level: --help,
 * --version, --print-env and the exec.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "launcher.h"
#include "log.h"

/* Passed in by src/launcher/launcher.mk; "unknown" keeps a hand build working. */
#ifndef AG_VERSION
#define AG_VERSION "unknown"
#endif
#ifndef AG_COMMIT
#define AG_COMMIT "unknown"
#endif

static void print_help(void)
{
	char forms[160];
	int width = (int)strlen("--print-env");
	for (int id = 0; id < AG_OPT_COUNT; id++) {
		ag_launch_forms((enum ag_opt_id)id, forms, sizeof forms);
		if ((int)strlen(forms) > width)
			width = (int)strlen(forms);
	}
	printf("%s\n%s\n\n"
	       "Runs program with libautograph.so preloaded: repeating sequences of CUDA driver calls\n"
	       "are turned into CUDA graphs and replayed. Each option below sets one variable for the\n"
	       "program; variables already in the environment are passed on unless an option sets them.\n"
	       "Values may also be written --flag=VALUE.\n\n"
	       "Options:\n",
	       ag_launch_usage_line, ag_compare_usage_line);
	for (int id = 0; id < AG_OPT_COUNT; id++) {
		const struct ag_opt_desc *d = &ag_opt_table[id];
		ag_launch_forms((enum ag_opt_id)id, forms, sizeof forms);
		char range[64] = "";
		if (d->type == AG_TYPE_INT)
			snprintf(range, sizeof range, ", %ld to %ld", d->lo, d->hi);
		printf("  %-*s  %s (default %s%s)\n      %s\n", width, forms, d->env,
		       d->def[0] ? d->def : "empty", range, d->help);
	}
	printf("\nLauncher:\n"
	       "  %-*s  this text\n"
	       "  %-*s  print the version, the CUDA headers it was built with and the commit\n"
	       "  %-*s  print the variables it would set, and run nothing\n"
	       "\nEnvironment: AUTOGRAPH_LIBRARY names the library to preload; by default it is\n"
	       "libautograph.so beside this program or in ../%s relative to it.\n"
	       "Exit status: the program's; 2 usage error; 126 program not executable;\n"
	       "127 program or library not found.\n"
	       "\nautograph compare runs the program once to warm up, then N times (default 5)\n"
	       "without and N times with the library, alternating which goes first, and prints\n"
	       "per side the median, range (min-max) and median absolute deviation of the wall\n"
	       "time (and of --metric REGEX: its first group, on the last line of stdout that\n"
	       "matches), their ratio, the share of operations replayed, and whether the outputs\n"
	       "differ. \"spread too large to conclude\" means the two sides' ranges overlap. The\n"
	       "options above apply to the library side. --json FILE writes all of it.\n"
	       "Its exit status: 0; 1 if the two sides' stdout or exit status differ; 2 usage\n"
	       "error; 127 program or library not found.\n"
	       "\nautograph analyze TRACE replays a file that AUTOGRAPH_TRACE (--trace) wrote through\n"
	       "the library's engine on the CPU, without a GPU, and prints each sequence it learned,\n"
	       "the fallbacks and the calls that ended holds, and last \"graphed: N of M operations\n"
	       "(P%%)\". AUTOGRAPH_* variables apply to the replay; TRACE may be .gz or - (stdin).\n",
	       width, "-h, --help", width, "--version", width, "--print-env", AG_LIBDIR);
}

static void print_version(void)
{
	printf("autograph %s (CUDA %d.%d headers, commit %s)\n", AG_VERSION, CUDA_VERSION / 1000,
	       CUDA_VERSION % 1000 / 10, AG_COMMIT);
}

/* One NAME=value line, single-quoted for sh where the value needs it. */
static void print_var(const char *name, const char *value)
{
	int plain = *value != '\0';
	for (const char *p = value; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:,+-@%",
			    *p))
			plain = 0;
	if (plain) {
		printf("%s=%s\n", name, value);
		return;
	}
	printf("%s='", name);
	for (const char *p = value; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*p);
	}
	printf("'\n");
}

/* `autograph analyze TRACE`: the analyzer is its own program (it links the engine), beside this one. */
static int analyze(char **argv)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
	if (!slash) {
		ag_log_msg(AG_LOG_ERROR, "cannot read /proc/self/exe to find autograph-analyze");
		return AG_EXIT_NOT_FOUND;
	}
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%.*s/autograph-analyze", (int)(slash - exe), exe);
	argv[0] = path;
	execv(path, argv);
	ag_log_msg(AG_LOG_ERROR, "cannot run %s: %s", path, strerror(errno));
	return AG_EXIT_NOT_FOUND;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "compare") == 0)
		return ag_compare_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "analyze") == 0)
		return analyze(argv + 1);

	const char *value[AG_OPT_COUNT] = {0};
	int print_env = 0, i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			print_help();
			return 0;
		}
		if (strcmp(a, "--version") == 0) {
			print_version();
			return 0;
		}
		if (strcmp(a, "--print-env") == 0) {
			print_env = 1;
			continue;
		}
		if (!ag_launch_option(argc, argv, &i, value))
			ag_launch_usage_error("unknown option ", a);
	}
	if (i >= argc && !print_env)
		ag_launch_usage_error("no program given; ", ag_launch_usage_line);

	char lib[PATH_MAX];
	ag_launch_find_library(lib, sizeof lib);
	char *preload = ag_launch_preload_value(lib, getenv("LD_PRELOAD"));
	setenv("LD_PRELOAD", preload, 1);
	free(preload);
	for (int id = 0; id < AG_OPT_COUNT; id++)
		if (value[id])
			setenv(ag_opt_table[id].env, value[id], 1);

	if (print_env) {
		print_var("LD_PRELOAD", getenv("LD_PRELOAD"));
		for (int id = 0; id < AG_OPT_COUNT; id++)
			if (value[id])
				print_var(ag_opt_table[id].env, value[id]);
		return 0;
	}

	execvp(argv[i], argv + i);
	int err = errno;
	ag_log_msg(AG_LOG_ERROR, "cannot run %s: %s", argv[i], strerror(err));
	return err == ENOENT ? AG_EXIT_NOT_FOUND : AG_EXIT_CANNOT_RUN;
}
