/*
 * The one place that writes to stderr. Formatting goes into a stack buffer and
 * out with one write(2): no allocation, no stdio lock, usable from exit
 * handlers and from inside the dlsym hook.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

int ag_log_level = AG_LOG_WARN;

void ag_log_msg(int level, const char *fmt, ...)
{
	static const char *const tag[] = {"error: ", "warning: ", "", ""};
	char buf[1024];
	int n = snprintf(buf, sizeof buf, "autograph: %s", tag[level]);
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m < (int)(sizeof buf - (size_t)n - 1) ? m : (int)(sizeof buf - (size_t)n - 2);
	buf[n++] = '\n';
	ssize_t w = write(2, buf, (size_t)n);
	(void)w;
}
