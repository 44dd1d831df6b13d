/*
 * The library's life: options are read and the engine set up when it loads;
 * at the first driver call, the trace file is opened, the deferred messages
 * are written and, when statistics are asked for, the SIGTERM/SIGINT handlers
 * armed (so a process that never uses CUDA is left entirely alone); held work
 * is submitted and statistics written when the process exits, from the library destructor,
 * which runs after every atexit handler (so work a program submits from its
 * own exit handlers is still counted); a fork first submits held work so that
 * parent and child see the same device state.
 */
#include <pthread.h>

#include "config.h"
#include "engine/engine.h"
#include "log.h"
#include "process/explain.h"
#include "process/report.h"
#include "process/signals.h"
#include "stats.h"

static void before_fork(void)
{
	ag_engine_before_fork();
}

static void after_fork_child(void)
{
	ag_engine_after_fork_child();
}

static void first_driver_call(void)
{
	ag_engine_first_driver_call();
	ag_log_release();
	if (ag_opt.num[AG_OPT_STATS])
		ag_signals_arm();
}

__attribute__((constructor)) static void autograph_load(void)
{
	ag_report_init();
	ag_opt_load();
	if (ag_log_level >= AG_LOG_INFO)
		ag_opt_print();
	ag_signals_init();
	ag_engine_init();
	ag_explain_init();
	ag_stats_on_first_call(first_driver_call);
	pthread_atfork(before_fork, NULL, after_fork_child);
}

__attribute__((destructor)) static void autograph_unload(void)
{
	ag_engine_at_exit();
	ag_report_write("exit", 0);
	ag_explain_write();
}
