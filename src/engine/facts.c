/*
 * What the engine must know about memory and events that the driver will not
 * tell it cheaply: which host ranges are page-locked (an async copy from
 * them reads the buffer when it runs, so it may be deferred; one from
 * pageable memory reads it at the call and may not) and which events were
 * created without timing and not for other processes (only those may become
 * graph event-record nodes: an interprocess event's record may be waited for by
 * another process, which a held record would keep waiting).
 * Both are small tables behind a mutex: they change at allocation time and
 * are read once per recorded copy or event record, never per launch. An
 * event's entry goes when the event is destroyed (a JAX step creates one, a
 * new handle each time); each creation is numbered, so a record of a new
 * event under a destroyed one's handle is not the same argument as before.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/trace.h"

struct range {
	uintptr_t start, end;
};

static struct range *ranges;
static size_t nranges, cap;
static pthread_mutex_t range_lock = PTHREAD_MUTEX_INITIALIZER;

void ag_engine_pinned_add(const void *p, size_t bytes)
{
	if (ag_trace_active)
		ag_trace_values(AG_TR_PINNED_ADD, (uintptr_t)p, bytes, 2);
	ag_facts_pinned_add(p, bytes);
}

void ag_facts_pinned_add(const void *p, size_t bytes)
{
	pthread_mutex_lock(&range_lock);
	if (nranges == cap) {
		size_t ncap = cap ? 2 * cap : 64;
		struct range *r = realloc(ranges, ncap * sizeof *r);
		if (!r) {
			pthread_mutex_unlock(&range_lock);
			return;
		}
		ranges = r;
		cap = ncap;
	}
	size_t i = nranges;
	while (i > 0 && ranges[i - 1].start > (uintptr_t)p) {
		ranges[i] = ranges[i - 1];
		i--;
	}
	ranges[i] = (struct range){(uintptr_t)p, (uintptr_t)p + bytes};
	nranges++;
	pthread_mutex_unlock(&range_lock);
}

size_t ag_engine_pinned_remove(const void *p)
{
	if (ag_trace_active)
		ag_trace_values(AG_TR_PINNED_REMOVE, (uintptr_t)p, 0, 1);
	return ag_facts_pinned_remove(p);
}

size_t ag_facts_pinned_remove(const void *p)
{
	size_t bytes = 0;
	pthread_mutex_lock(&range_lock);
	for (size_t i = 0; i < nranges; i++) {
		if (ranges[i].start == (uintptr_t)p) {
			bytes = ranges[i].end - ranges[i].start;
			memmove(&ranges[i], &ranges[i + 1], (nranges - i - 1) * sizeof *ranges);
			nranges--;
			break;
		}
	}
	pthread_mutex_unlock(&range_lock);
	return bytes;
}

int ag_engine_pinned(const void *p, size_t bytes)
{
	uintptr_t a = (uintptr_t)p, b = a + bytes;
	int found = 0;
	pthread_mutex_lock(&range_lock);
	size_t lo = 0, hi = nranges;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ranges[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && ranges[lo - 1].start <= a && b <= ranges[lo - 1].end && b >= a)
		found = 1;
	pthread_mutex_unlock(&range_lock);
	return found;
}

struct event_info {
	CUevent ev;
	unsigned flags;
	uint64_t gen; /* which creation under the handle this is */
	UT_hash_handle hh;
};

static struct event_info *events;
static uint64_t creations;
static pthread_mutex_t event_lock = PTHREAD_MUTEX_INITIALIZER;

/* An interprocess event is not kept, so its records are never nodes and never held; an
 * entry a destroyed event left under the same handle goes, or is this event's now. */
void ag_engine_event_created(CUevent ev, unsigned flags)
{
	if (ag_trace_active)
		ag_trace_values(AG_TR_EVENT_CREATED, (uintptr_t)ev, flags, 2);
	pthread_mutex_lock(&event_lock);
	struct event_info *e;
	HASH_FIND_PTR(events, &ev, e);
	if (e && (flags & CU_EVENT_INTERPROCESS)) {
		HASH_DEL(events, e);
		free(e);
		e = NULL;
	} else if (!e && !(flags & CU_EVENT_INTERPROCESS) && (e = calloc(1, sizeof *e))) {
		e->ev = ev;
		HASH_ADD_PTR(events, ev, e);
	}
	if (e) {
		e->flags = flags;
		e->gen = ++creations;
	}
	pthread_mutex_unlock(&event_lock);
}

void ag_facts_event_forget(CUevent ev)
{
	pthread_mutex_lock(&event_lock);
	struct event_info *e;
	HASH_FIND_PTR(events, &ev, e);
	if (e) {
		HASH_DEL(events, e);
		free(e);
	}
	pthread_mutex_unlock(&event_lock);
}

int ag_facts_event_arg(CUevent ev, struct ag_event_arg *out)
{
	pthread_mutex_lock(&event_lock);
	struct event_info *e;
	HASH_FIND_PTR(events, &ev, e);
	int ok = e && (e->flags & CU_EVENT_DISABLE_TIMING);
	if (ok)
		*out = (struct ag_event_arg){ev, e->gen};
	pthread_mutex_unlock(&event_lock);
	return ok;
}
