/*
 * Options: read once from the environment, from the table in options.def.
 * Reading is idempotent and needs nothing but getenv, so it is safe from the
 * first intercepted call on, even before the library's constructor has run.
 */
#ifndef AG_CONFIG_H
#define AG_CONFIG_H

#include <stddef.h>

enum ag_opt_type { AG_TYPE_BOOL, AG_TYPE_INT, AG_TYPE_LEVEL, AG_TYPE_STATS, AG_TYPE_LIST, AG_TYPE_FILE };

enum ag_opt_id {
#define AG_OPT(id, env, flag, type, def, lo, hi, help) AG_OPT_##id,
#include "options.def"
#undef AG_OPT
	AG_OPT_COUNT
};

struct ag_opt_desc {
	const char *env;
	const char *flag;
	enum ag_opt_type type;
	const char *def;
	long lo, hi;
	const char *help;
};

extern const struct ag_opt_desc ag_opt_table[AG_OPT_COUNT];

/* Parsed values: numbers for BOOL, INT and LEVEL (and STATS: 0 off, 1 stderr, 2 file); text for STATS and LIST. */
struct ag_opt_values {
	long num[AG_OPT_COUNT];
	const char *text[AG_OPT_COUNT];
};
extern struct ag_opt_values ag_opt;

void ag_opt_load(void);

/*
 * Parses one value; returns 0 and fills num and text, or -1 and writes what is
 * accepted into why. Exposed for the launcher and the unit tests.
 */
int ag_opt_parse(enum ag_opt_id id, const char *value, long *num, const char **text,
		 char *why, size_t why_len);

/* True if name matches the comma-separated list (entries may end in '*'). */
int ag_opt_list_match(const char *list, const char *name);

/*
 * Whether AUTOGRAPH_INCLUDE/EXCLUDE let the kernel of this (driver-reported, usually
 * mangled) name into graphs: an entry matches the name as reported or its qualified
 * name (names.h), so _Z6ag_addPfS_i, ag_add and ag_* all name the same kernel.
 */
int ag_opt_kernel_graphable(const char *name);

/* The option name closest to the len bytes at name, or NULL if they are an option or a
 * variable the launcher reads. */
const char *ag_opt_closest(const char *name, size_t len);

/* The value in effect as text: buf (len bytes) holds numbers, text options point at the
 * environment's string. */
const char *ag_opt_shown(enum ag_opt_id id, char *buf, size_t len);

/* Defers one line per option with its value (printed at AUTOGRAPH_LOG=info). */
void ag_opt_print(void);

#endif
