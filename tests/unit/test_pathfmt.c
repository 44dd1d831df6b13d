/* Unit tests of file-name templates (src/pathfmt.c): each escape expanded, the sequence
 * number counting per expansion, %q{VAR} set, empty and unset, and the malformed
 * templates rejected by both check and expand with a reason that names the fault. */
#include "pathfmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

static void expands(int line, const char *tmpl, const char *want)
{
    char out[512], why[128] = "";
    CHECK(ag_path_check(tmpl, why, sizeof why) == 0, "line %d: \"%s\" rejected: %s", line, tmpl, why);
    int rc = ag_path_expand(tmpl, out, sizeof out);
    CHECK(rc == 0 && strcmp(out, want) == 0, "line %d: \"%s\" gave rc %d \"%s\", want \"%s\"",
          line, tmpl, rc, rc == 0 ? out : "", want);
}

static void rejected(int line, const char *tmpl, const char *reason)
{
    char out[512], why[128] = "";
    CHECK(ag_path_check(tmpl, why, sizeof why) == -1, "line %d: \"%s\" accepted", line, tmpl);
    CHECK(strstr(why, reason) != NULL, "line %d: \"%s\": reason \"%s\" lacks \"%s\"", line, tmpl,
          why, reason);
    CHECK(ag_path_expand(tmpl, out, sizeof out) == -1, "line %d: \"%s\" expanded", line, tmpl);
}
#define EXPANDS(t, w) expands(__LINE__, t, w)
#define REJECTED(t, r) rejected(__LINE__, t, r)

int main(void)
{
    char want[512], host[256];
    EXPANDS("./stats.json", "./stats.json");
    EXPANDS("", "");
    snprintf(want, sizeof want, "s-%d.json", (int)getpid());
    EXPANDS("s-%p.json", want);
    CHECK(gethostname(host, sizeof host) == 0, "gethostname failed");
    snprintf(want, sizeof want, "/tmp/%s/%d", host, (int)getpid());
    EXPANDS("/tmp/%h/%p", want);
    EXPANDS("100%%.json", "100%.json");
    EXPANDS("%%p", "%p");
    EXPANDS("%%%%", "%%");

    /* %n: 1, 2, 3 ... one number per expansion that has it; checking takes none. */
    char why[128];
    CHECK(ag_path_check("a%n", why, sizeof why) == 0, "%%n rejected: %s", why);
    EXPANDS("run-%n.json", "run-1.json");
    EXPANDS("run-%n.json", "run-2.json");
    EXPANDS("plain.json", "plain.json");
    EXPANDS("%n-%n", "3-4");

    setenv("AG_UNIT_RANK", "7", 1);
    setenv("AG_UNIT_EMPTY", "", 1);
    unsetenv("AG_UNIT_UNSET");
    EXPANDS("rank%q{AG_UNIT_RANK}.json", "rank7.json");
    EXPANDS("r%q{AG_UNIT_EMPTY}.json", "r.json");
    EXPANDS("r%q{AG_UNIT_UNSET}.json", "r.json");
    EXPANDS("%q{AG_UNIT_RANK}%q{AG_UNIT_RANK}/%%q{x}", "77/%q{x}");

    REJECTED("s-%x.json", "%x is not one of");
    REJECTED("s-%P.json", "%P is not one of");
    REJECTED("stats%", "a % at the end");
    REJECTED("s-%q{RANK.json", "%q must be followed by {VARIABLE}");
    REJECTED("s-%q{}.json", "%q must be followed by {VARIABLE}");
    REJECTED("s-%qRANK.json", "%q must be followed by {VARIABLE}");
    REJECTED("s-%q{1X}.json", "%q must be followed by {VARIABLE}");
    REJECTED("s-%q{A-B}.json", "%q must be followed by {VARIABLE}");

    /* a result that does not fit is an error, not a cut path */
    char small[8];
    CHECK(ag_path_expand("0123456789", small, sizeof small) == -1, "overflow not reported");
    CHECK(ag_path_expand("0123456", small, sizeof small) == 0 && strcmp(small, "0123456") == 0,
          "exact fit refused");
    return unit_done();
}
