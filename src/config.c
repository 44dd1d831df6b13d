/*
 * Parses the AUTOGRAPH_* environment once. A malformed value never stops the
 * program: one warning names the variable, the value and what is accepted, and
 * the default is used (the same rule for every option, so it lives here); a
 * name that is not an option is warned about with the closest one. The
 * warnings are deferred (log.h) until the process first reaches the driver.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "names.h"
#include "pathfmt.h"

const struct ag_opt_desc ag_opt_table[AG_OPT_COUNT] = {
#define AG_OPT(id, env, flag, type, def, lo, hi, help) {env, flag, AG_TYPE_##type, def, lo, hi, help},
#include "options.def"
#undef AG_OPT
};

struct ag_opt_values ag_opt;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

static int parse_bool(const char *v, long *num)
{
	static const char *const yes[] = {"1", "true", "yes", "on"};
	static const char *const no[] = {"0", "false", "no", "off"};
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*num = 1;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*num = 0;
			return 0;
		}
	}
	return -1;
}

static int parse_int(const char *v, long lo, long hi, long *num)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (end == v || errno != 0)
		return -1;
	long scale = 1;
	if (*end == 'k' || *end == 'K')
		scale = 1000, end++;
	else if (*end == 'm' || *end == 'M')
		scale = 1000000, end++;
	if (*end != '\0' || n > hi / scale || n < lo / scale)
		return -1;
	n *= scale;
	if (n < lo || n > hi)
		return -1;
	*num = n;
	return 0;
}

/* A path must name a file we could create, so it needs a '/' or a '.'. */
static int is_path(const char *v)
{
	return strchr(v, '/') || strchr(v, '.');
}

/* 0 if the template's % escapes are well formed, else -1 and what is accepted in why. */
static int path_ok(const char *v, char *why, size_t why_len)
{
	char bad[80];
	if (ag_path_check(v, bad, sizeof bad) == 0)
		return 0;
	snprintf(why, why_len, "a file path whose %% escapes are %%p, %%h, %%n, %%q{VAR} or %%%% (%s)", bad);
	return -1;
}

int ag_opt_parse(enum ag_opt_id id, const char *v, long *num, const char **text, char *why,
		 size_t why_len)
{
	const struct ag_opt_desc *d = &ag_opt_table[id];
	*text = v;
	switch (d->type) {
	case AG_TYPE_BOOL:
		if (parse_bool(v, num) == 0)
			return 0;
		snprintf(why, why_len, "1/true/yes/on or 0/false/no/off");
		return -1;
	case AG_TYPE_INT:
		if (parse_int(v, d->lo, d->hi, num) == 0)
			return 0;
		snprintf(why, why_len, "a whole number from %ld to %ld (k and M suffixes allowed)", d->lo,
			 d->hi);
		return -1;
	case AG_TYPE_LEVEL:
		for (long i = 0; i < 4; i++) {
			if (strcasecmp(v, level_names[i]) == 0) {
				*num = i;
				return 0;
			}
		}
		snprintf(why, why_len, "error, warn, info or debug");
		return -1;
	case AG_TYPE_STATS:
		if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0) {
			*num = v[0] - '0';
			*text = NULL;
			return 0;
		}
		if (v[0] != '\0' && is_path(v)) {
			*num = 2;
			return path_ok(v, why, why_len);
		}
		snprintf(why, why_len, "0, 1 (summary on stderr) or a file path such as ./stats.json");
		return -1;
	case AG_TYPE_FILE:
		*num = v[0] != '\0';
		if (!*num) {
			*text = NULL;
			return 0;
		}
		if (is_path(v))
			return path_ok(v, why, why_len);
		snprintf(why, why_len, "empty (off) or a file path such as ./trace.%%p.agt");
		return -1;
	case AG_TYPE_LIST:
		for (const char *p = v; *p; p++) {
			if (!(isalnum((unsigned char)*p) || strchr("_,*:$.<>", *p))) {
				snprintf(why, why_len,
					 "comma-separated kernel names, each optionally ending in '*'");
				return -1;
			}
		}
		*num = v[0] != '\0';
		return 0;
	}
	return -1;
}

static void load_one(enum ag_opt_id id)
{
	const struct ag_opt_desc *d = &ag_opt_table[id];
	char why[160];
	ag_opt_parse(id, d->def, &ag_opt.num[id], &ag_opt.text[id], why, sizeof why);
	const char *v = getenv(d->env);
	if (!v)
		return;
	long num;
	const char *text;
	if (ag_opt_parse(id, v, &num, &text, why, sizeof why) == 0) {
		ag_opt.num[id] = num;
		ag_opt.text[id] = text;
	} else {
		ag_log_defer(AG_LOG_WARN, "%s=%s is not valid: expected %s; using %s", d->env, v, why,
			     d->def);
	}
}

/* Levenshtein distance, ignoring case, over at most the first 63 characters of each (option
 * names are shorter): two rows of a table suffice. */
static size_t distance(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b), row[2][64];
	la = la < 63 ? la : 63;
	lb = lb < 63 ? lb : 63;
	for (size_t j = 0; j <= lb; j++)
		row[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *prev = row[(i - 1) & 1], *cur = row[i & 1];
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) !=
						    tolower((unsigned char)b[j - 1]));
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
	}
	return row[la & 1][lb];
}

/* Read by the launcher (src/launcher/autograph.c), not by the library, but not a mistake. */
static const char *const launcher_vars[] = {"AUTOGRAPH_LIBRARY"};

const char *ag_opt_closest(const char *name, size_t len)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	for (int id = 0; id < AG_OPT_COUNT; id++) {
		const char *env = ag_opt_table[id].env;
		if (strlen(env) == len && memcmp(env, name, len) == 0)
			return NULL;
		size_t d = distance(name, len, env);
		if (d < best_d)
			best_d = d, best = env;
	}
	for (size_t i = 0; i < sizeof launcher_vars / sizeof *launcher_vars; i++)
		if (strlen(launcher_vars[i]) == len && memcmp(launcher_vars[i], name, len) == 0)
			return NULL;
	return best;
}

/* Every AUTOGRAPH_* name in the environment that is not an option: once each (a name
 * set twice in environ is still one mistake). */
static void check_names(void)
{
	extern char **environ;
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
		if (strncmp(*e, "AUTOGRAPH_", 10) != 0)
			continue;
		const char *closest = ag_opt_closest(*e, len);
		if (!closest)
			continue;
		int seen = 0;
		for (char **f = environ; f < e && !seen; f++)
			seen = strncmp(*f, *e, len) == 0 && ((*f)[len] == '=' || (*f)[len] == '\0');
		if (!seen)
			ag_log_defer(AG_LOG_WARN, "%.*s is not an autograph variable (ignored); did you "
				     "mean %s?", (int)len, *e, closest);
	}
}

void ag_opt_load(void)
{
	static int loaded;
	if (__atomic_exchange_n(&loaded, 1, __ATOMIC_ACQ_REL))
		return;
	/* LOG first, so that complaints about the others obey it. */
	load_one(AG_OPT_LOG);
	ag_log_level = (int)ag_opt.num[AG_OPT_LOG];
	for (int id = 0; id < AG_OPT_COUNT; id++)
		if (id != AG_OPT_LOG)
			load_one((enum ag_opt_id)id);
	check_names();
}

int ag_opt_list_match(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len > 0 && p[len - 1] == '*') {
			if (n >= len - 1 && memcmp(p, name, len - 1) == 0)
				return 1;
		} else if (len == n && memcmp(p, name, n) == 0) {
			return 1;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

int ag_opt_kernel_graphable(const char *name)
{
	char qualified[512];
	const char *q = ag_name_qualified(name, qualified, sizeof qualified) ? qualified : NULL;
	const char *inc = ag_opt.text[AG_OPT_INCLUDE], *exc = ag_opt.text[AG_OPT_EXCLUDE];
	int in = !ag_opt.num[AG_OPT_INCLUDE] || ag_opt_list_match(inc, name) ||
		 (q && ag_opt_list_match(inc, q));
	int out = ag_opt.num[AG_OPT_EXCLUDE] &&
		  (ag_opt_list_match(exc, name) || (q && ag_opt_list_match(exc, q)));
	return in && !out;
}

const char *ag_opt_shown(enum ag_opt_id id, char *buf, size_t len)
{
	const struct ag_opt_desc *d = &ag_opt_table[id];
	if (d->type == AG_TYPE_LEVEL)
		return level_names[ag_opt.num[id]];
	if (d->type == AG_TYPE_LIST || d->type == AG_TYPE_FILE ||
	    (d->type == AG_TYPE_STATS && ag_opt.num[id] == 2))
		return ag_opt.text[id] ? ag_opt.text[id] : "";
	snprintf(buf, len, "%ld", ag_opt.num[id]);
	return buf;
}

void ag_opt_print(void)
{
	for (int id = 0; id < AG_OPT_COUNT; id++) {
		char buf[32];
		ag_log_defer(AG_LOG_INFO, "option %s=%s", ag_opt_table[id].env,
			     ag_opt_shown((enum ag_opt_id)id, buf, sizeof buf));
	}
}
