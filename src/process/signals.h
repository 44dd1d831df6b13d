/*
 * Statistics also when the program is ended by SIGTERM or SIGINT, the way
 * batch schedulers and Ctrl-C end programs. Nothing a program can see changes:
 * a handler is ours only where the disposition is the default, and the
 * program is shown the default there; on the signal the report is written,
 * the default restored and the signal raised again, so the process ends by
 * that signal as it would have.
 */
#ifndef AG_SIGNALS_H
#define AG_SIGNALS_H

/* Finds the C library's sigaction and signal; from the library's constructor. */
void ag_signals_init(void);

/* From the first driver call, when statistics are asked for: our handler for each of
 * SIGTERM and SIGINT whose disposition is the default. */
void ag_signals_arm(void);

#endif
