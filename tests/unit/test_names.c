/* Unit tests of qualified kernel names (src/names.c): the small reader and the stripping
 * of libstdc++'s demangled names give the same qualified names, but for template
 * arguments, which only the demangler knows. Built twice (tests/tests.mk): test_names
 * without libstdc++, test_names_cxx linked with it, so that ag_name_qualified takes
 * each path; which one it took is checked too. */
#include "names.h"

#include <dlfcn.h>
#include <string.h>

#include "unit.h"

struct name_case {
    const char *mangled, *with_demangler, *small_reader;
};

static const struct name_case cases[] = {
    {"_Z6ag_addPfS_i", "ag_add", "ag_add"},
    {"_ZN2ns4kernEPf", "ns::kern", "ns::kern"},
    {"_ZN2ns4scanIiEEvPT_i", "ns::scan<int>", "ns::scan"},
    {"_ZN2ns12_GLOBAL__N_14anonEi", "ns::(anonymous namespace)::anon",
     "ns::(anonymous namespace)::anon"},
    {"_ZN5outer5inner6kernelEv", "outer::inner::kernel", "outer::inner::kernel"},
    {"_ZNSt6vectorIiE4sizeEv", "std::vector<int>::size", "std::vector"},
    {"_ZSt4swapIiEvRT_S1_", "std::swap<int>", "std::swap"},
    {"_ZL6staticv", "static", "static"},
};

/* Not mangled, or not readable: 0, and the caller matches the name as it is. */
static const char *const not_names[] = {"ag_add", "", "_Z", "_Zx", "_Z99short", "main"};

static void check_all(ag_demangle_fn demangle, int which)
{
    char out[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *want = which ? cases[i].with_demangler : cases[i].small_reader;
        size_t n = ag_name_qualified_with(demangle, cases[i].mangled, out, sizeof out);
        CHECK(n == strlen(want) && strcmp(out, want) == 0, "%s (%s): got \"%s\" (%zu), want \"%s\"",
              cases[i].mangled, which ? "demangler" : "small reader", n ? out : "", n, want);
    }
    for (size_t i = 0; i < sizeof not_names / sizeof *not_names; i++)
        CHECK(ag_name_qualified_with(demangle, not_names[i], out, sizeof out) == 0,
              "\"%s\" (%s) should not be read as a mangled name", not_names[i],
              which ? "demangler" : "small reader");
    /* too small a buffer: nothing rather than a cut name */
    char tiny[4];
    CHECK(ag_name_qualified_with(demangle, "_ZN2ns4kernEPf", tiny, sizeof tiny) == 0,
          "a name longer than the buffer must give 0");
}

int main(void)
{
    ag_demangle_fn demangle;
    *(void **)&demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    check_all(NULL, 0);
    if (demangle)
        check_all(demangle, 1);
    /* ag_name_qualified takes the demangler exactly when the process has libstdc++. */
    char out[256];
    CHECK(ag_name_qualified("_ZN2ns4scanIiEEvPT_i", out, sizeof out) > 0 &&
              strcmp(out, demangle ? "ns::scan<int>" : "ns::scan") == 0,
          "ag_name_qualified gave \"%s\" %s libstdc++", out, demangle ? "with" : "without");
#ifdef EXPECT_LIBSTDCXX
    CHECK(demangle != NULL, "linked with libstdc++, but __cxa_demangle was not found");
#else
    CHECK(demangle == NULL, "not linked with libstdc++, but __cxa_demangle was found");
#endif
    return unit_done();
}
