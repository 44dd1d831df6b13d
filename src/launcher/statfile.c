/*
 * Reads the integer counters of one JSON statistics file that the library wrote
 * (src/stats.c, keys in src/stats.def), for `autograph compare`. Only members
 * of the top-level object and of objects directly inside it are kept, as
 * "key" and "parent.key" ("replays", "copies.htod"); arrays, strings and the
 * per-function "calls" breakdown are stepped over. This is a scanner for the
 * one format the library itself emits, not a general JSON reader: a file it
 * cannot follow is reported as unreadable and compare says so, rather than
 * guessing. A JSON library would be a new build and run-time dependency of the
 * launcher for a dozen integers.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "statfile.h"

struct scan {
	const char *p, *end;
	struct ag_statfile *out;
};

static void skip_space(struct scan *s)
{
	while (s->p < s->end && isspace((unsigned char)*s->p))
		s->p++;
}

/* A string token: copies at most len-1 bytes of it (escapes kept raw) into buf. */
static int read_string(struct scan *s, char *buf, size_t len)
{
	if (s->p >= s->end || *s->p != '"')
		return -1;
	size_t n = 0;
	for (s->p++; s->p < s->end && *s->p != '"'; s->p++) {
		if (*s->p == '\\' && s->p + 1 < s->end)
			s->p++;
		if (n + 1 < len)
			buf[n++] = *s->p;
	}
	if (s->p >= s->end)
		return -1;
	s->p++;
	buf[n] = '\0';
	return 0;
}

static void keep(struct ag_statfile *out, const char *parent, const char *key, long long v)
{
	if (out->count >= AG_STATFILE_MAX)
		return;
	struct ag_stat_value *c = &out->values[out->count++];
	if (parent)
		snprintf(c->name, sizeof c->name, "%s.%s", parent, key);
	else
		snprintf(c->name, sizeof c->name, "%s", key);
	c->value = v;
}

/* One value at nesting depth depth; members of objects at depth < 2 are named for keep(). */
static int read_value(struct scan *s, int depth, const char *parent, const char *key)
{
	skip_space(s);
	if (s->p >= s->end || depth > 64)
		return -1;
	char c = *s->p;
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		s->p++;
		skip_space(s);
		if (s->p < s->end && *s->p == close) {
			s->p++;
			return 0;
		}
		for (;;) {
			char name[64] = "";
			if (c == '{') {
				skip_space(s);
				if (read_string(s, name, sizeof name) != 0)
					return -1;
				skip_space(s);
				if (s->p >= s->end || *s->p++ != ':')
					return -1;
			}
			/* Only the top object's members and one level below them are named. */
			int named = c == '{' && depth < 2 && strcmp(key ? key : "", "calls") != 0;
			if (read_value(s, depth + 1, named && depth == 1 ? key : NULL,
				       named ? name : NULL) != 0)
				return -1;
			skip_space(s);
			if (s->p < s->end && *s->p == ',') {
				s->p++;
				continue;
			}
			if (s->p < s->end && *s->p == close) {
				s->p++;
				return 0;
			}
			return -1;
		}
	}
	if (c == '"') {
		char ignored[2];
		return read_string(s, ignored, sizeof ignored);
	}
	char *stop;
	if (c == '-' || isdigit((unsigned char)c)) {
		long long v = strtoll(s->p, &stop, 10);
		if (*stop == '.' || *stop == 'e' || *stop == 'E')
			strtod(s->p, &stop); /* a fraction: stepped over, never kept */
		else if (key)
			keep(s->out, parent, key, v);
		s->p = stop;
		return 0;
	}
	static const char *const words[] = {"true", "false", "null"};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		size_t n = strlen(words[i]);
		if ((size_t)(s->end - s->p) >= n && memcmp(s->p, words[i], n) == 0) {
			s->p += n;
			return 0;
		}
	}
	return -1;
}

int ag_statfile_read(const char *path, struct ag_statfile *out)
{
	memset(out, 0, sizeof *out);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t cap = 1 << 16, len = 0;
	char *text = malloc(cap);
	while (text) {
		len += fread(text + len, 1, cap - len, f);
		if (len < cap)
			break;
		char *more = realloc(text, cap *= 2);
		if (!more)
			free(text);
		text = more;
	}
	int bad = ferror(f);
	fclose(f);
	if (!text)
		return -1;
	struct scan s = {text, text + len, out};
	skip_space(&s);
	int rc = bad || s.p >= s.end || *s.p != '{' ? -1 : read_value(&s, 0, NULL, NULL);
	skip_space(&s);
	if (rc == 0 && s.p != s.end)
		rc = -1;
	free(text);
	return rc;
}

long long ag_statfile_get(const struct ag_statfile *st, const char *name)
{
	for (int i = 0; i < st->count; i++)
		if (strcmp(st->values[i].name, name) == 0)
			return st->values[i].value;
	return 0;
}
