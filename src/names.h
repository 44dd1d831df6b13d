/*
 * Kernel names as people write them. The driver reports a kernel's mangled
 * symbol (_ZN2ns4scanIiEEvPT_i); a user writes ns::scan<int> or ns::scan*.
 * This gives the qualified name: the demangled name without its return type
 * and parameter list.
 */
#ifndef AG_NAMES_H
#define AG_NAMES_H

#include <stddef.h>

/*
 * Writes the qualified name of a mangled (Itanium C++ ABI) name into out and returns
 * its length; returns 0 when name is not a mangled name or cannot be read. The
 * demangler is libstdc++'s __cxa_demangle when the process has libstdc++ loaded (found
 * at run time, never loaded by us); without it a small reader handles names and
 * namespaces and leaves template arguments out (ns::scan).
 */
size_t ag_name_qualified(const char *name, char *out, size_t len);

/* The same with the given demangler (NULL: the small reader), for the unit test. */
typedef char *(*ag_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);
size_t ag_name_qualified_with(ag_demangle_fn demangle, const char *name, char *out, size_t len);

#endif
