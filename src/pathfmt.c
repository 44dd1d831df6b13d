/*
 * File-name templates: one walk over the template serves both checking (out is
 * NULL) and expanding, so the two can never disagree about what is valid.
 */
#include "pathfmt.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned sequence;

struct sink {
	char *out;
	size_t len, n;
	int overflow;
};

static void put(struct sink *s, const char *text, size_t n)
{
	if (!s->out)
		return;
	if (s->n + n >= s->len) {
		s->overflow = 1;
		return;
	}
	memcpy(s->out + s->n, text, n);
	s->n += n;
}

static void put_number(struct sink *s, unsigned long v)
{
	char buf[24];
	int n = snprintf(buf, sizeof buf, "%lu", v);
	put(s, buf, (size_t)n);
}

/* The length of %q{VAR}'s name at p (just after the '{'), or 0 if it is not terminated
 * by '}' or holds something other than a variable name. */
static size_t var_name(const char *p)
{
	size_t n = 0;
	while (p[n] == '_' || isalnum((unsigned char)p[n]))
		n++;
	return p[n] == '}' && n > 0 && !isdigit((unsigned char)p[0]) ? n : 0;
}

static int walk(const char *t, struct sink *s, char *why, size_t why_len)
{
	for (; *t; t++) {
		if (*t != '%') {
			put(s, t, 1);
			continue;
		}
		switch (t[1]) {
		case '%':
			put(s, "%", 1);
			break;
		case 'p':
			put_number(s, (unsigned long)getpid());
			break;
		case 'n':
			if (s->out)
				put_number(s, __atomic_add_fetch(&sequence, 1, __ATOMIC_RELAXED));
			break;
		case 'h': {
			char host[256];
			if (s->out && gethostname(host, sizeof host) == 0) {
				host[sizeof host - 1] = '\0';
				put(s, host, strlen(host));
			}
			break;
		}
		case 'q': {
			size_t n = t[2] == '{' ? var_name(t + 3) : 0;
			if (!n) {
				snprintf(why, why_len, "%%q must be followed by {VARIABLE}");
				return -1;
			}
			if (s->out) {
				char name[256];
				snprintf(name, sizeof name, "%.*s", (int)n, t + 3);
				const char *v = getenv(name);
				if (v)
					put(s, v, strlen(v));
			}
			t += n + 2; /* q{NAME, leaving the '}' for the loop's t++ */
			break;
		}
		case '\0':
			snprintf(why, why_len, "a %% at the end; %%%% writes a %%");
			return -1;
		default:
			snprintf(why, why_len, "%%%c is not one of %%p %%h %%n %%q{VAR} %%%%", t[1]);
			return -1;
		}
		t++;
	}
	return 0;
}

int ag_path_check(const char *tmpl, char *why, size_t why_len)
{
	struct sink s = {0};
	return walk(tmpl, &s, why, why_len);
}

int ag_path_expand(const char *tmpl, char *out, size_t len)
{
	char why[80];
	struct sink s = {out, len, 0, 0};
	if (len == 0 || walk(tmpl, &s, why, sizeof why) != 0 || s.overflow)
		return -1;
	out[s.n] = '\0';
	return 0;
}
