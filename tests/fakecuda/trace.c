/* Call trace of the fakecuda stand-in: tests run a program under libautograph and then
 * read this trace to see which driver entry points the interposer really called.
 *
 * Enabled by env AG_FAKE_TRACE=/path. One line per call received, appended with a single
 * write() on an O_APPEND descriptor so that lines of concurrent threads and processes
 * never interleave. Format: the exported symbol name, then space-separated key=value
 * fields, then " rc=<CUresult>" only when the call failed. Examples:
 *   cuInit flags=0
 *   cuMemAlloc_v2 bytes=4096
 *   cuMemcpyHtoDAsync_v2 bytes=4096 stream=s1
 *   cuLaunchKernel name=ag_fill grid=4,1,1 block=256,1,1 shmem=0 stream=legacy
 *   cuLaunchKernelEx_ptsz name=ag_add grid=1,1,1 block=32,1,1 shmem=0 stream=per-thread attrs=3
 *   cuLaunchKernel name=ag_fill grid=4,1,1 block=256,1,1 shmem=0 stream=s2 capturing=1
 *   cuGraphInstantiateWithFlags exec=e1 nodes=5
 *   cuGraphLaunch exec=e1 nodes=5 stream=s1 dev=0
 *   cuStreamSynchronize stream=s1
 *   cuModuleGetFunction name=ag_nope rc=500
 * Streams are "legacy" (NULL or CU_STREAM_LEGACY on a legacy entry point),
 * "per-thread" (CU_STREAM_PER_THREAD, or NULL on a _ptsz/_ptds entry point) or "s<N>",
 * N being the 1-based creation index of the stream in this process. Launch attributes
 * are listed by CUlaunchAttributeID, comma separated. */
#define _GNU_SOURCE
#include "fake.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A host function may (wrongly) call back into the API while its caller's line is still
 * being built, so lines are kept on a small stack; deeper nesting is not traced. The
 * stack is per thread: a call that waits (asynchronous mode) lets other threads' calls
 * run before its own line is finished. */
#define DEPTH 4
static int trace_fd = -2;
static _Thread_local char lines[DEPTH][1024];
static _Thread_local size_t lens[DEPTH];
static _Thread_local int depth = -1;
#define line lines[depth]
#define len lens[depth]

void ag_fake_trace_start(const char *symbol)
{
    if (trace_fd == -2) {
        const char *path = getenv("AG_FAKE_TRACE");
        trace_fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    }
    depth++;
    /* Without a trace file nothing is formatted, so benchmarks on the stand-in measure calls, not printf. */
    if (depth < DEPTH && trace_fd >= 0)
        len = (size_t)snprintf(line, sizeof line, "%s", symbol);
}

void ag_fake_trace_field(const char *fmt, ...)
{
    va_list ap;
    if (trace_fd < 0 || depth >= DEPTH || len + 2 >= sizeof line)
        return;
    line[len++] = ' ';
    va_start(ap, fmt);
    int n = vsnprintf(line + len, sizeof line - len, fmt, ap);
    va_end(ap);
    if (n > 0)
        len += (size_t)n < sizeof line - len ? (size_t)n : sizeof line - len - 1;
}

void ag_fake_trace_finish(CUresult rc)
{
    if (rc != CUDA_SUCCESS)
        ag_fake_trace_field("rc=%d", (int)rc);
    if (trace_fd >= 0 && depth < DEPTH) {
        if (len + 1 >= sizeof line)
            len = sizeof line - 2;
        line[len++] = '\n';
        ssize_t w = write(trace_fd, line, len);
        (void)w;
    }
    depth--;
}
