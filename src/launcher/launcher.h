/*
 * What the files of the launcher share: how a row of src/options.def is spelled on
 * the command line and checked (flags.c), where libautograph.so is and how it is
 * put into LD_PRELOAD (library.c), and the side-by-side measurement (compare.c).
 * Every function here either succeeds or prints one "autograph:" line and exits,
 * so callers never handle a half-parsed command line.
 */
#ifndef AG_LAUNCHER_H
#define AG_LAUNCHER_H

#include <stddef.h>

#include "config.h"

enum { AG_EXIT_USAGE = 2, AG_EXIT_CANNOT_RUN = 126, AG_EXIT_NOT_FOUND = 127 };

/* The library's directory relative to the prefix, as `make install` puts it (launcher.mk). */
#ifndef AG_LIBDIR
#define AG_LIBDIR "lib"
#endif

extern const char ag_launch_usage_line[], ag_compare_usage_line[];

/* Prints "autograph: error: <what><arg> (see autograph --help)" and exits 2. */
void ag_launch_usage_error(const char *what, const char *arg) __attribute__((noreturn));

/*
 * If argv[*i] is a library option (--warmup 3, --no-update, ...), stores its
 * value in value[id], advances *i past any value it took and returns 1;
 * returns 0 if argv[*i] is not one. A malformed value is a usage error.
 */
int ag_launch_option(int argc, char **argv, int *i, const char *value[AG_OPT_COUNT]);

/* The flags of one option as --help and the docs show them: "--warmup N". */
void ag_launch_forms(enum ag_opt_id id, char *out, size_t len);

/* The absolute path of the library to preload, or one line and exit 127. */
void ag_launch_find_library(char *out, size_t len);

/*
 * The value LD_PRELOAD should have to put lib first ahead of old (may be NULL),
 * in a buffer the caller frees; exits 127 if lib cannot be held by LD_PRELOAD.
 */
char *ag_launch_preload_value(const char *lib, const char *old);

int ag_compare_main(int argc, char **argv);

#endif
