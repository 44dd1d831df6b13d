/*
 * What the engine knows about each kernel handle a program launches: whether
 * it is a CUkernel or a CUfunction (graph nodes need to know), its parameter
 * layout (so argument values can be copied, hashed and compared), its name
 * and how often it was launched. Learned once per handle, kept in a lock-free
 * table so the launch path only reads.
 */
#ifndef AG_KERNELS_H
#define AG_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <uthash.h>

struct ag_kern {
	uintptr_t handle;
	uint32_t argbytes;   /* size of the packed argument buffer */
	uint16_t nparams;
	uint8_t is_kernel;   /* a CUkernel (launched cast to CUfunction), not a CUfunction */
	uint8_t layout_ok;   /* parameter info was available: arguments can be recorded */
	uint8_t graphable;   /* not excluded by AUTOGRAPH_INCLUDE/EXCLUDE */
	uint8_t dense;       /* parameters cover the buffer with no padding between them */
	uint64_t launches;
	/* Where its launches went, for AUTOGRAPH_REPORT (relaxed atomics, off the replay path):
	 * eager while observing (not a graph node, or no learned sequence held it), held and then
	 * submitted eagerly, inside graph launches (counted when a sequence is retired or reported),
	 * and runs that diverged here (this launch was expected, another came). */
	uint64_t eager_unnodeable, eager_unlearned, flushed, replayed, diverged;
	uint16_t *offset;
	uint16_t *size;
	UT_hash_handle hh;   /* kernels.c: in the retired table, once its handle went away */
	char name[];
};

/* Finds or learns the handle; NULL when the table is full near its slot (not graphable). */
struct ag_kern *ag_kern_get(CUfunction f);

size_t ag_kern_distinct(void);

/* Up to max kernels, most launched first. */
size_t ag_kern_top(const struct ag_kern **out, size_t max);

/* Forgets every handle: modules, libraries or contexts went away. */
void ag_kern_forget_all(void);

#endif
