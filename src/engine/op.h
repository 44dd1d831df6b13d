/*
 * Comparing a call with a recorded operation, inline: this runs for every
 * held operation, so the kernel case (the common one) costs no call. The
 * other kinds and launch attributes go out of line to op.c.
 */
#ifndef AG_ENGINE_OP_H
#define AG_ENGINE_OP_H

#include <string.h>

#include "engine/internal.h"

int ag_op_same_other_shape(const struct ag_op *e, const struct ag_call *c);
int ag_op_same_attrs(const struct ag_op *e, const struct ag_call *c);

/* Everything but argument values, field by field. */
static inline int ag_op_same_shape(const struct ag_op *e, const struct ag_call *c)
{
	const struct ag_call *x = &e->call;
	if (x->kind != c->kind || x->api != c->api || x->per_thread != c->per_thread ||
	    x->sync_entry != c->sync_entry)
		return 0;
	if (c->kind != AG_OP_KERNEL)
		return ag_op_same_other_shape(e, c);
	const unsigned *g = c->u.kern.grid, *b = c->u.kern.block, *xg = x->u.kern.grid,
		       *xb = x->u.kern.block;
	return x->u.kern.f == c->u.kern.f && xg[0] == g[0] && xg[1] == g[1] && xg[2] == g[2] &&
	       xb[0] == b[0] && xb[1] == b[1] && xb[2] == b[2] && x->u.kern.shmem == c->u.kern.shmem &&
	       x->u.kern.nattrs == c->u.kern.nattrs && (!c->u.kern.nattrs || ag_op_same_attrs(e, c));
}

/* Whether the call's argument values equal the recorded ones, compared where they lie. */
static inline int ag_op_same_args(const struct ag_kern *k, const struct ag_call *c, const uint8_t *args)
{
	if (!c->u.kern.params)
		return 0;
	for (unsigned i = 0; i < k->nparams; i++) {
		const uint8_t *r = args + k->offset[i];
		const void *v = c->u.kern.params[i];
		uint64_t a = 0, b = 0;
		if (!v)
			return 0;
		switch (k->size[i]) {
		case 8: memcpy(&a, v, 8), memcpy(&b, r, 8); break;
		case 4: memcpy(&a, v, 4), memcpy(&b, r, 4); break;
		case 2: memcpy(&a, v, 2), memcpy(&b, r, 2); break;
		case 1: memcpy(&a, v, 1), memcpy(&b, r, 1); break;
		default: a = memcmp(v, r, k->size[i]) != 0;
		}
		if (a != b)
			return 0;
	}
	return 1;
}

#endif
