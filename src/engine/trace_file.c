/*
 * The AUTOGRAPH_TRACE file: created at the process's first driver call, locked
 * while it is written, filled through a buffer written out when full and at
 * exit. trace.c makes the records; its lock is held around every call here.
 *
 * Opened at the first driver call, not when the library loads: a process that
 * never calls the driver (a shell, `timeout`, a launcher script), preloaded
 * with the same environment as its CUDA child, would otherwise truncate the
 * child's file and write its own end record into it when it exits after the
 * child (run 11 of docs/gpu-results.md lost a trace so). The lock makes a
 * second CUDA process given the same name (no %p) leave the file to the first
 * and say so.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "config.h"
#include "engine/trace.h"
#include "log.h"
#include "pathfmt.h"

#define BUF (1u << 20)

static int fd = -1;
static uint8_t *buf;
static size_t used;

int ag_trace_file_open(void)
{
	char path[4096];
	const char *why = NULL;
	if (ag_path_expand(ag_opt.text[AG_OPT_TRACE], path, sizeof path) != 0 ||
	    (fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		why = "cannot create the file";
	else if (flock(fd, LOCK_EX | LOCK_NB) != 0 || ftruncate(fd, 0) != 0)
		why = "another process is writing this file (put %p in the name for a file per process)";
	else if (!(buf = malloc(BUF)))
		why = "no memory for its buffer";
	if (!why)
		return 1;
	if (fd >= 0)
		close(fd);
	fd = -1;
	ag_log_defer(AG_LOG_WARN, "AUTOGRAPH_TRACE=%s: %s; no trace is written", ag_opt.text[AG_OPT_TRACE], why);
	return 0;
}

int ag_trace_file_ok(void)
{
	return fd >= 0;
}

static void drain(void)
{
	for (size_t off = 0; off < used;) {
		ssize_t n = write(fd, buf + off, used - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	used = 0;
}

void ag_trace_file_append(const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		if (used == BUF)
			drain();
		size_t k = BUF - used < n ? BUF - used : n;
		memcpy(buf + used, b, k);
		used += k, b += k, n -= k;
	}
}

void ag_trace_file_close(void)
{
	drain();
	close(fd);
	fd = -1;
}

void ag_trace_file_drop(void)
{
	fd = -1;
}
