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
 * still writes its report). sysv_signal, bsd_signal and sigset are not
 * watched: through them a program replaces our handler and sees it as an
 * unknown old one.
 */
#include "signals.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>

#include "driver/real.h"
#include "report.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*sighandler_fn)(int);
typedef sighandler_fn (*signal_fn)(int, sighandler_fn);

static sigaction_fn real_sigaction;
static signal_fn real_signal;
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
	*(void **)&real_sigaction = ag_real_dlsym(RTLD_NEXT, "sigaction");
	*(void **)&real_signal = ag_real_dlsym(RTLD_NEXT, "signal");
}

void ag_signals_arm(void)
{
	if (!real_sigaction || !real_signal)
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

/* glibc's signal(): BSD semantics, the handler's own signal blocked while it runs. */
__attribute__((visibility("default"))) sighandler_fn signal(int sig, sighandler_fn handler)
{
	if (!real_signal)
		ag_signals_init();
	if (!slot(sig) || !__atomic_load_n(&armed, __ATOMIC_ACQUIRE))
		return real_signal(sig, handler);
	struct sigaction sa = {.sa_handler = handler, .sa_flags = SA_RESTART}, old;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	return sigaction(sig, &sa, &old) == 0 ? old.sa_handler : SIG_ERR;
}
