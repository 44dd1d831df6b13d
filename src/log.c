/*
 * The one place that writes to stderr. Formatting goes into a stack buffer and
 * out with one write(2): no allocation, no stdio lock, usable from exit
 * handlers and from inside the dlsym hook. Deferred lines wait in a fixed
 * buffer, filled while the options are read (one thread, at load) and written
 * out in one write at the first driver call.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int ag_log_level = AG_LOG_WARN;

static char deferred[8192];
static size_t deferred_len;
static int released;

/* One line with its prefix and newline into buf; returns its length. */
static size_t format(char *buf, size_t size, int level, const char *fmt, va_list ap)
{
	static const char *const tag[] = {"error: ", "warning: ", "", ""};
	int n = snprintf(buf, size, "autograph: %s", tag[level]);
	int m = vsnprintf(buf + n, size - (size_t)n - 1, fmt, ap);
	if (m < 0)
		return 0;
	n += m < (int)(size - (size_t)n - 1) ? m : (int)(size - (size_t)n - 2);
	buf[n++] = '\n';
	return (size_t)n;
}

static void write_all(const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(2, buf, n);
		if (w <= 0)
			return;
		buf += w;
		n -= (size_t)w;
	}
}

void ag_log_msg(int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	size_t n = format(buf, sizeof buf, level, fmt, ap);
	va_end(ap);
	write_all(buf, n);
}

void ag_log_defer(int level, const char *fmt, ...)
{
	if (level > ag_log_level)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	size_t n = format(buf, sizeof buf, level, fmt, ap);
	va_end(ap);
	if (__atomic_load_n(&released, __ATOMIC_ACQUIRE)) {
		write_all(buf, n);
		return;
	}
	if (n <= sizeof deferred - deferred_len) {
		memcpy(deferred + deferred_len, buf, n);
		deferred_len += n;
	}
}

void ag_log_release(void)
{
	if (__atomic_exchange_n(&released, 1, __ATOMIC_ACQ_REL))
		return;
	write_all(deferred, deferred_len);
	deferred_len = 0;
}
