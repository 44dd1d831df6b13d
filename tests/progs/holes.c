/* Programs aimed at the engine's assumptions (issue 8): each `holes PATTERN` runs one
 * situation in which a program could observe a difference, and prints what it observed
 * (data, return codes, memory growth) so that a run with and a run without the library
 * can be compared line by line. Runs unchanged on a GPU and on the fakecuda stand-in.
 *   unpinned      a learned copy from a registered buffer, then the buffer unregistered
 *                 and reused as pageable memory (pattern 1)
 *   freed         a learned memset whose buffer is freed: the driver's error at the call
 *                 (pattern 10)
 *   null-args     cuLaunchKernelEx with numAttrs > 0 and attrs NULL, and a NULL entry in
 *                 kernelParams, after a loop that taught the engine both launches (6)
 *   attr-event    a launch that records an event through a launch attribute (4)
 *   stream-churn N   N cycles of stream create, launches, destroy (pattern 11)
 *   module-churn N   N cycles of module load, launch, unload (pattern 11)
 *   event-churn N    N cycles of what a JAX step does with events: a new event, a launch,
 *                 a record of it, another stream waiting for it, the event destroyed; the
 *                 three churns print the resident growth after the first tenth of the
 *                 cycles (event-churn: the first half) on stderr
 *   exit-signal   exit() from a SIGALRM handler while the loop replays graphs (7)
 *   exit-in-driver [IT]  exit() from a SIGUSR1 handler that interrupted a driver call
 *                 (the stand-in's AG_FAKE_SIGNAL_KERNEL seam) in iteration IT (7)
 *   ipc-event     a learned loop that records an interprocess event (issue 8 item 15.5)
 *   event-reuse   a learned loop that records an event without timing; the event is
 *                 destroyed, a timing event created (with AG_FAKE_EVENT_REUSE=1 the
 *                 stand-in gives it the same handle) and the loop runs again recording it
 *   xla-steps N   N steps of what a JAX jit step submits: a new event, three launches
 *                 (buffers alternating, one argument new every step), records of the new
 *                 event and of a fixed one, another stream waiting for the new event and
 *                 running a host function, the step before's event destroyed; prints the
 *                 sums and how many new events got a destroyed one's handle
 *                 (AG_FAKE_EVENT_REUSE=1)
 *   grid-growth N N iterations of two launches and a sync, the second's grid one block
 *                 larger each time: every segment is new, and differs in its grid
 *   idle-timer    a replayed loop, then no CUDA call: the other threads of the process
 *                 (the library's timer) must go quiet; prints on stderr (15.8)
 *   fork-lock     forks while another thread launches on a replayed stream; each child
 *                 launches on that stream, synchronizes and frees memory (15.6)
 *   unknown-fns   looks up AG_FAKE_EXTRA_FUNCS functions this build has no wrapper for
 *                 (the stand-in's test seam) and calls the last one inside a learned
 *                 sequence: it reads device memory at the call (15.3)
 *   hostfn-launch a host function that launches on a stream the host is holding work on,
 *                 and on a plain one, and queries the stream: CUDA_ERROR_NOT_PERMITTED (15.1)
 *   hostfn-probe  what the driver answers inside a host function, for the GPU record
 *   event-node-probe  what the driver answers when an executable's record node is given
 *                 another event: while its event exists, after it was destroyed, and
 *                 after it was first pointed at a spare event (what the library does
 *                 before a destroy); for the GPU record
 *   deferred-error  a held launch's submission fails (too little free memory, the
 *                 stand-in's AG_FAKE_LAUNCH_NEEDS): the stream's sync reports it, an
 *                 unrelated event query does not (item 2)
 *   reused-stream a primary-context reset, then a blocking stream given the handle of a
 *                 dead non-blocking one: ordered after legacy-stream work (item 3);
 *                 reused-stream-release: the same after the last primary-context release
 * Every call is checked: a failure prints the call and error and exits 2, except where
 * the return code is what is observed (it is printed). */
#define _GNU_SOURCE
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stdatomic.h>
#include <pthread.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static const char *err(CUresult rc)
{
    return check_name(rc);
}

enum { N = 256 };
static char *image;
static CUmodule mod;
static CUfunction f_fill, f_scale, f_add, f_inc;
static CUstream s;
static CUcontext ctx;

/* The device's primary context made current, the test kernels loaded into it. */
static void open_context(CUdevice dev)
{
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, image));
    CHECK(cuModuleGetFunction(&f_fill, mod, "ag_fill"));
    CHECK(cuModuleGetFunction(&f_scale, mod, "ag_scale"));
    CHECK(cuModuleGetFunction(&f_add, mod, "ag_add"));
    CHECK(cuModuleGetFunction(&f_inc, mod, "ag_inc"));
}

static void fill(CUdeviceptr p, float v)
{
    int n = N;
    CHECK(cuLaunchKernel(f_fill, 4, 1, 1, 64, 1, 1, 0, s, (void *[]){&p, &v, &n}, NULL));
}

static void scale(CUdeviceptr p, float v)
{
    int n = N;
    CHECK(cuLaunchKernel(f_scale, 4, 1, 1, 64, 1, 1, 0, s, (void *[]){&p, &v, &n}, NULL));
}

static double sum(CUdeviceptr p)
{
    float h[N];
    CHECK(cuMemcpyDtoH(h, p, sizeof h));
    double t = 0;
    for (int i = 0; i < N; i++)
        t += h[i];
    return t;
}

static long rss_kb(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2)
        exit(2);
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Pattern 1: while registered the host writes the buffer only after a sync; once it is
 * pageable again it rewrites it right after the copy call, as pageable copies allow. */
static void unpinned(void)
{
    CUdeviceptr d;
    static float host[N];
    CHECK(cuMemAlloc(&d, sizeof host));
    CHECK(cuMemHostRegister(host, sizeof host, 0));
    for (int it = 0; it < 20; it++) {
        if (it == 10)
            CHECK(cuMemHostUnregister(host));
        for (int i = 0; i < N; i++)
            host[i] = (float)it;
        fill(d, 0.0f);
        CHECK(cuMemcpyHtoDAsync(d, host, sizeof host, s));
        if (it >= 10)
            memset(host, 0, sizeof host); /* allowed: a pageable copy read it at the call */
        scale(d, 2.0f);
        CHECK(cuStreamSynchronize(s));
        printf("unpinned: it=%d sum=%.0f\n", it, sum(d));
    }
}

/* Pattern 10: after the free, each memset of the freed buffer must fail at the call. */
static void freed(void)
{
    CUdeviceptr a, b;
    CHECK(cuMemAlloc(&a, N * 4));
    CHECK(cuMemAlloc(&b, N * 4));
    for (int it = 0; it < 12; it++) {
        if (it == 6)
            CHECK(cuMemFree(b));
        fill(a, 1.0f);
        CUresult rc = cuMemsetD32Async(b, 7, N, s);
        scale(a, 3.0f);
        CUresult sync = cuStreamSynchronize(s);
        printf("freed: it=%d memset=%s sync=%s sum=%.0f\n", it, err(rc), err(sync), sum(a));
    }
}

/* Pattern 6: the driver refuses both launches; the library must neither crash nor hold them. */
static void null_args(void)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, N * 4));
    int n = N;
    float v = 2.0f;
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    for (int it = 0; it < 10; it++) {
        CUlaunchConfig cfg = {4, 1, 1, 64, 1, 1, 0, s, &attr, 1};
        void *params[] = {&d, &v, &n};
        fill(d, 1.0f);
        CUresult ex = cuLaunchKernelEx(&cfg, f_scale, params, NULL);
        if (it >= 5) {
            cfg.attrs = NULL;
            ex = cuLaunchKernelEx(&cfg, f_scale, params, NULL);
        }
        void *holey[] = {&d, it >= 5 ? NULL : &v, &n};
        CUresult plain = cuLaunchKernel(f_scale, 4, 1, 1, 64, 1, 1, 0, s, holey, NULL);
        CHECK(cuStreamSynchronize(s));
        printf("null-args: it=%d ex=%s plain=%s sum=%.0f\n", it, err(ex), err(plain), sum(d));
    }
}

/* Pattern 4: the launch completion event is recorded by every launch, graphed or not. */
static void attr_event(void)
{
    CUdeviceptr d;
    CUevent ev;
    CHECK(cuMemAlloc(&d, N * 4));
    CHECK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    int n = N;
    float v = 2.0f;
    for (int it = 0; it < 10; it++) {
        CUlaunchAttribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
        attr.value.launchCompletionEvent.event = ev;
        CUlaunchConfig cfg = {4, 1, 1, 64, 1, 1, 0, s, &attr, 1};
        fill(d, 1.0f);
        CHECK(cuLaunchKernelEx(&cfg, f_scale, (void *[]){&d, &v, &n}, NULL));
        scale(d, 0.5f);
        CHECK(cuStreamSynchronize(s));
        printf("attr-event: it=%d sum=%.0f\n", it, sum(d));
    }
    CHECK(cuEventSynchronize(ev));
}

static void stream_churn(long cycles)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, N * 4));
    long before = 0;
    for (long c = 0; c < cycles; c++) {
        CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        for (int it = 0; it < 3; it++) {
            fill(d, 1.0f);
            scale(d, 2.0f);
            CHECK(cuStreamSynchronize(s));
        }
        CHECK(cuStreamDestroy(s));
        if (c == cycles / 10)
            before = rss_kb(); /* after allocators and tables reached their working size */
    }
    printf("stream-churn: cycles=%ld sum=%.0f\n", cycles, sum(d));
    fprintf(stderr, "growth_kb=%ld\n", rss_kb() - before);
}

static void event_churn(long cycles)
{
    CUdeviceptr d;
    CUstream other;
    CHECK(cuMemAlloc(&d, N * 4));
    CHECK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
    long before = 0;
    for (long c = 0; c < cycles; c++) {
        CUevent ev;
        CHECK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
        fill(d, (float)(c % 5));
        CHECK(cuEventRecord(ev, s));
        CHECK(cuStreamWaitEvent(other, ev, 0));
        CHECK(cuEventDestroy(ev));
        if (c % 100 == 99)
            CHECK(cuStreamSynchronize(other));
        /* Halfway: by then the stream's argument ring (1 MiB, about 24 bytes a cycle) has
         * wrapped, so that the pages it touches for the first time are not counted. */
        if (c == cycles / 2)
            before = rss_kb();
    }
    CHECK(cuStreamSynchronize(s));
    CHECK(cuStreamDestroy(other));
    printf("event-churn: cycles=%ld sum=%.0f\n", cycles, sum(d));
    fprintf(stderr, "growth_kb=%ld\n", rss_kb() - before);
}

static void CUDA_CB nothing(void *arg)
{
    (void)arg;
}

static void xla_steps(long steps)
{
    CUdeviceptr a, b;
    CUstream other;
    CUevent fixed, prev = NULL, gone = NULL;
    long reused = 0;
    int n = N;
    CHECK(cuMemAlloc(&a, N * 4));
    CHECK(cuMemAlloc(&b, N * 4));
    CHECK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&fixed, CU_EVENT_DISABLE_TIMING));
    fill(a, 1.0f);
    fill(b, 2.0f);
    for (long k = 0; k < steps; k++) {
        CUdeviceptr x = k & 1 ? a : b, y = k & 1 ? b : a;
        CUevent fresh;
        CHECK(cuEventCreate(&fresh, CU_EVENT_DISABLE_TIMING));
        reused += fresh == gone;
        fill(x, (float)(k % 7));
        scale(x, 0.5f);
        CHECK(cuLaunchKernel(f_add, 4, 1, 1, 64, 1, 1, 0, s, (void *[]){&y, &y, &x, &n}, NULL));
        CHECK(cuEventRecord(fresh, s));
        CHECK(cuEventRecord(fixed, s));
        CHECK(cuStreamWaitEvent(other, fresh, 0));
        CHECK(cuLaunchHostFunc(other, nothing, NULL));
        if (prev)
            CHECK(cuEventDestroy(prev));
        gone = prev;
        prev = fresh;
        if (k % 25 == 24) {
            CHECK(cuStreamSynchronize(other));
            printf("xla-steps: step=%ld sum=%.1f\n", k, sum(a) + sum(b));
        }
    }
    CHECK(cuStreamSynchronize(other));
    CHECK(cuEventDestroy(prev));
    CHECK(cuEventDestroy(fixed));
    CHECK(cuStreamDestroy(other));
    printf("xla-steps: reused handles=%s\n", reused ? "some" : "none");
}

static void grid_growth(long iters)
{
    CUdeviceptr d;
    int n = N;
    CHECK(cuMemAlloc(&d, N * 4));
    fill(d, 1.0f);
    for (long k = 0; k < iters; k++) {
        float v = 1.0f;
        scale(d, 1.0f);
        CHECK(cuLaunchKernel(f_scale, (unsigned)(1 + k), 1, 1, 64, 1, 1, 0, s, (void *[]){&d, &v, &n}, NULL));
        CHECK(cuStreamSynchronize(s));
    }
    printf("grid-growth: iters=%ld sum=%.0f\n", iters, sum(d));
}

static void module_churn(long cycles)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, N * 4));
    long before = 0;
    for (long c = 0; c < cycles; c++) {
        CUmodule m;
        CUfunction f;
        CHECK(cuModuleLoadData(&m, image));
        CHECK(cuModuleGetFunction(&f, m, "ag_fill"));
        int n = N;
        float v = (float)(c % 7);
        CHECK(cuLaunchKernel(f, 4, 1, 1, 64, 1, 1, 0, s, (void *[]){&d, &v, &n}, NULL));
        CHECK(cuStreamSynchronize(s));
        CHECK(cuModuleUnload(m));
        if (c == cycles / 10)
            before = rss_kb();
    }
    printf("module-churn: cycles=%ld sum=%.0f\n", cycles, sum(d));
    fprintf(stderr, "growth_kb=%ld\n", rss_kb() - before);
}

static void on_alarm(int sig)
{
    (void)sig;
    exit(0);
}

/* Pattern 7: the handler exits wherever the loop is, inside the library as likely as not. */
static void exit_signal(void)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, N * 4));
    signal(SIGALRM, on_alarm);
    struct itimerval t = {{0, 0}, {0, 20000}};
    setitimer(ITIMER_REAL, &t, NULL);
    for (;;) {
        fill(d, 1.0f);
        scale(d, 2.0f);
        scale(d, 0.5f);
        CHECK(cuStreamSynchronize(s));
    }
}

/* Pattern 7, deterministically: the stand-in's AG_FAKE_SIGNAL_KERNEL=ag_inc seam raises
 * SIGUSR1 inside the launch of ag_inc, on another stream, in iteration `at` of a learned
 * fill, scale, scale on s (held from iteration 6 on); the handler calls exit(). Exit must
 * not call the driver again from the interrupted thread: the stand-in aborts if it does. */
static void exited(void)
{
    static const char msg[] = "exit-in-driver: exited from the handler\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
}

static void on_usr1(int sig)
{
    (void)sig;
    exit(0);
}

static void exit_in_driver(long at)
{
    CUstream t;
    CUdeviceptr d, c;
    CHECK(cuStreamCreate(&t, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc(&d, N * 4));
    CHECK(cuMemAlloc(&c, 4));
    fflush(stdout);
    atexit(exited);
    signal(SIGUSR1, on_usr1);
    for (long it = 0; it < 12; it++) {
        fill(d, 1.0f);
        if (it == at)
            CHECK(cuLaunchKernel(f_inc, 1, 1, 1, 1, 1, 1, 0, t, (void *[]){&c}, NULL));
        scale(d, 2.0f);
        scale(d, 0.5f);
        CHECK(cuStreamSynchronize(s));
    }
    printf("exit-in-driver: no signal\n");
}

/* 15.5: an interprocess event may be waited for by another process: its records are
 * never held (the stand-in has no cuIpcGetEventHandle: the flag alone is shown). */
static void ipc_event(void)
{
    CUdeviceptr d;
    CUevent ev;
    CHECK(cuMemAlloc(&d, N * 4));
    CHECK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS));
    for (int it = 0; it < 12; it++) {
        fill(d, 1.0f);
        scale(d, 2.0f);
        CHECK(cuEventRecord(ev, s));
        scale(d, 0.5f);
        scale(d, 3.0f);
        CHECK(cuStreamSynchronize(s));
        printf("ipc-event: it=%d sum=%.0f\n", it, sum(d));
    }
    CHECK(cuEventSynchronize(ev));
}

static void event_reuse(void)
{
    CUdeviceptr d;
    CUevent ev, timed = NULL;
    CHECK(cuMemAlloc(&d, N * 4));
    CHECK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    for (int round = 0; round < 2; round++) {
        for (int it = 0; it < 12; it++) {
            fill(d, 1.0f);
            scale(d, 2.0f);
            CHECK(cuEventRecord(round ? timed : ev, s));
            scale(d, 0.5f);
            scale(d, 3.0f);
            CHECK(cuStreamSynchronize(s));
            printf("event-reuse: round=%d it=%d sum=%.0f\n", round, it, sum(d));
        }
        if (!round) {
            CHECK(cuEventDestroy(ev));
            CHECK(cuEventCreate(&timed, CU_EVENT_DEFAULT));
            printf("event-reuse: same handle=%s\n", timed == ev ? "yes" : "no");
        }
    }
    float ms = -1;
    CHECK(cuEventElapsedTime(&ms, timed, timed));
    printf("event-reuse: elapsed=%.1f\n", ms);
    CHECK(cuEventDestroy(timed));
}

/* Context switches of every thread but this one: the library's timer, the stand-in's
 * workers. */
static long other_switches(int *threads)
{
    char path[300], line[128];
    long total = 0;
    int me = (int)getpid(), n = 0; /* the main thread's id is the process id */
    DIR *dir = opendir("/proc/self/task");
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == me)
            continue;
        n++;
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f))
            if (strstr(line, "ctxt_switches:"))
                total += atol(strchr(line, ':') + 1);
        if (f)
            fclose(f);
    }
    if (dir)
        closedir(dir);
    *threads = n;
    return total;
}

/* 15.8: after the last hold the timer thread sleeps; a thread woken every quarter of
 * AUTOGRAPH_FLUSH_US would never be quiet for five polls in a row. */
static void idle_timer(void)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, N * 4));
    for (int it = 0; it < 30; it++) {
        fill(d, 1.0f);
        scale(d, 2.0f);
        scale(d, 3.0f);
        CHECK(cuStreamSynchronize(s));
    }
    printf("idle-timer: sum=%.0f\n", sum(d));
    int threads = 0, quiet = 0, polls = 0;
    long before = other_switches(&threads);
    for (; polls < 500 && quiet < 5; polls++) {
        nanosleep(&(struct timespec){0, 20000000}, NULL);
        long now = other_switches(&threads);
        quiet = now == before ? quiet + 1 : 0;
        before = now;
    }
    fprintf(stderr, "threads=%d quiet=%s\n", threads, quiet >= 5 ? "yes" : "no");
}

/* 15.6: the child of a fork made while another thread is inside the library (holding a
 * stream's lock) launches on that stream, synchronizes it and frees memory. */
static atomic_int fork_stop;
static CUdeviceptr fork_buf;
static void *fork_launcher(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx));
    while (!atomic_load(&fork_stop)) {
        fill(fork_buf, 1.0f);
        scale(fork_buf, 2.0f);
        scale(fork_buf, 3.0f);
        CHECK(cuStreamSynchronize(s));
    }
    return NULL;
}

static void fork_lock(long forks)
{
    pthread_t t;
    CHECK(cuMemAlloc(&fork_buf, N * 4));
    if (pthread_create(&t, NULL, fork_launcher, NULL))
        exit(2);
    for (long k = 0; k < forks; k++) {
        CUdeviceptr tmp;
        CHECK(cuMemAlloc(&tmp, N * 4));
        nanosleep(&(struct timespec){0, 2000000}, NULL); /* let the launcher run */
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
            exit(2);
        if (pid == 0) {
            int n = N;
            float v = 5.0f;
            CUresult l = cuLaunchKernel(f_fill, 4, 1, 1, 64, 1, 1, 0, s, (void *[]){&tmp, &v, &n}, NULL);
            CUresult y = cuStreamSynchronize(s);
            CUresult f = cuMemFree(tmp);
            printf("fork-lock: child %ld: launch=%s sync=%s free=%s\n", k, err(l), err(y), err(f));
            fflush(stdout);
            _exit(0);
        }
        int status = 0, waited = 0;
        while (waitpid(pid, &status, WNOHANG) == 0 && waited++ < 500)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
        if (waited > 500) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            printf("fork-lock: child %ld hung\n", k);
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            printf("fork-lock: child %ld status %d\n", k, status);
        }
        CHECK(cuMemFree(tmp));
    }
    atomic_store(&fork_stop, 1);
    pthread_join(t, NULL);
    printf("fork-lock: parent sum=%.0f\n", sum(fork_buf));
}

/* 15.3: functions the build has no wrapper for, looked up as cudart would; the stand-in
 * hands out AG_FAKE_EXTRA_FUNCS of them, each "CUresult (CUdeviceptr, float *out)"
 * reading one float of device memory at the call. The last one is called between two
 * launches of a learned sequence: held launches it could not see would be read stale. */
typedef CUresult (*extra_fn)(CUdeviceptr, float *);
static void unknown_fns(void)
{
    const char *e = getenv("AG_FAKE_EXTRA_FUNCS");
    int count = e ? atoi(e) : 0;
    extra_fn first = NULL, last = NULL;
    for (int i = 0; i < count; i++) {
        char name[64];
        void *p = NULL;
        CUdriverProcAddressQueryResult q;
        snprintf(name, sizeof name, "cuFakeExtraFunction%d", i);
        CHECK(cuGetProcAddress(name, &p, CUDA_VERSION, 0, &q));
        if (!p)
            exit(2);
        if (i == 0)
            first = (extra_fn)p;
        last = (extra_fn)p;
    }
    if (!last)
        exit(2);
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, N * 4));
    for (int it = 0; it < 12; it++) {
        float mid = -1.0f, head = -1.0f;
        fill(d, 1.0f);
        scale(d, 2.0f);
        CHECK(last(d, &mid));
        scale(d, 3.0f);
        scale(d, 0.5f);
        CHECK(cuStreamSynchronize(s));
        CHECK(first(d, &head));
        printf("unknown-fns: it=%d mid=%.0f end=%.0f sum=%.0f\n", it, mid, head, sum(d));
    }
}

/* 15.1: a host function may not call the driver. One launches, from the stand-in's
 * worker (or the driver's thread), the operation the host's held sequence expects next
 * on stream h; another launches on a stream nothing is learned on. */
static CUstream hf_target;
static CUdeviceptr hf_buf;
static atomic_int hf_done;
static CUresult hf_rc, hf_query_rc;
static void CUDA_CB hf_launch(void *arg)
{
    (void)arg;
    int n = N;
    float v = 2.0f;
    hf_rc = cuLaunchKernel(f_scale, 4, 1, 1, 64, 1, 1, 0, hf_target, (void *[]){&hf_buf, &v, &n}, NULL);
    /* A call the engine treats as a barrier: it must not flush the host's held work
     * from this thread, whose submissions the driver refuses. */
    hf_query_rc = cuStreamQuery(hf_target);
    atomic_store(&hf_done, 1);
}

/* What the driver answers inside a host function: the library tells its threads
 * by cuCtxGetCurrent being refused there (src/hook/callback.c). */
static CUresult hf_probe_rc[6];
static void CUDA_CB hf_probe(void *arg)
{
    (void)arg;
    CUcontext c;
    CUdevice d;
    int v, n = N;
    float x = 1.0f;
    hf_probe_rc[0] = cuCtxGetCurrent(&c);
    hf_probe_rc[1] = cuCtxGetDevice(&d);
    hf_probe_rc[2] = cuDriverGetVersion(&v);
    hf_probe_rc[3] = cuStreamQuery(hf_target);
    hf_probe_rc[4] = cuLaunchKernel(f_scale, 4, 1, 1, 64, 1, 1, 0, hf_target, (void *[]){&hf_buf, &x, &n}, NULL);
    hf_probe_rc[5] = cuMemsetD32Async(hf_buf, 0, N, hf_target);
}

static void hostfn_probe(void)
{
    CUstream other;
    CHECK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&hf_target, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc(&hf_buf, N * 4));
    CHECK(cuLaunchHostFunc(other, hf_probe, NULL));
    CHECK(cuStreamSynchronize(other));
    printf("hostfn-probe: cuCtxGetCurrent=%s cuCtxGetDevice=%s cuDriverGetVersion=%s cuStreamQuery=%s "
           "cuLaunchKernel=%s cuMemsetD32Async=%s\n", err(hf_probe_rc[0]), err(hf_probe_rc[1]),
           err(hf_probe_rc[2]), err(hf_probe_rc[3]), err(hf_probe_rc[4]), err(hf_probe_rc[5]));
    CHECK(cuStreamSynchronize(hf_target));
    CHECK(cuMemFree(hf_buf));
    CHECK(cuStreamDestroy(hf_target));
    CHECK(cuStreamDestroy(other));
}

/* An executable with one record node naming a new event, launched once. */
static CUgraphExec one_record(CUgraph *g, CUgraphNode *n, CUevent *ev)
{
    CUgraphExec x;
    CHECK(cuEventCreate(ev, CU_EVENT_DISABLE_TIMING));
    CHECK(cuGraphCreate(g, 0));
    CHECK(cuGraphAddEventRecordNode(n, *g, NULL, 0, *ev));
    CHECK(cuGraphInstantiateWithFlags(&x, *g, 0));
    CHECK(cuGraphLaunch(x, s));
    CHECK(cuStreamSynchronize(s));
    return x;
}

static void event_node_probe(void)
{
    CUgraph g[3];
    CUgraphNode n[3];
    CUgraphExec x[3];
    CUevent old[3], fresh[3], spare;
    for (int i = 0; i < 3; i++)
        x[i] = one_record(&g[i], &n[i], &old[i]);
    CUresult alive = cuGraphExecEventRecordNodeSetEvent(x[0], n[0], old[1]);
    CHECK(cuEventDestroy(old[1])); /* the next event may get its handle: printed */
    CHECK(cuEventCreate(&fresh[1], CU_EVENT_DISABLE_TIMING));
    CUresult destroyed = cuGraphExecEventRecordNodeSetEvent(x[1], n[1], fresh[1]);
    CHECK(cuEventCreate(&spare, CU_EVENT_DISABLE_TIMING));
    CUresult to_spare = cuGraphExecEventRecordNodeSetEvent(x[2], n[2], spare);
    CHECK(cuEventDestroy(old[2]));
    CHECK(cuEventCreate(&fresh[2], CU_EVENT_DISABLE_TIMING));
    CUresult from_spare = cuGraphExecEventRecordNodeSetEvent(x[2], n[2], fresh[2]);
    CUresult from_spare_launch = cuGraphLaunch(x[2], s);
    CHECK(cuStreamSynchronize(s));
    /* Last: the node may still name the destroyed event. */
    CUresult destroyed_launch = cuGraphLaunch(x[1], s);
    CUresult destroyed_sync = cuStreamSynchronize(s);
    printf("event-node-probe: alive=%s; to spare=%s, after the destroy from spare=%s launch=%s; "
           "destroyed=%s (handle %s) launch=%s sync=%s\n", err(alive), err(to_spare), err(from_spare),
           err(from_spare_launch), err(destroyed), fresh[1] == old[1] ? "reused" : "new",
           err(destroyed_launch), err(destroyed_sync));
    for (int i = 0; i < 3; i++) {
        CHECK(cuGraphExecDestroy(x[i]));
        CHECK(cuGraphDestroy(g[i]));
    }
    CHECK(cuEventDestroy(old[0]));
    CHECK(cuEventDestroy(fresh[1]));
    CHECK(cuEventDestroy(fresh[2]));
    CHECK(cuEventDestroy(spare));
}

static void hostfn_launch(void)
{
    CUstream other, plain;
    CHECK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&plain, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc(&hf_buf, N * 4));
    for (int it = 0; it < 12; it++) {
        fill(hf_buf, 1.0f);
        if (it < 6) { /* learned: fill, scale, scale */
            scale(hf_buf, 2.0f);
        } else {      /* the host function launches the second one, or tries to */
            hf_target = s;
            atomic_store(&hf_done, 0);
            CHECK(cuLaunchHostFunc(other, hf_launch, NULL));
            while (!atomic_load(&hf_done))
                ;
        }
        scale(hf_buf, 2.0f);
        CHECK(cuStreamSynchronize(s));
        CHECK(cuStreamSynchronize(other));
        CUresult held = it < 6 ? CUDA_SUCCESS : hf_rc, held_query = it < 6 ? CUDA_SUCCESS : hf_query_rc;
        hf_target = plain;
        atomic_store(&hf_done, 0);
        CHECK(cuLaunchHostFunc(plain, hf_launch, NULL));
        CHECK(cuStreamSynchronize(plain));
        printf("hostfn-launch: it=%d held-stream=%s query=%s plain-stream=%s sum=%.0f\n", it, err(held),
               err(held_query), err(hf_rc), sum(hf_buf));
    }
}

/* Item 2 of issue 8 (invariant 5): a launch that fails at the call because too little
 * device memory is free (the stand-in's AG_FAKE_LAUNCH_NEEDS seam) while the library
 * holds it. Eagerly the error is the launch's; held, it is met when the held work is
 * submitted, and belongs to the stream's next synchronizing call, not to a query of
 * another stream's event. Prints, per iteration, the first error among the stream's
 * calls (launches to synchronize) and what the query of the unrelated event returned. */
static void deferred_error(void)
{
    CUstream t;
    CUevent e;
    CUdeviceptr d, big = 0;
    CHECK(cuStreamCreate(&t, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CHECK(cuMemAlloc(&d, N * 4));
    CHECK(cuEventRecord(e, t));
    CHECK(cuStreamSynchronize(t));
    int n = N;
    for (int it = 0; it < 12; it++) {
        if (it == 8)
            CHECK(cuMemAlloc(&big, 4 << 20)); /* launches fail from here (with the seam) */
        if (it == 9)
            CHECK(cuMemFree(big));
        float one = 1.0f, two = 2.0f;
        CUresult first = cuLaunchKernel(f_fill, 4, 1, 1, 64, 1, 1, 0, s, (void *[]){&d, &one, &n}, NULL);
        CUresult rc = cuLaunchKernel(f_scale, 4, 1, 1, 64, 1, 1, 0, s, (void *[]){&d, &two, &n}, NULL);
        first = first ? first : rc;
        CUresult q = CUDA_ERROR_UNKNOWN;
        if (it == 8) /* the held launches' error must not come back here */
            q = cuEventQuery(e);
        else
            rc = cuLaunchKernel(f_scale, 4, 1, 1, 64, 1, 1, 0, s, (void *[]){&d, &two, &n}, NULL);
        first = first ? first : rc;
        rc = cuStreamSynchronize(s);
        first = first ? first : rc;
        if (it != 8)
            q = cuEventQuery(e);
        printf("deferred-error: it=%d stream=%s query=%s sum=%.0f\n", it, err(first), err(q), sum(d));
    }
    CHECK(cuEventDestroy(e));
    CHECK(cuStreamDestroy(t));
}

/* Item 3 of issue 8: a primary-context reset destroys the context's streams, and the
 * driver may give a dead stream's handle to a new stream (the stand-in does). Stream s,
 * non-blocking, worked before the reset; the new stream is blocking, so work on it
 * waits for the legacy stream's earlier work, which the library may be holding. Prints
 * whether the handle was reused on stderr (a GPU need not reuse it). */
static void launch_on(CUfunction f, CUstream st, void **params)
{
    CHECK(cuLaunchKernel(f, 4, 1, 1, 64, 1, 1, 0, st, params, NULL));
}

static void reused_stream(int release)
{
    CUdevice dev;
    CUdeviceptr d, y;
    CUstream fresh;
    int n = N;
    float one = 1.0f, two = 2.0f;
    CHECK(cuCtxGetDevice(&dev));
    CHECK(cuMemAlloc(&d, N * 4));
    for (int it = 0; it < 3; it++) {
        launch_on(f_fill, s, (void *[]){&d, &one, &n});
        launch_on(f_scale, s, (void *[]){&d, &two, &n});
        CHECK(cuStreamSynchronize(s));
    }
    if (release) /* the last reference: the context is destroyed as by a reset */
        CHECK(cuDevicePrimaryCtxRelease(dev));
    else
        CHECK(cuDevicePrimaryCtxReset(dev)); /* s, d and the module go with the context */
    open_context(dev);
    CHECK(cuMemAlloc(&d, N * 4));
    CHECK(cuMemAlloc(&y, N * 4));
    CHECK(cuStreamCreate(&fresh, 0));
    fprintf(stderr, "reused=%s\n", fresh == s ? "yes" : "no");
    float three = 3.0f;
    for (int it = 0; it < 12; it++) {
        launch_on(f_fill, NULL, (void *[]){&d, &one, &n});
        launch_on(f_scale, NULL, (void *[]){&d, &two, &n});
        launch_on(f_add, fresh, (void *[]){&y, &d, &d, &n}); /* after the legacy stream's work: 4 */
        launch_on(f_scale, NULL, (void *[]){&d, &three, &n});
        CHECK(cuStreamSynchronize(fresh));
        CHECK(cuCtxSynchronize());
        printf("reused-stream: it=%d sum=%.0f\n", it, sum(y));
    }
    CHECK(cuStreamDestroy(fresh));
}

int main(int argc, char **argv)
{
    const char *ptx = getenv("AG_KERNELS_PTX");
    if (argc < 2 || !ptx) {
        fprintf(stderr, "usage: %s unpinned|freed|null-args|attr-event|exit-signal|exit-in-driver [IT]|"
                        "stream-churn N|module-churn N|event-churn N|ipc-event|event-reuse|xla-steps N|grid-growth N|idle-timer|fork-lock [N]|unknown-fns|hostfn-launch|hostfn-probe|event-node-probe|"
                        "deferred-error|reused-stream[-release]   (PTX from env AG_KERNELS_PTX)\n", argv[0]);
        return 2;
    }
    image = read_file(ptx);
    CUdevice dev;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    open_context(dev);
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    const char *p = argv[1];
    long count = argc > 2 ? atol(argv[2]) : 100;
    if (!strcmp(p, "unpinned"))
        unpinned();
    else if (!strcmp(p, "freed"))
        freed();
    else if (!strcmp(p, "null-args"))
        null_args();
    else if (!strcmp(p, "attr-event"))
        attr_event();
    else if (!strcmp(p, "stream-churn"))
        stream_churn(count);
    else if (!strcmp(p, "module-churn"))
        module_churn(count);
    else if (!strcmp(p, "event-churn"))
        event_churn(count);
    else if (!strcmp(p, "exit-in-driver"))
        exit_in_driver(argc > 2 ? count : 8);
    else if (!strcmp(p, "exit-signal"))
        exit_signal();
    else if (!strcmp(p, "ipc-event"))
        ipc_event();
    else if (!strcmp(p, "event-reuse"))
        event_reuse();
    else if (!strcmp(p, "xla-steps"))
        xla_steps(count);
    else if (!strcmp(p, "grid-growth"))
        grid_growth(count);
    else if (!strcmp(p, "idle-timer"))
        idle_timer();
    else if (!strcmp(p, "fork-lock"))
        fork_lock(argc > 2 ? count : 20);
    else if (!strcmp(p, "unknown-fns"))
        unknown_fns();
    else if (!strcmp(p, "hostfn-probe"))
        hostfn_probe();
    else if (!strcmp(p, "event-node-probe"))
        event_node_probe();
    else if (!strcmp(p, "hostfn-launch"))
        hostfn_launch();
    else if (!strcmp(p, "deferred-error"))
        deferred_error();
    else if (!strcmp(p, "reused-stream"))
        reused_stream(0);
    else if (!strcmp(p, "reused-stream-release"))
        reused_stream(1);
    else
        return 2;
    return 0;
}
