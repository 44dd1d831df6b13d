/* What the driver-API test programs share (tests/progs/eng_loop.c, holes.c, multidev.c,
 * adversary.c, tests/fuzz/fuzz.c): checking a CUDA call's status and reading a whole
 * file. Header only, static inline; include after <cuda.h>.
 *   CHECK(call)       on failure prints "FILE:LINE: call failed: NAME (code)" on stderr
 *                     (FILE: the including source's base name) and exits 2; a program
 *                     that must also say so on stdout defines CHECK_ON_FAIL(call, name)
 *                     before including this header
 *   check_name(rc)    the error's name, "?" when the driver knows none
 *   read_file(path)   the file's bytes, NUL-terminated; "cannot open"/"cannot read PATH"
 *                     on stderr and exit 2 if it cannot be read */
#ifndef AG_TEST_CHECK_H
#define AG_TEST_CHECK_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline const char *check_name(CUresult rc)
{
    const char *name = NULL;
    if (cuGetErrorName(rc, &name) != CUDA_SUCCESS || !name)
        name = "?";
    return name;
}

static inline void check_rc(CUresult rc, const char *call, const char *file, int line)
{
    if (rc == CUDA_SUCCESS)
        return;
    const char *base = strrchr(file, '/');
#ifdef CHECK_ON_FAIL
    CHECK_ON_FAIL(call, check_name(rc));
#endif
    fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", base ? base + 1 : file, line, call, check_name(rc), (int)rc);
    exit(2);
}

#define CHECK(call) check_rc((call), #call, __FILE__, __LINE__)

static inline char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    buf[len] = 0;
    fclose(f);
    return buf;
}

#endif
