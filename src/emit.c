/*
 * The report emitter: JSON or the text summary from the same calls. Keeps a
 * small stack of what is open (object or array, first member or not) and a
 * fixed buffer that is drained to the descriptor whenever it fills.
 */
#include "emit.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void drain(struct ag_emit *e)
{
	size_t done = 0;
	while (done < e->len) {
		ssize_t w = write(e->fd, e->buf + done, e->len - done);
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	e->len = 0;
}

static void vout(struct ag_emit *e, const char *fmt, va_list ap)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		va_list copy;
		va_copy(copy, ap);
		int n = vsnprintf(e->buf + e->len, sizeof e->buf - e->len, fmt, copy);
		va_end(copy);
		if (n >= 0 && (size_t)n < sizeof e->buf - e->len) {
			e->len += (size_t)n;
			return;
		}
		drain(e);
	}
}

__attribute__((format(printf, 2, 3))) static void out(struct ag_emit *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vout(e, fmt, ap);
	va_end(ap);
}

static void end_row(struct ag_emit *e)
{
	if (e->row_items >= 0)
		out(e, "\n");
	e->row_items = -1;
}

static void json_string(struct ag_emit *e, const char *s, size_t n)
{
	out(e, "\"");
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			out(e, "\\%c", c);
		else if (c < 0x20)
			out(e, "\\u%04x", c);
		else
			out(e, "%c", c);
	}
	out(e, "\"");
}

/* The separator, indentation and key before a JSON member. */
static void member(struct ag_emit *e, const char *key)
{
	int first = e->first[e->depth];
	e->first[e->depth] = 0;
	if (!first)
		out(e, ",");
	if (e->inline_depth && e->depth >= e->inline_depth)
		out(e, first ? "" : " ");
	else
		out(e, "\n%*s", 2 * e->depth, "");
	if (key && !e->array[e->depth])
		out(e, "\"%s\": ", key);
}

static void open_nest(struct ag_emit *e, const char *key, int one_line, int array)
{
	if (!e->json || e->depth + 1 >= AG_EMIT_DEPTH)
		return;
	if (e->depth > 0)
		member(e, key);
	out(e, array ? "[" : "{");
	e->depth++;
	e->first[e->depth] = 1;
	e->array[e->depth] = array;
	if (one_line && !e->inline_depth)
		e->inline_depth = e->depth;
}

void ag_emit_begin(struct ag_emit *e, int fd, int json)
{
	memset(e, 0, offsetof(struct ag_emit, buf));
	e->fd = fd;
	e->json = json;
	e->row_items = -1;
	open_nest(e, NULL, 0, 0);
}

void ag_emit_object(struct ag_emit *e, const char *key, int one_line)
{
	open_nest(e, key, one_line, 0);
}

void ag_emit_array(struct ag_emit *e, const char *key, int one_line)
{
	open_nest(e, key, one_line, 1);
}

void ag_emit_close(struct ag_emit *e)
{
	if (!e->json || e->depth == 0)
		return;
	int was_inline = e->inline_depth && e->depth >= e->inline_depth;
	int empty = e->first[e->depth];
	char close = e->array[e->depth] ? ']' : '}';
	e->depth--;
	if (e->inline_depth > e->depth)
		e->inline_depth = 0;
	if (!was_inline && !empty)
		out(e, "\n%*s", 2 * e->depth, "");
	out(e, "%c", close);
}

void ag_emit_end(struct ag_emit *e)
{
	end_row(e);
	while (e->json && e->depth > 0)
		ag_emit_close(e);
	if (e->json)
		out(e, "\n");
	drain(e);
}

/* The text item "value word" on the open row, value already formatted. */
static void item(struct ag_emit *e, const char *word, const char *value)
{
	if (word && e->row_items >= 0)
		out(e, "%s%s%s%s", e->row_items++ ? ", " : " ", value, *word ? " " : "", word);
}

void ag_emit_u64(struct ag_emit *e, const char *key, const char *word, uint64_t v)
{
	char text[24];
	snprintf(text, sizeof text, "%llu", (unsigned long long)v);
	if (e->json) {
		member(e, key);
		out(e, "%s", text);
	} else {
		item(e, word, text);
	}
}

void ag_emit_int(struct ag_emit *e, const char *key, const char *word, long v)
{
	char text[24];
	snprintf(text, sizeof text, "%ld", v);
	if (e->json) {
		member(e, key);
		out(e, "%s", text);
	} else {
		item(e, word, text);
	}
}

void ag_emit_ratio(struct ag_emit *e, const char *key, const char *word, double v)
{
	char text[32];
	snprintf(text, sizeof text, "%.3f", v);
	if (e->json) {
		member(e, key);
		out(e, "%s", text);
	} else {
		item(e, word, text);
	}
}

void ag_emit_strn(struct ag_emit *e, const char *key, const char *s, size_t n)
{
	if (e->json) {
		member(e, key);
		json_string(e, s, n);
	}
}

void ag_emit_str(struct ag_emit *e, const char *key, const char *s)
{
	ag_emit_strn(e, key, s, strlen(s));
}

void ag_emit_null(struct ag_emit *e, const char *key)
{
	if (e->json) {
		member(e, key);
		out(e, "null");
	}
}

void ag_emit_row(struct ag_emit *e, const char *label)
{
	if (e->json)
		return;
	end_row(e);
	out(e, "autograph:   %-17s", label);
	e->row_items = 0;
}

void ag_emit_line(struct ag_emit *e, const char *fmt, ...)
{
	if (e->json)
		return;
	end_row(e);
	va_list ap;
	va_start(ap, fmt);
	vout(e, fmt, ap);
	va_end(ap);
	out(e, "\n");
}
