/* A program that ends itself by a signal after using the driver, for tests/exit.bats:
 *   sig_end [--own-handler] [--restore-default] [--query] TERM|INT
 * It calls cuInit and cuDriverGetVersion (linked with -lcuda), then with --query prints
 * what sigaction reports for SIGTERM and SIGINT ("SIGTERM: default", "handler" or
 * "ignored"), with --own-handler installs its own handler for the signal (which records
 * it; main then prints "own handler: N" and returns 0), with --restore-default installs
 * one and then sets SIG_DFL again with signal(), as Python does before re-raising an
 * unhandled Ctrl-C, and raises the signal. Without its own handler the process ends by
 * the signal; every call's status is checked. */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t caught;

static void own_handler(int sig)
{
    caught = sig;
}

static const char *disposition(int sig)
{
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) != 0)
        return "error";
    if (sa.sa_flags & SA_SIGINFO)
        return "handler";
    return sa.sa_handler == SIG_DFL ? "default" : sa.sa_handler == SIG_IGN ? "ignored" : "handler";
}

int main(int argc, char **argv)
{
    int own = 0, restore = 0, query = 0, sig = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--own-handler") == 0)
            own = 1;
        else if (strcmp(argv[i], "--restore-default") == 0)
            own = restore = 1;
        else if (strcmp(argv[i], "--query") == 0)
            query = 1;
        else if (strcmp(argv[i], "TERM") == 0)
            sig = SIGTERM;
        else if (strcmp(argv[i], "INT") == 0)
            sig = SIGINT;
    }
    if (!sig) {
        fprintf(stderr, "usage: %s [--own-handler] [--restore-default] [--query] TERM|INT\n",
                argv[0]);
        return 2;
    }
    int version = 0;
    CUresult rc = cuInit(0);
    if (rc == CUDA_SUCCESS)
        rc = cuDriverGetVersion(&version);
    if (rc != CUDA_SUCCESS) {
        fprintf(stderr, "driver call failed: %d\n", (int)rc);
        return 1;
    }
    printf("driver: %d\n", version);
    if (query)
        printf("SIGTERM: %s\nSIGINT: %s\n", disposition(SIGTERM), disposition(SIGINT));
    if (own) {
        struct sigaction sa = {.sa_handler = own_handler};
        sigemptyset(&sa.sa_mask);
        if (sigaction(sig, &sa, NULL) != 0) {
            perror("sigaction");
            return 1;
        }
    }
    if (restore && signal(sig, SIG_DFL) != own_handler) {
        fprintf(stderr, "signal() did not return the handler it replaced\n");
        return 1;
    }
    fflush(stdout);
    if (raise(sig) != 0) {
        perror("raise");
        return 1;
    }
    printf("own handler: %d\n", (int)caught);
    return 0;
}
