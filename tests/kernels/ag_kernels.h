/* Types shared by the test kernels (kernels.cu) and the C programs that launch them.
 * Owned by the fakecuda test infrastructure: the by-value struct must have the same
 * layout in C and CUDA so that argument buffers built on the host match the PTX ABI. */
#ifndef AG_KERNELS_H
#define AG_KERNELS_H

#define AG_BIG_ARG_FLOATS 64

/* 256 bytes, 4-byte aligned: large enough to exercise by-value argument copies. */
struct ag_big_arg {
    float v[AG_BIG_ARG_FLOATS];
};

#endif
