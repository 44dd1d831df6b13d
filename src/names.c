/*
 * Qualified kernel names. Pure but for finding the demangler: __cxa_demangle
 * is looked up with dlsym(RTLD_DEFAULT), so a C program without libstdc++
 * does not get it loaded into its process; then a reader of the common subset
 * of the mangling (plain and nested source names, std::) stands in.
 */
#include "names.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static size_t copy_out(const char *s, size_t n, char *out, size_t len)
{
	if (n == 0 || n >= len)
		return 0;
	memcpy(out, s, n);
	out[n] = '\0';
	return n;
}

/* Index of the ')' that closes the '(' at s[i], or 0 if none does. */
static size_t closing(const char *s, size_t i)
{
	int depth = 0;
	for (; s[i]; i++) {
		depth += s[i] == '(';
		depth -= s[i] == ')';
		if (depth == 0)
			return i;
	}
	return 0;
}

/* From a demangled "void ns::k<int>(int*)": "ns::k<int>". A parenthesis followed by
 * "::" belongs to the name ("(anonymous namespace)::k"), the first other one at the top
 * level opens the parameter list; the return type ends at the last top-level space. */
static size_t strip(const char *d, char *out, size_t len)
{
	size_t end = strlen(d), start = 0;
	int depth = 0;
	for (size_t i = 0; d[i]; i++) {
		char c = d[i];
		if (c == '(' && depth == 0) {
			size_t j = closing(d, i);
			if (j && strncmp(d + j + 1, "::", 2) == 0) {
				i = j;
				continue;
			}
			end = i;
			break;
		}
		depth += c == '<' || c == '{' || c == '(' || c == '[';
		depth -= c == '>' || c == '}' || c == ')' || c == ']';
	}
	depth = 0;
	for (size_t i = 0; i < end; i++) {
		char c = d[i];
		if (c == '(') {
			size_t j = closing(d, i);
			if (j && j < end) {
				i = j;
				continue;
			}
		}
		depth += c == '<' || c == '{' || c == '[';
		depth -= c == '>' || c == '}' || c == ']';
		if (c == ' ' && depth == 0)
			start = i + 1;
	}
	return copy_out(d + start, end - start, out, len);
}

/* Appends a component to out[*n], with "::" before all but the first; 0 if it does not fit. */
static int append(char *out, size_t len, size_t *n, const char *s, size_t k)
{
	size_t sep = *n ? 2 : 0;
	if (*n + sep + k >= len)
		return 0;
	memcpy(out + *n, "::", sep);
	memcpy(out + *n + sep, s, k);
	*n += sep + k;
	return 1;
}

/* <source-name> ::= <length> <identifier>, appended; returns the characters read, 0 if
 * there is none at p; sets *full when it does not fit. */
static size_t source_name(const char *p, char *out, size_t len, size_t *n, int *full)
{
	if (!isdigit((unsigned char)*p) || *p == '0')
		return 0;
	char *id;
	unsigned long k = strtoul(p, &id, 10);
	if (strnlen(id, k) < k)
		return 0;
	/* GCC's and nvcc's name for an anonymous namespace, spelled as the demangler does. */
	static const char anon[] = "_GLOBAL__N_1", anon_text[] = "(anonymous namespace)";
	int ok = k == sizeof anon - 1 && memcmp(id, anon, k) == 0
			 ? append(out, len, n, anon_text, sizeof anon_text - 1)
			 : append(out, len, n, id, k);
	if (!ok) {
		*full = 1;
		return 0;
	}
	return (size_t)(id - p) + k;
}

/* The reader without libstdc++: _Z [L] N [r][V][K][R|O] {St | source-name}... E, or _Z [L]
 * [St] source-name. It stops at template arguments and at anything it does not know
 * (constructors, operators, substitutions), keeping what it read. */
static size_t small_reader(const char *m, char *out, size_t len)
{
	const char *p = m + 2;
	size_t n = 0, used;
	int full = 0;
	if (*p == 'L')
		p++;
	int nested = *p == 'N';
	if (nested) {
		for (p++; *p == 'r' || *p == 'V' || *p == 'K'; p++)
			;
		p += *p == 'R' || *p == 'O';
	}
	if (p[0] == 'S' && p[1] == 't') {
		full = !append(out, len, &n, "std", 3);
		p += 2;
	}
	do {
		used = source_name(p, out, len, &n, &full);
		p += used;
	} while (nested && used);
	if (full || n == 0)
		return 0; /* a cut name would match filters it should not */
	out[n] = '\0';
	return n;
}

size_t ag_name_qualified_with(ag_demangle_fn demangle, const char *name, char *out, size_t len)
{
	if (len == 0 || strncmp(name, "_Z", 2) != 0)
		return 0;
	if (!demangle)
		return small_reader(name, out, len);
	int status = -1;
	char *d = demangle(name, NULL, NULL, &status);
	size_t n = status == 0 && d ? strip(d, out, len) : 0;
	free(d);
	return n;
}

size_t ag_name_qualified(const char *name, char *out, size_t len)
{
	ag_demangle_fn demangle;
	*(void **)&demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	return ag_name_qualified_with(demangle, name, out, len);
}
