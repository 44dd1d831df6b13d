/*
 * autograph: the launcher. `autograph [options] [--] program [args...]` turns
 * its options into AUTOGRAPH_* variables, puts libautograph.so first in
 * LD_PRELOAD and execs the program, so it exits with the program's status.
 *
 * DESIGN
 * - Every library option is a row of src/options.def, reached here through
 *   ag_opt_table; this file lists none of them. How a row is spelled on the
 *   command line follows from its type (spell() below, mirrored by
 *   scripts/gen-options-doc for the README and the man page):
 *     BOOL   --flag sets the state the flag names, with the opposite spelling
 *            beside it: --off/--on, --nvtx/--no-nvtx, --update/--no-update
 *     STATS  --flag (summary on stderr), --flag-json FILE, --no-flag
 *     others --flag VALUE or --flag=VALUE
 * - Values are checked with ag_opt_parse(), the library's own parser. Unlike
 *   the library, which keeps the default and runs on, the launcher stops: a
 *   usage error is one line and exit 2, before anything is executed.
 * - The library is found next to this executable (build/) or in ../lib
 *   (installed), unless AUTOGRAPH_LIBRARY names it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

#ifndef AG_VERSION
#define AG_VERSION "unknown"
#endif

enum { EXIT_USAGE = 2, EXIT_CANNOT_RUN = 126, EXIT_NOT_FOUND = 127 };

static const char usage_line[] = "usage: autograph [options] [--] program [args...]";

/* ---- how a table row is spelled ---------------------------------------------------- */

/* The forms one option can take on the command line. */
enum form {
	FORM_SET,    /* a boolean's own flag, or STATS bare: takes no value */
	FORM_UNSET,  /* the opposite spelling: takes no value */
	FORM_VALUE,  /* --flag VALUE or --flag=VALUE */
	FORM_PATH,   /* STATS: --flag-json FILE */
};

struct spelling {
	char set[48], unset[48], path[48]; /* flag names without "--"; "" where a form is absent */
	const char *set_value, *unset_value;
};

/* Derives the spellings of option id from its type and flag column. */
static void spell(enum ag_opt_id id, struct spelling *s)
{
	const struct ag_opt_desc *d = &ag_opt_table[id];
	memset(s, 0, sizeof *s);
	switch (d->type) {
	case AG_TYPE_BOOL:
		snprintf(s->set, sizeof s->set, "%s", d->flag);
		if (strcmp(d->flag, "off") == 0) {
			snprintf(s->unset, sizeof s->unset, "on");
			s->set_value = "0", s->unset_value = "1";
		} else if (strncmp(d->flag, "no-", 3) == 0) {
			snprintf(s->unset, sizeof s->unset, "%s", d->flag + 3);
			s->set_value = "0", s->unset_value = "1";
		} else {
			snprintf(s->unset, sizeof s->unset, "no-%s", d->flag);
			s->set_value = "1", s->unset_value = "0";
		}
		break;
	case AG_TYPE_STATS:
		snprintf(s->set, sizeof s->set, "%s", d->flag);
		snprintf(s->unset, sizeof s->unset, "no-%s", d->flag);
		snprintf(s->path, sizeof s->path, "%s-json", d->flag);
		s->set_value = "1", s->unset_value = "0";
		break;
	case AG_TYPE_INT:
	case AG_TYPE_LEVEL:
	case AG_TYPE_LIST:
		break;
	}
}

static const char *metavar(enum ag_opt_type t)
{
	switch (t) {
	case AG_TYPE_INT:
		return "N";
	case AG_TYPE_LEVEL:
		return "LEVEL";
	case AG_TYPE_LIST:
		return "LIST";
	case AG_TYPE_STATS:
		return "FILE";
	case AG_TYPE_BOOL:
		break;
	}
	return "VALUE";
}

/* Finds the option and form that `name` (without "--" and "=value") spells; -1 if none. */
static int lookup(const char *name, size_t len, enum form *form)
{
	for (int id = 0; id < AG_OPT_COUNT; id++) {
		struct spelling s;
		spell((enum ag_opt_id)id, &s);
		const char *flag = ag_opt_table[id].flag;
		if (s.set[0] && strlen(s.set) == len && memcmp(name, s.set, len) == 0)
			*form = FORM_SET;
		else if (s.unset[0] && strlen(s.unset) == len && memcmp(name, s.unset, len) == 0)
			*form = FORM_UNSET;
		else if (s.path[0] && strlen(s.path) == len && memcmp(name, s.path, len) == 0)
			*form = FORM_PATH;
		else if (strlen(flag) == len && memcmp(name, flag, len) == 0)
			*form = FORM_VALUE; /* STATS: --stats=VALUE */
		else
			continue;
		return id;
	}
	return -1;
}

/* ---- --help ------------------------------------------------------------------------- */

/* The flags of one option as --help shows them. */
static void forms_of(enum ag_opt_id id, char *out, size_t len)
{
	const struct ag_opt_desc *d = &ag_opt_table[id];
	struct spelling s;
	spell(id, &s);
	if (d->type == AG_TYPE_BOOL)
		snprintf(out, len, "--%s, --%s", s.set, s.unset);
	else if (d->type == AG_TYPE_STATS)
		snprintf(out, len, "--%s, --%s %s, --%s", s.set, s.path, metavar(d->type), s.unset);
	else
		snprintf(out, len, "--%s %s", d->flag, metavar(d->type));
}

static void print_help(void)
{
	char forms[160];
	int width = (int)strlen("--print-env");
	for (int id = 0; id < AG_OPT_COUNT; id++) {
		forms_of((enum ag_opt_id)id, forms, sizeof forms);
		if ((int)strlen(forms) > width)
			width = (int)strlen(forms);
	}
	printf("%s\n\n"
	       "Runs program with libautograph.so preloaded: repeating sequences of CUDA driver calls\n"
	       "are turned into CUDA graphs and replayed. Each option below sets one variable for the\n"
	       "program; variables already in the environment are passed on unless an option sets them.\n"
	       "Values may also be written --flag=VALUE.\n\n"
	       "Options (from src/options.def):\n",
	       usage_line);
	for (int id = 0; id < AG_OPT_COUNT; id++) {
		const struct ag_opt_desc *d = &ag_opt_table[id];
		forms_of((enum ag_opt_id)id, forms, sizeof forms);
		char range[64] = "";
		if (d->type == AG_TYPE_INT)
			snprintf(range, sizeof range, ", %ld to %ld", d->lo, d->hi);
		printf("  %-*s  %s (default %s%s)\n      %s\n", width, forms, d->env,
		       d->def[0] ? d->def : "empty", range, d->help);
	}
	printf("\nLauncher:\n"
	       "  %-*s  this text\n"
	       "  %-*s  print \"autograph <version>\"\n"
	       "  %-*s  print the variables it would set, and run nothing\n"
	       "\nEnvironment: AUTOGRAPH_LIBRARY names the library to preload; by default it is\n"
	       "libautograph.so beside this program or in ../lib relative to it.\n"
	       "Exit status: the program's; 2 usage error; 126 program not executable;\n"
	       "127 program or library not found.\n",
	       width, "-h, --help", width, "--version", width, "--print-env");
}

/* ---- the library -------------------------------------------------------------------- */

/* Fills out with the absolute path of libautograph.so, or says why not and exits 127. */
static void find_library(char *out)
{
	const char *forced = getenv("AUTOGRAPH_LIBRARY");
	if (forced && *forced) {
		if (!realpath(forced, out) || access(out, R_OK) != 0) {
			ag_log_msg(AG_LOG_ERROR, "AUTOGRAPH_LIBRARY=%s: %s", forced, strerror(errno));
			exit(EXIT_NOT_FOUND);
		}
		return;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0) {
		ag_log_msg(AG_LOG_ERROR, "cannot read /proc/self/exe to find libautograph.so (%s); "
			   "set AUTOGRAPH_LIBRARY", strerror(errno));
		exit(EXIT_NOT_FOUND);
	}
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	static const char *const where[] = {"%s/libautograph.so", "%s/../lib/libautograph.so"};
	for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
		char path[PATH_MAX + 32];
		snprintf(path, sizeof path, where[i], exe);
		if (access(path, R_OK) == 0 && realpath(path, out))
			return;
	}
	ag_log_msg(AG_LOG_ERROR, "libautograph.so is neither in %s nor in %s/../lib; "
		   "set AUTOGRAPH_LIBRARY to its path", exe, exe);
	exit(EXIT_NOT_FOUND);
}

/* LD_PRELOAD separates entries with spaces and colons, so a path holding one cannot go in. */
static void set_preload(const char *lib)
{
	if (strpbrk(lib, " :")) {
		ag_log_msg(AG_LOG_ERROR, "cannot preload %s: LD_PRELOAD cannot hold a path with a space "
			   "or a colon", lib);
		exit(EXIT_NOT_FOUND);
	}
	const char *old = getenv("LD_PRELOAD");
	if (!old || !*old) {
		setenv("LD_PRELOAD", lib, 1);
		return;
	}
	size_t len = strlen(lib) + 1 + strlen(old) + 1;
	char *both = malloc(len);
	if (!both) {
		ag_log_msg(AG_LOG_ERROR, "out of memory");
		exit(EXIT_CANNOT_RUN);
	}
	snprintf(both, len, "%s:%s", lib, old);
	setenv("LD_PRELOAD", both, 1);
	free(both);
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

/* ---- main ----------------------------------------------------------------------------- */

static void usage_error(const char *what, const char *arg)
{
	ag_log_msg(AG_LOG_ERROR, "%s%s (see autograph --help)", what, arg);
	exit(EXIT_USAGE);
}

int main(int argc, char **argv)
{
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
			printf("autograph %s\n", AG_VERSION);
			return 0;
		}
		if (strcmp(a, "--print-env") == 0) {
			print_env = 1;
			continue;
		}
		if (strncmp(a, "--", 2) != 0)
			usage_error("unknown option ", a);

		const char *name = a + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		enum form form;
		int id = lookup(name, len, &form);
		if (id < 0)
			usage_error("unknown option ", a);
		struct spelling s;
		spell((enum ag_opt_id)id, &s);
		if (form == FORM_SET || form == FORM_UNSET) {
			if (eq)
				usage_error("this option takes no value: ", a);
			value[id] = form == FORM_SET ? s.set_value : s.unset_value;
			continue;
		}
		const char *v = eq ? eq + 1 : NULL;
		if (!v) {
			if (i + 1 >= argc)
				usage_error("this option needs a value: ", a);
			v = argv[++i];
		}
		long num;
		const char *text;
		char why[160];
		if (ag_opt_parse((enum ag_opt_id)id, v, &num, &text, why, sizeof why) == 0 &&
		    (form != FORM_PATH || num == 2)) {
			value[id] = v;
			continue;
		}
		if (form == FORM_PATH)
			snprintf(why, sizeof why, "a file path such as ./stats.json (%%p: process id)");
		ag_log_msg(AG_LOG_ERROR, "--%.*s %s is not valid: expected %s", (int)len, name, v,
			   why);
		exit(EXIT_USAGE);
	}
	if (i >= argc && !print_env)
		usage_error("no program given; ", usage_line);

	char lib[PATH_MAX];
	find_library(lib);
	set_preload(lib);
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
	return err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
}
