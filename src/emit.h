/*
 * One emitter for both report formats, after jemalloc's emitter.h: the report
 * says each value once, with its JSON key and the word the text summary puts
 * after it, and the emitter writes whichever format was chosen. JSON nests
 * objects and arrays; the text summary is rows of "value word" items under a
 * row label, every line starting with "autograph:". Output goes through a
 * fixed buffer drained to a descriptor: no allocation, usable at exit and in a
 * signal handler.
 */
#ifndef AG_EMIT_H
#define AG_EMIT_H

#include <stddef.h>
#include <stdint.h>

#define AG_EMIT_DEPTH 8

struct ag_emit {
	int fd;
	int json;
	int depth;
	int inline_depth;            /* JSON: nesting from which objects stay on one line; 0: none */
	int first[AG_EMIT_DEPTH];    /* no member written yet at this depth */
	int array[AG_EMIT_DEPTH];    /* this depth is an array: members have no key */
	int row_items;               /* text: items on the open row, -1 when no row is open */
	size_t len;
	char buf[8192];
};

void ag_emit_begin(struct ag_emit *e, int fd, int json);
void ag_emit_end(struct ag_emit *e); /* closes what is open and drains the buffer */

/* JSON structure (the text format ignores it). key is NULL inside arrays. */
void ag_emit_object(struct ag_emit *e, const char *key, int one_line);
void ag_emit_array(struct ag_emit *e, const char *key, int one_line);
void ag_emit_close(struct ag_emit *e);

/* A value: JSON "key": value; text: an item "value word" on the open row, unless word is
 * NULL (JSON only). An empty word prints the bare value. */
void ag_emit_u64(struct ag_emit *e, const char *key, const char *word, uint64_t v);
void ag_emit_int(struct ag_emit *e, const char *key, const char *word, long v);
void ag_emit_ratio(struct ag_emit *e, const char *key, const char *word, double v); /* %.3f */
void ag_emit_str(struct ag_emit *e, const char *key, const char *s);       /* JSON only */
void ag_emit_strn(struct ag_emit *e, const char *key, const char *s, size_t n);
void ag_emit_null(struct ag_emit *e, const char *key);                     /* JSON only */

/* Text only: a new row under label, or a line of its own (fmt has no newline). */
void ag_emit_row(struct ag_emit *e, const char *label);
void ag_emit_line(struct ag_emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
