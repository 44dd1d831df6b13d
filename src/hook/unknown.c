/*
 * Bookkeeping for trampolines.S: which real function each trampoline slot leads
 * to. A slot is given once per distinct function (the same pointer asked for
 * twice reuses its slot) and never taken back; when the slots run out, the
 * function is handed out unwrapped and a warning says so. Its calls then pass
 * no barrier, so from then on the engine holds nothing: held work is submitted
 * and the engine stands aside for the rest of the process (pass-through, as
 * with AUTOGRAPH=0).
 */
#include <pthread.h>
#include <stdint.h>

#include "engine/engine.h"
#include "hook/hook.h"
#include "hook/unknown_slots.h"
#include "log.h"

extern void *const ag_hook_unknown_slots[AG_UNKNOWN_SLOTS];
void *ag_hook_unknown_enter(unsigned slot);

static void *targets[AG_UNKNOWN_SLOTS];
static unsigned used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void *ag_hook_unknown_enter(unsigned slot)
{
	ag_stats_count_unknown();
	if (!ag_hook_in_host_fn()) {
		ag_engine_caller(-1);
		ag_engine_barrier();
	}
	return targets[slot];
}

void *ag_hook_unknown(void *real, const char *asked)
{
	void *out = real;
	pthread_mutex_lock(&lock);
	unsigned i = 0;
	while (i < used && targets[i] != real)
		i++;
	if (i == used && used < AG_UNKNOWN_SLOTS)
		targets[used++] = real;
	if (i < used)
		out = ag_hook_unknown_slots[i];
	static int stood_aside;
	int first_unwrapped = out == real && !stood_aside;
	if (first_unwrapped)
		stood_aside = 1;
	pthread_mutex_unlock(&lock);
	if (first_unwrapped)
		ag_engine_stand_aside();
	if (out == real)
		AG_LOG(AG_LOG_WARN, "%s is unknown to this build and no barrier slot is left; "
				    "it is passed through unobserved and nothing is held any more", asked);
	else
		AG_LOG(AG_LOG_INFO, "%s is unknown to this build: it runs behind a barrier", asked);
	return out;
}
