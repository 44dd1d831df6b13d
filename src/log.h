/*
 * Messages on stderr, each one line starting with "autograph:", written with a
 * single write(2) so lines from several threads never interleave. AG_LOG tests
 * the level before formatting, so a disabled debug line costs one compare.
 * Messages about the environment are deferred until the process first reaches
 * the driver, so that a shell or tool the environment merely passes through
 * (bash, env, timeout, a launcher) never repeats them.
 */
#ifndef AG_LOG_H
#define AG_LOG_H

enum { AG_LOG_ERROR, AG_LOG_WARN, AG_LOG_INFO, AG_LOG_DEBUG };

extern int ag_log_level;

void ag_log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define AG_LOG(level, ...)                                                                         \
	do {                                                                                       \
		if ((level) <= ag_log_level)                                                       \
			ag_log_msg((level), __VA_ARGS__);                                          \
	} while (0)

/* Keeps the line (if its level is on) until ag_log_release(); a line that no longer fits
 * in the fixed buffer is dropped. */
void ag_log_defer(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes the deferred lines, once per process; later calls do nothing. */
void ag_log_release(void);

#endif
