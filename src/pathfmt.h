/*
 * File-name templates for the files the library writes (AUTOGRAPH_STATS), with
 * the escapes valgrind and nsys use: %p the process id, %h the host name, %n a
 * sequence number that grows by one at each expansion in this process
 * (from 1), %q{VAR} the value of environment variable VAR (empty if unset),
 * %% a '%'. A template is checked when the option is read and expanded when
 * the file is written, so %p is the pid of the process that writes it.
 */
#ifndef AG_PATHFMT_H
#define AG_PATHFMT_H

#include <stddef.h>

/* 0 if tmpl is well formed; else -1 and what is wrong in why. */
int ag_path_check(const char *tmpl, char *why, size_t why_len);

/* Expands tmpl into out; 0, or -1 if tmpl is malformed or the result does not fit.
 * Only reads the environment and asks the kernel for pid and host name, so it may run
 * at exit and in a signal handler. */
int ag_path_expand(const char *tmpl, char *out, size_t len);

#endif
