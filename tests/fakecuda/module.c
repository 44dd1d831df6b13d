/* fakecuda modules and libraries: loads the PTX text of tests/kernels/kernels.cu, reads
 * its .entry names and binds each to the C implementation in kernels.c. Owns the
 * CUmodule/CUlibrary/CUfunction/CUkernel handles (distinct objects, as on CUDA 13:
 * a CUkernel may be cast to CUfunction for launches, but the param-info calls tell
 * them apart) and the packing of launch arguments through a kernel's param layout. */
#define _GNU_SOURCE
#include "fake.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    const struct ag_fake_kdef *def;
    struct func *func;
    struct kern *kern;
};

struct module {
    unsigned magic;
    struct library *lib;
    struct entry *entries;
    size_t nentries;
};

struct library {
    unsigned magic;
    struct module *mod;
};

struct func {
    unsigned magic;
    const struct ag_fake_kdef *def;
    struct module *mod;
};

struct kern {
    unsigned magic;
    const struct ag_fake_kdef *def;
    struct library *lib;
};

/* Collects the .entry names of a PTX image that have a C implementation. */
static CUresult parse_ptx(const char *ptx, struct module *m)
{
    if (!strstr(ptx, ".version") || !strstr(ptx, ".target"))
        return CUDA_ERROR_INVALID_IMAGE;
    for (const char *p = strstr(ptx, ".entry"); p; p = strstr(p + 6, ".entry")) {
        const char *q = p + 6;
        if (!isspace((unsigned char)*q))
            continue;
        while (isspace((unsigned char)*q))
            q++;
        size_t n = 0;
        while (isalnum((unsigned char)q[n]) || q[n] == '_' || q[n] == '$')
            n++;
        char name[256];
        if (n == 0 || n >= sizeof name)
            continue;
        memcpy(name, q, n);
        name[n] = 0;
        const struct ag_fake_kdef *def = ag_fake_kdef_find(name);
        if (!def)
            continue;
        struct entry *e = realloc(m->entries, (m->nentries + 1) * sizeof *e);
        if (!e)
            return CUDA_ERROR_OUT_OF_MEMORY;
        m->entries = e;
        m->entries[m->nentries++] = (struct entry){def, NULL, NULL};
    }
    return CUDA_SUCCESS;
}

static CUresult module_new(const char *ptx, struct module **out)
{
    struct ag_fake_ctx *c;
    CUresult rc = ag_fake_current_ctx(&c);
    if (rc)
        return rc;
    struct module *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->magic = AG_FAKE_MODULE;
    rc = parse_ptx(ptx, m);
    if (rc) {
        free(m->entries);
        free(m);
        return rc;
    }
    ag_fake_trace_field("entries=%zu", m->nentries);
    *out = m;
    return CUDA_SUCCESS;
}

static char *read_file(const char *path, CUresult *rc)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *rc = CUDA_ERROR_FILE_NOT_FOUND;
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    do {
        if (len + 4096 + 1 > cap) {
            cap = 2 * cap + 8192;
            char *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                *rc = CUDA_ERROR_OUT_OF_MEMORY;
                return NULL;
            }
            buf = b;
        }
        n = fread(buf + len, 1, 4096, f);
        len += n;
    } while (n > 0);
    fclose(f);
    buf[len] = 0;
    *rc = CUDA_SUCCESS;
    return buf;
}

static CUresult module_load_data(CUmodule *out, const void *image)
{
    struct module *m;
    if (!out || !image)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = module_new(image, &m);
    if (rc == CUDA_SUCCESS)
        *out = (CUmodule)m;
    return rc;
}

static CUresult module_load(CUmodule *out, const char *path)
{
    CUresult rc;
    if (!out || !path)
        return CUDA_ERROR_INVALID_VALUE;
    ag_fake_trace_field("path=%s", path);
    char *text = read_file(path, &rc);
    if (!text)
        return rc;
    rc = module_load_data(out, text);
    free(text);
    return rc;
}

CUresult cuModuleLoad(CUmodule *module, const char *fname) AG_FAKE_BODY(module_load(module, fname))
CUresult cuModuleLoadData(CUmodule *module, const void *image) AG_FAKE_BODY(module_load_data(module, image))
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options,
                            void **optionValues)
    AG_FAKE_BODY((numOptions && (!options || !optionValues)) ? CUDA_ERROR_INVALID_VALUE
                                                             : module_load_data(module, image))

static CUresult check_module(CUmodule h, struct module **out)
{
    struct module *m = (struct module *)h;
    if (!m || m->magic != AG_FAKE_MODULE)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = m;
    return CUDA_SUCCESS;
}

static void module_kill(struct module *m)
{
    m->magic = AG_FAKE_DEAD;
    for (size_t i = 0; i < m->nentries; i++) {
        if (m->entries[i].func)
            m->entries[i].func->magic = AG_FAKE_DEAD;
        if (m->entries[i].kern)
            m->entries[i].kern->magic = AG_FAKE_DEAD;
    }
}

static CUresult module_unload(CUmodule h)
{
    struct module *m;
    CUresult rc = check_module(h, &m);
    if (rc)
        return rc;
    if (m->lib)
        return CUDA_ERROR_INVALID_HANDLE;
    module_kill(m);
    return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule hmod) AG_FAKE_BODY(module_unload(hmod))

static struct entry *find_entry(struct module *m, const char *name)
{
    for (size_t i = 0; i < m->nentries; i++)
        if (strcmp(m->entries[i].def->name, name) == 0)
            return &m->entries[i];
    return NULL;
}

/* The driver hands out one CUfunction per (module, name); so does this. */
static CUresult entry_func(struct module *m, struct entry *e, CUfunction *out)
{
    if (!e->func) {
        e->func = calloc(1, sizeof *e->func);
        if (!e->func)
            return CUDA_ERROR_OUT_OF_MEMORY;
        *e->func = (struct func){AG_FAKE_FUNC, e->def, m};
    }
    *out = (CUfunction)e->func;
    return CUDA_SUCCESS;
}

static CUresult module_get_function(CUfunction *out, CUmodule h, const char *name)
{
    struct module *m;
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    ag_fake_trace_field("name=%s", name);
    CUresult rc = check_module(h, &m);
    if (rc)
        return rc;
    struct entry *e = find_entry(m, name);
    return e ? entry_func(m, e, out) : CUDA_ERROR_NOT_FOUND;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
    AG_FAKE_BODY(module_get_function(hfunc, hmod, name))

static CUresult library_load_data(CUlibrary *out, const void *code)
{
    struct module *m;
    if (!out || !code)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = module_new(code, &m);
    if (rc)
        return rc;
    struct library *l = calloc(1, sizeof *l);
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *l = (struct library){AG_FAKE_LIBRARY, m};
    m->lib = l;
    *out = (CUlibrary)l;
    return CUDA_SUCCESS;
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
                           unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
                           unsigned int numLibraryOptions)
    AG_FAKE_BODY(((numJitOptions && (!jitOptions || !jitOptionsValues)) ||
                  (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
                     ? CUDA_ERROR_INVALID_VALUE
                     : library_load_data(library, code))

static CUresult library_load_file(CUlibrary *out, const char *path)
{
    CUresult rc;
    if (!out || !path)
        return CUDA_ERROR_INVALID_VALUE;
    ag_fake_trace_field("path=%s", path);
    char *text = read_file(path, &rc);
    if (!text)
        return rc;
    rc = library_load_data(out, text);
    free(text);
    return rc;
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                               void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                               void **libraryOptionValues, unsigned int numLibraryOptions)
    AG_FAKE_BODY(((numJitOptions && (!jitOptions || !jitOptionsValues)) ||
                  (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
                     ? CUDA_ERROR_INVALID_VALUE
                     : library_load_file(library, fileName))

static CUresult check_library(CUlibrary h, struct library **out)
{
    struct library *l = (struct library *)h;
    if (!l || l->magic != AG_FAKE_LIBRARY)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = l;
    return CUDA_SUCCESS;
}

static CUresult library_unload(CUlibrary h)
{
    struct library *l;
    CUresult rc = check_library(h, &l);
    if (rc)
        return rc;
    l->magic = AG_FAKE_DEAD;
    module_kill(l->mod);
    return CUDA_SUCCESS;
}

CUresult cuLibraryUnload(CUlibrary library) AG_FAKE_BODY(library_unload(library))

static CUresult library_get_kernel(CUkernel *out, CUlibrary h, const char *name)
{
    struct library *l;
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    ag_fake_trace_field("name=%s", name);
    CUresult rc = check_library(h, &l);
    if (rc)
        return rc;
    struct entry *e = find_entry(l->mod, name);
    if (!e)
        return CUDA_ERROR_NOT_FOUND;
    if (!e->kern) {
        e->kern = calloc(1, sizeof *e->kern);
        if (!e->kern)
            return CUDA_ERROR_OUT_OF_MEMORY;
        *e->kern = (struct kern){AG_FAKE_KERNEL, e->def, l};
    }
    *out = (CUkernel)e->kern;
    return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
    AG_FAKE_BODY(library_get_kernel(pKernel, library, name))

static CUresult library_get_module(CUmodule *out, CUlibrary h)
{
    struct library *l;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = check_library(h, &l);
    if (rc == CUDA_SUCCESS)
        *out = (CUmodule)l->mod;
    return rc;
}

CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library) AG_FAKE_BODY(library_get_module(pMod, library))

static CUresult check_kern(CUkernel h, struct kern **out)
{
    struct kern *k = (struct kern *)h;
    if (!k || k->magic != AG_FAKE_KERNEL)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = k;
    return CUDA_SUCCESS;
}

static CUresult check_func(CUfunction h, struct func **out)
{
    struct func *f = (struct func *)h;
    if (!f || f->magic != AG_FAKE_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = f;
    return CUDA_SUCCESS;
}

static CUresult kernel_get_function(CUfunction *out, CUkernel h)
{
    struct kern *k;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = check_kern(h, &k);
    if (rc)
        return rc;
    struct ag_fake_ctx *c;
    rc = ag_fake_current_ctx(&c);
    if (rc)
        return rc;
    return entry_func(k->lib->mod, find_entry(k->lib->mod, k->def->name), out);
}

CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel) AG_FAKE_BODY(kernel_get_function(pFunc, kernel))

/* cuKernelGetLibrary is a CUDA 12.5 entry point: not built against older headers. */
#if CUDA_VERSION >= 12050
static CUresult kernel_get_library(CUlibrary *out, CUkernel h)
{
    struct kern *k;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = check_kern(h, &k);
    if (rc == CUDA_SUCCESS)
        *out = (CUlibrary)k->lib;
    return rc;
}

CUresult cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel) AG_FAKE_BODY(kernel_get_library(pLib, kernel))
#endif

static CUresult func_get_module(CUmodule *out, CUfunction h)
{
    struct func *f;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = check_func(h, &f);
    if (rc == CUDA_SUCCESS)
        *out = (CUmodule)f->mod;
    return rc;
}

CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc) AG_FAKE_BODY(func_get_module(hmod, hfunc))

static CUresult get_name(const char **out, const struct ag_fake_kdef *def, CUresult rc)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *out = def->name;
    return rc;
}

static CUresult func_get_name(const char **out, CUfunction h)
{
    const struct ag_fake_kdef *def = NULL;
    return get_name(out, def, ag_fake_func_only(h, &def));
}

static CUresult kernel_get_name(const char **out, CUkernel h)
{
    const struct ag_fake_kdef *def = NULL;
    return get_name(out, def, ag_fake_kernel_only(h, &def));
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc) AG_FAKE_BODY(func_get_name(name, hfunc))
CUresult cuKernelGetName(const char **name, CUkernel hfunc) AG_FAKE_BODY(kernel_get_name(name, hfunc))

static CUresult param_info(const struct ag_fake_kdef *def, CUresult rc, size_t i, size_t *off, size_t *size)
{
    if (rc)
        return rc;
    if (!off && !size)
        return CUDA_ERROR_INVALID_VALUE;
    if (i >= def->nparams)
        return CUDA_ERROR_INVALID_VALUE;
    if (off)
        *off = ag_fake_param_offset(def, (unsigned)i);
    if (size)
        *size = def->param[i].size;
    return CUDA_SUCCESS;
}

static CUresult func_param_info(CUfunction h, size_t i, size_t *off, size_t *size)
{
    const struct ag_fake_kdef *def = NULL;
    CUresult rc = ag_fake_func_only(h, &def);
    return param_info(def, rc, i, off, size);
}

static CUresult kernel_param_info(CUkernel h, size_t i, size_t *off, size_t *size)
{
    const struct ag_fake_kdef *def = NULL;
    CUresult rc = ag_fake_kernel_only(h, &def);
    return param_info(def, rc, i, off, size);
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
    AG_FAKE_BODY(func_param_info(func, paramIndex, paramOffset, paramSize))
CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
    AG_FAKE_BODY(kernel_param_info(kernel, paramIndex, paramOffset, paramSize))

static CUresult func_attribute(int *v, CUfunction_attribute a, CUfunction h)
{
    const struct ag_fake_kdef *def;
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ag_fake_launchable(h, &def);
    if (rc)
        return rc;
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = 0; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *v = 0; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *v = 0; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = 16; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *v = 90; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *v = 90; break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *v = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = 232448; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *v = -1; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
    AG_FAKE_BODY(func_attribute(pi, attrib, hfunc))

static CUresult func_set_attribute(CUfunction h, CUfunction_attribute a, int v)
{
    const struct ag_fake_kdef *def;
    CUresult rc = ag_fake_launchable(h, &def);
    if (rc)
        return rc;
    if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && (v < 0 || v > 232448))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
    AG_FAKE_BODY(func_set_attribute(hfunc, attrib, value))

/* ---- shared with launches and graphs ------------------------------------------------ */

CUresult ag_fake_func_only(CUfunction h, const struct ag_fake_kdef **out)
{
    struct func *f;
    CUresult rc = check_func(h, &f);
    if (rc == CUDA_SUCCESS)
        *out = f->def;
    return rc;
}

CUresult ag_fake_kernel_only(CUkernel h, const struct ag_fake_kdef **out)
{
    struct kern *k;
    CUresult rc = check_kern(h, &k);
    if (rc == CUDA_SUCCESS)
        *out = k->def;
    return rc;
}

CUresult ag_fake_launchable(CUfunction h, const struct ag_fake_kdef **out)
{
    if (ag_fake_func_only(h, out) == CUDA_SUCCESS)
        return CUDA_SUCCESS;
    return ag_fake_kernel_only((CUkernel)h, out);
}

CUresult ag_fake_pack_args(const struct ag_fake_kdef *k, void **params, void **extra, unsigned char *args)
{
    size_t need = ag_fake_args_size(k);
    if (params) {
        for (unsigned i = 0; i < k->nparams; i++) {
            if (!params[i])
                return CUDA_ERROR_INVALID_VALUE;
            memcpy(args + ag_fake_param_offset(k, i), params[i], k->param[i].size);
        }
        return CUDA_SUCCESS;
    }
    if (!extra)
        return CUDA_ERROR_INVALID_VALUE;
    void *buf = NULL;
    size_t *size = NULL;
    for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
            size = extra[i + 1];
        else
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (!buf || !size || *size < need)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(args, buf, need);
    return CUDA_SUCCESS;
}
