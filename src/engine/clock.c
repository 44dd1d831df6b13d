/*
 * The clock the engine's policy measures costs with (policy.c: an eager
 * submission against a graph launch): the time-stamp counter, two
 * instructions. Its own file because `autograph analyze` replays a trace with
 * a modelled clock in its place (src/analyze/driver.c), so that its decisions
 * depend on the trace only.
 */
#include <x86intrin.h>

#include "engine/internal.h"

uint64_t ag_policy_clock(void)
{
	return __rdtsc();
}
