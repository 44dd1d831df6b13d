/*
 * Writing the report on SIGTERM and SIGINT without the program noticing.
 *
 * Our handler sits only where the program left the default disposition (we
 * look at the first driver call, when the program has set up its own
 * handlers, if any, and we know the process uses CUDA). The exported
 * sigaction() and signal() keep it invisible: asked for the disposition of a
 * signal that has our handler, they answer SIG_DFL (Python, for one, installs
 * its KeyboardInterrupt handler only where SIGINT is SIG_DFL); a program that
 * installs its own handler or SIG_IGN simply replaces ours; a program that
 * sets SIG_DFL gets ours back, which ends the process the same way (so a
 * Python program ended by Ctrl-C, which restores SIG_DFL and re-raises SIGINT,
 * still writes its report). signal() comes in the C library's BSD flavour
 * (signal, bsd_signal) and its System V one (__sysv_signal, which a program
 * built for strict ISO C or POSIX calls for signal, and sysv_signal); all four
 * are watched. sigset() is not: through it a program replaces our handler and
 * sees it as an unknown old one.
 */
#include "process/signals.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>

#include "driver/real.h"
#include "process/report.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*sighandler_fn)(int);
typedef sighandler_fn (*signal_fn)(int, sighandler_fn);

/* The signal() flavours: name, flags and whether the handler's own signal is blocked
 * while it runs, as the C library sets them. */
enum { BSD_SIGNAL, BSD_SIGNAL_ALIAS, SYSV_SIGNAL, SYSV_SIGNAL_ALIAS, FLAVOURS };
static const struct {
	const char *name;
	int flags, mask_self;
} flavour[FLAVOURS] = {
	[BSD_SIGNAL] = {"signal", SA_RESTART, 1},
	[BSD_SIGNAL_ALIAS] = {"bsd_signal", SA_RESTART, 1},
	[SYSV_SIGNAL] = {"__sysv_signal", SA_RESETHAND | SA_NODEFER, 0},
	[SYSV_SIGNAL_ALIAS] = {"sysv_signal", SA_RESETHAND | SA_NODEFER, 0},
};

static sigaction_fn real_sigaction;
static signal_fn real_signal[FLAVOURS];
static int armed;
static int ours[2]; /* our handler is installed: [0] SIGTERM, [1] SIGINT */

static int *slot(int sig)
{
	return sig == SIGTERM ? &ours[0] : sig == SIGINT ? &ours[1] : NULL;
}

static void on_signal(int sig)
{
	ag_report_write(sig == SIGTERM ? "SIGTERM" : "SIGINT", 1);
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	__atomic_store_n(slot(sig), 0, __ATOMIC_RELEASE);
	real_sigaction(sig, &dfl, NULL);
	/* Blocked while we run: delivered, to the default action, when this returns. */
	raise(sig);
}

static int install(int sig, struct sigaction *old)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGINT);
	int rc = real_sigaction(sig, &sa, old);
	if (rc == 0)
		__atomic_store_n(slot(sig), 1, __ATOMIC_RELEASE);
	return rc;
}

void ag_signals_init(void)
{
	for (int f = 0; f < FLAVOURS; f++)
		*(void **)&real_signal[f] = ag_real_dlsym(RTLD_NEXT, flavour[f].name);
	*(void **)&real_sigaction = ag_real_dlsym(RTLD_NEXT, "sigaction");
}

void ag_signals_arm(void)
{
	if (!real_sigaction)
		return;
	__atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
	const int sigs[] = {SIGTERM, SIGINT};
	for (int i = 0; i < 2; i++) {
		struct sigaction cur;
		if (real_sigaction(sigs[i], NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
		    cur.sa_handler == SIG_DFL)
			install(sigs[i], NULL);
	}
}

static int wants_default(const struct sigaction *act)
{
	return act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL;
}

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act,
						      struct sigaction *old)
{
	int *mine = slot(sig);
	if (!real_sigaction)
		ag_signals_init();
	if (!mine || !__atomic_load_n(&armed, __ATOMIC_ACQUIRE))
		return real_sigaction(sig, act, old);
	int was_ours = __atomic_load_n(mine, __ATOMIC_ACQUIRE);
	int rc;
	if (wants_default(act)) {
		rc = install(sig, old);
	} else {
		rc = real_sigaction(sig, act, old);
		if (rc == 0 && act)
			__atomic_store_n(mine, 0, __ATOMIC_RELEASE);
	}
	if (rc == 0 && old && was_ours) {
		memset(old, 0, sizeof *old);
		old->sa_handler = SIG_DFL;
	}
	return rc;
}

/* signal() of one flavour: our sigaction() with that flavour's flags for the watched
 * signals once armed, the C library's own otherwise. */
static sighandler_fn flavoured_signal(int f, int sig, sighandler_fn handler)
{
	if (!real_sigaction)
		ag_signals_init();
	if (!slot(sig) || !__atomic_load_n(&armed, __ATOMIC_ACQUIRE) || handler == SIG_ERR)
		return real_signal[f] ? real_signal[f](sig, handler) : SIG_ERR;
	struct sigaction sa = {.sa_handler = handler, .sa_flags = flavour[f].flags}, old;
	sigemptyset(&sa.sa_mask);
	if (flavour[f].mask_self)
		sigaddset(&sa.sa_mask, sig);
	return sigaction(sig, &sa, &old) == 0 ? old.sa_handler : SIG_ERR;
}

#define EXPORT __attribute__((visibility("default")))
EXPORT sighandler_fn signal(int sig, sighandler_fn h)
{
	return flavoured_signal(BSD_SIGNAL, sig, h);
}
EXPORT sighandler_fn bsd_signal(int sig, sighandler_fn h)
{
	return flavoured_signal(BSD_SIGNAL_ALIAS, sig, h);
}
EXPORT sighandler_fn __sysv_signal(int sig, sighandler_fn h)
{
	return flavoured_signal(SYSV_SIGNAL, sig, h);
}
EXPORT sighandler_fn sysv_signal(int sig, sighandler_fn h)
{
	return flavoured_signal(SYSV_SIGNAL_ALIAS, sig, h);
}
