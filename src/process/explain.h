/* The AUTOGRAPH_REPORT file (explain.c): set up at load, written once at exit. */
#ifndef AG_PROCESS_EXPLAIN_H
#define AG_PROCESS_EXPLAIN_H

void ag_explain_init(void);
void ag_explain_write(void);

#endif
