/*
 * The statistics report, written once per process that reached the driver:
 * the text summary on stderr (AUTOGRAPH_STATS=1) or JSON in a file (a path,
 * expanded by pathfmt.h), with the metadata a tool needs to read it.
 */
#ifndef AG_REPORT_H
#define AG_REPORT_H

/* Notes the start time; called by the library's constructor. */
void ag_report_init(void);

/* Writes the report AUTOGRAPH_STATS asks for, the first time it is called; later calls do
 * nothing. how: "exit", "SIGTERM" or "SIGINT" (in a signal handler, which only changes
 * whether the driver may be looked up for its version). */
void ag_report_write(const char *how, int in_signal);

#endif
