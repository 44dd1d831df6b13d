/*
 * The AUTOGRAPH_TRACE file: what the engine was asked, call by call, so that
 * detection can be replayed on a CPU (`autograph analyze`) against real
 * programs' launch streams. The writer (trace.c) records at the engine's front
 * door (engine.h), the reader (analyze/) calls the same front door again.
 *
 * A file is the magic line below, then records. A record is a tag byte, the
 * time since the previous record in microseconds and the writer's thread
 * index (both unsigned LEB128 varints), then the tag's fields: varints unless
 * said otherwise, "bytes" being a varint length and that many raw bytes.
 * Handles (streams, contexts, events, pointers) are the process's own values;
 * kernels and streams are defined once and then named by index. A file whose
 * last record is not AG_TR_END was cut short (the process died, or a copy).
 */
#ifndef AG_TRACE_H
#define AG_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define AG_TRACE_MAGIC "autograph trace 1\n"

enum ag_trace_tag {
	/* Definitions. */
	AG_TR_FN = 1,        /* id, bytes name: a driver function's name for boundary records */
	AG_TR_KERNEL,        /* index, handle, is_kernel, layout_ok, nparams, (offset, size) x
			      * nparams, bytes name */
	AG_TR_STREAM,        /* index, handle, ctx, flags (cuStreamGetFlags), ok (the queries
			      * succeeded) */
	AG_TR_CTX,           /* ctx: the writer thread's current context from here on */
	/* Stream operations (ag_engine_submit): kind, api, per_thread, stream index
	 * (0: NULL; 1: CU_STREAM_LEGACY; 2: CU_STREAM_PER_THREAD; 3 + i: defined), status, then
	 *   kernel: kernel index + 1 (0: none), grid x3, block x3, shmem, nattrs, attrs (raw
	 *           CUlaunchAttribute array as bytes), bytes packed arguments
	 *   memset: dst, pitch, width, height, value, elem, two_d
	 *   copy:   dst, src, bytes, and for unified copies the memory-type answers
	 *           for src and dst (0: the query failed, else CUmemorytype)
	 *   event:  event, flags, with_flags
	 *   hostfn: fn, data */
	AG_TR_OP,
	/* Ordering calls: the calling driver function's id + 1 (0: not known), then */
	AG_TR_BARRIER,       /* - */
	AG_TR_STREAM_OP,     /* stream index, per_thread */
	AG_TR_SYNC_STREAM,   /* stream index, per_thread */
	AG_TR_GRAPH_LAUNCH,  /* stream index, per_thread */
	AG_TR_CAPTURE_BEGIN, /* - */
	AG_TR_FORGET_ALL,    /* - */
	AG_TR_STREAM_DESTROYED, /* stream index */
	/* Values (no fn id). */
	AG_TR_CTX_DESTROYED, /* ctx (0: a primary context reset) */
	AG_TR_CAPTURE_BEGAN, /* status */
	AG_TR_CAPTURE_ENDED, /* status */
	AG_TR_MEMORY_GONE,   /* lo, hi */
	AG_TR_EVENT_CREATED, /* event, flags */
	AG_TR_PINNED_ADD,    /* pointer, bytes */
	AG_TR_PINNED_REMOVE, /* pointer */
	AG_TR_END,           /* - : the last record of a file the process finished writing */
	AG_TR_EVENT_DESTROYED, /* event (after END: older traces keep their numbering) */
	AG_TR_TAG_COUNT
};

/* The file itself (trace_file.c), called under trace.c's lock. ag_trace_file_open: 1 if
 * the file was created and locked, else 0 after a warning saying why. */
int ag_trace_file_open(void);
int ag_trace_file_ok(void);
void ag_trace_file_append(const void *p, size_t n);
void ag_trace_file_close(void); /* writes out the buffer and closes */
void ag_trace_file_drop(void);  /* a forked child: forgets the parent's file, writing nothing */

/* Stream indexes below the first defined one. */
enum { AG_TR_S_NULL, AG_TR_S_LEGACY, AG_TR_S_PER_THREAD, AG_TR_S_FIRST };

static inline size_t ag_trace_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		p[n++] = (uint8_t)(b | (v ? 0x80 : 0));
	} while (v);
	return n;
}

/* Reads a varint from [*p, end); 0 when it runs past end (and *p is left at end). */
static inline int ag_trace_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 1;
		}
	}
	*p = end;
	return 0;
}

#endif
