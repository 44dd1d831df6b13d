/*
 * Parses the AUTOGRAPH_* environment once. A malformed value never stops the
 * program: one line names the variable, the value and what is accepted, and
 * the default is used (the same rule for every option, so it lives here).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

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
		/* A path: it must name a file we could create, so it needs a '/' or a '.'. */
		if (v[0] != '\0' && (strchr(v, '/') || strchr(v, '.'))) {
			*num = 2;
			return 0;
		}
		snprintf(why, why_len, "0, 1 (summary on stderr) or a file path such as ./stats.json");
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
		ag_log_msg(AG_LOG_ERROR, "%s=%s is not valid: expected %s; using %s", d->env, v, why,
			   d->def);
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

void ag_opt_print(void)
{
	for (int i = 0; i < AG_OPT_COUNT; i++) {
		const struct ag_opt_desc *d = &ag_opt_table[i];
		const char *shown;
		char buf[32];
		if (d->type == AG_TYPE_LEVEL) {
			shown = level_names[ag_opt.num[i]];
		} else if (d->type == AG_TYPE_LIST || (d->type == AG_TYPE_STATS && ag_opt.num[i] == 2)) {
			shown = ag_opt.text[i];
		} else {
			snprintf(buf, sizeof buf, "%ld", ag_opt.num[i]);
			shown = buf;
		}
		ag_log_msg(AG_LOG_INFO, "option %s=%s", d->env, shown);
	}
}
