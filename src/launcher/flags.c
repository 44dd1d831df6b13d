/*
 * How the rows of src/options.def are spelled on the launcher's command line.
 * Every library option is a row of that table, reached through ag_opt_table;
 * this file lists none of them. The spelling follows from the row's type
 * (mirrored by scripts/gen-options-doc for the README and the man page):
 *   BOOL   --flag sets the state the flag names, with the opposite spelling
 *          beside it: --off/--on, --nvtx/--no-nvtx, --update/--no-update
 *   STATS  --flag (summary on stderr), --flag-json FILE, --no-flag
 *   others --flag VALUE or --flag=VALUE
 * Values are checked with ag_opt_parse(), the library's own parser. Unlike the
 * library, which keeps the default and runs on, the launcher stops: a usage
 * error is one line and exit 2, before anything is executed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher.h"
#include "log.h"

const char ag_launch_usage_line[] = "usage: autograph [options] [--] program [args...]";
const char ag_compare_usage_line[] =
	"usage: autograph compare [-n N] [--metric REGEX] [--json FILE] [options] [--] program [args...]";

void ag_launch_usage_error(const char *what, const char *arg)
{
	ag_log_msg(AG_LOG_ERROR, "%s%s (see autograph --help)", what, arg);
	exit(AG_EXIT_USAGE);
}

/* The forms one option can take on the command line. */
enum form {
	FORM_SET,   /* a boolean's own flag, or STATS bare: takes no value */
	FORM_UNSET, /* the opposite spelling: takes no value */
	FORM_VALUE, /* --flag VALUE or --flag=VALUE */
	FORM_PATH,  /* STATS: --flag-json FILE */
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
	case AG_TYPE_FILE:
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
	case AG_TYPE_FILE:
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

void ag_launch_forms(enum ag_opt_id id, char *out, size_t len)
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

int ag_launch_option(int argc, char **argv, int *i, const char *value[AG_OPT_COUNT])
{
	const char *a = argv[*i];
	if (strncmp(a, "--", 2) != 0)
		return 0;
	const char *name = a + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	enum form form;
	int id = lookup(name, len, &form);
	if (id < 0)
		return 0;
	struct spelling s;
	spell((enum ag_opt_id)id, &s);
	if (form == FORM_SET || form == FORM_UNSET) {
		if (eq)
			ag_launch_usage_error("this option takes no value: ", a);
		value[id] = form == FORM_SET ? s.set_value : s.unset_value;
		return 1;
	}
	const char *v = eq ? eq + 1 : NULL;
	if (!v) {
		if (*i + 1 >= argc)
			ag_launch_usage_error("this option needs a value: ", a);
		v = argv[++*i];
	}
	long num;
	const char *text;
	char why[160];
	if (ag_opt_parse((enum ag_opt_id)id, v, &num, &text, why, sizeof why) == 0 &&
	    (form != FORM_PATH || num == 2)) {
		value[id] = v;
		return 1;
	}
	if (form == FORM_PATH)
		snprintf(why, sizeof why, "a file path such as ./stats.json (%%p: process id)");
	ag_log_msg(AG_LOG_ERROR, "--%.*s %s is not valid: expected %s", (int)len, name, v, why);
	exit(AG_EXIT_USAGE);
}
