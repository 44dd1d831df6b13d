/*
 * Where libautograph.so is, and how it goes into LD_PRELOAD. The library is
 * looked for relative to the launcher's own location, so a staged or moved
 * install keeps working: beside the launcher (the build tree, build/), then in
 * ../$(LIBDIR) (installed: bin/autograph finds lib/x86_64-linux-gnu/ when it
 * was built with LIBDIR=lib/x86_64-linux-gnu). AUTOGRAPH_LIBRARY overrides both.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher.h"
#include "log.h"

void ag_launch_find_library(char *out, size_t len)
{
	char found[PATH_MAX];
	const char *forced = getenv("AUTOGRAPH_LIBRARY");
	if (forced && *forced) {
		if (!realpath(forced, found) || access(found, R_OK) != 0) {
			ag_log_msg(AG_LOG_ERROR, "AUTOGRAPH_LIBRARY=%s: %s", forced, strerror(errno));
			exit(AG_EXIT_NOT_FOUND);
		}
		snprintf(out, len, "%s", found);
		return;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0) {
		ag_log_msg(AG_LOG_ERROR, "cannot read /proc/self/exe to find libautograph.so (%s); "
			   "set AUTOGRAPH_LIBRARY", strerror(errno));
		exit(AG_EXIT_NOT_FOUND);
	}
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	static const char *const where[] = {"%s/libautograph.so", "%s/../" AG_LIBDIR "/libautograph.so"};
	for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof path, where[i], exe);
		if (access(path, R_OK) == 0 && realpath(path, found)) {
			snprintf(out, len, "%s", found);
			return;
		}
	}
	ag_log_msg(AG_LOG_ERROR, "libautograph.so is neither in %s nor in %s/../" AG_LIBDIR
		   "; set AUTOGRAPH_LIBRARY to its path", exe, exe);
	exit(AG_EXIT_NOT_FOUND);
}

/* LD_PRELOAD separates entries with spaces and colons, so a path holding one cannot go in. */
char *ag_launch_preload_value(const char *lib, const char *old)
{
	if (strpbrk(lib, " :")) {
		ag_log_msg(AG_LOG_ERROR, "cannot preload %s: LD_PRELOAD cannot hold a path with a space "
			   "or a colon", lib);
		exit(AG_EXIT_NOT_FOUND);
	}
	size_t len = strlen(lib) + 1 + (old ? strlen(old) : 0) + 1;
	char *both = malloc(len);
	if (!both) {
		ag_log_msg(AG_LOG_ERROR, "out of memory");
		exit(AG_EXIT_CANNOT_RUN);
	}
	if (old && *old)
		snprintf(both, len, "%s:%s", lib, old);
	else
		snprintf(both, len, "%s", lib);
	return both;
}
