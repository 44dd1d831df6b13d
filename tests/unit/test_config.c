/* Unit tests of option parsing (src/config.c): ag_opt_parse for good and bad values of
 * every option type, bounds and k/M suffixes, file-name templates in AUTOGRAPH_STATS,
 * ag_opt_list_match, kernel filters on mangled and qualified names, the closest option
 * to a misspelt name, a check that every row of options.def parses its own default and
 * rejects garbage, and one ag_opt_load from a prepared environment with its deferred
 * warnings captured before and after ag_log_release. */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "unit.h"

static char why[256];

/* Expects value to parse for option id, giving num (and text when want_text). */
static void good(int line, enum ag_opt_id id, const char *value, long want)
{
    long num = -12345;
    const char *text = NULL;
    why[0] = '\0';
    int rc = ag_opt_parse(id, value, &num, &text, why, sizeof why);
    CHECK(rc == 0 && num == want, "line %d: %s=\"%s\": rc %d num %ld, want 0 and %ld (why: %s)",
          line, ag_opt_table[id].env, value, rc, num, want, why);
}

/* Expects value to be rejected, with an explanation containing expect. */
static void bad(int line, enum ag_opt_id id, const char *value, const char *expect)
{
    long num = -12345;
    const char *text = NULL;
    why[0] = '\0';
    int rc = ag_opt_parse(id, value, &num, &text, why, sizeof why);
    CHECK(rc == -1, "line %d: %s=\"%s\" accepted (num %ld), should be rejected", line,
          ag_opt_table[id].env, value, num);
    CHECK(strstr(why, expect) != NULL, "line %d: %s=\"%s\": why \"%s\" lacks \"%s\"", line,
          ag_opt_table[id].env, value, why, expect);
}
#define GOOD(id, v, n) good(__LINE__, AG_OPT_##id, v, n)
#define BAD(id, v, e) bad(__LINE__, AG_OPT_##id, v, e)

static void test_bool(void)
{
    const char *yes[] = {"1", "true", "yes", "on", "TRUE", "Yes", "ON"};
    const char *no[] = {"0", "false", "no", "off", "FALSE", "No", "Off"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        GOOD(ENABLE, yes[i], 1);
        GOOD(UPDATE, yes[i], 1);
        GOOD(NVTX, yes[i], 1);
    }
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        GOOD(ENABLE, no[i], 0);
        GOOD(UPDATE, no[i], 0);
        GOOD(NVTX, no[i], 0);
    }
    const char *junk[] = {"", "2", "-1", "10", "tru", "yes ", " on", "enable", "y", "n"};
    for (size_t i = 0; i < sizeof junk / sizeof *junk; i++)
        BAD(ENABLE, junk[i], "1/true/yes/on or 0/false/no/off");
}

static void test_int(void)
{
    /* AUTOGRAPH_WARMUP: 1..1000 */
    GOOD(WARMUP, "1", 1);
    GOOD(WARMUP, "2", 2);
    GOOD(WARMUP, "1000", 1000);
    GOOD(WARMUP, "1k", 1000);
    GOOD(WARMUP, "1K", 1000);
    GOOD(WARMUP, "+7", 7);
    BAD(WARMUP, "0", "from 1 to 1000");
    BAD(WARMUP, "1001", "from 1 to 1000");
    BAD(WARMUP, "-1", "from 1 to 1000");
    BAD(WARMUP, "2k", "from 1 to 1000");
    BAD(WARMUP, "1M", "from 1 to 1000");
    BAD(WARMUP, "", "whole number");
    BAD(WARMUP, "abc", "whole number");
    BAD(WARMUP, "5x", "whole number");
    BAD(WARMUP, "5kk", "whole number");
    BAD(WARMUP, "1.5", "whole number");
    BAD(WARMUP, "k", "whole number");
    BAD(WARMUP, "99999999999999999999999", "whole number");
    BAD(WARMUP, "-99999999999999999999999", "whole number");
    /* AUTOGRAPH_MIN_OPS: 1..100000 */
    GOOD(MIN_OPS, "100k", 100000);
    GOOD(MIN_OPS, "100000", 100000);
    BAD(MIN_OPS, "100001", "from 1 to 100000");
    BAD(MIN_OPS, "101k", "from 1 to 100000");
    /* AUTOGRAPH_MAX_OPS: 1..2048 */
    GOOD(MAX_OPS, "2048", 2048);
    GOOD(MAX_OPS, "2k", 2000);
    BAD(MAX_OPS, "2049", "from 1 to 2048");
    BAD(MAX_OPS, "3k", "from 1 to 2048");
    /* AUTOGRAPH_MAX_GRAPHS: 1..65536 */
    GOOD(MAX_GRAPHS, "65536", 65536);
    GOOD(MAX_GRAPHS, "65k", 65000);
    BAD(MAX_GRAPHS, "65537", "from 1 to 65536");
    BAD(MAX_GRAPHS, "66k", "from 1 to 65536");
    /* AUTOGRAPH_FLUSH_US: 10..10000000 */
    GOOD(FLUSH_US, "10", 10);
    GOOD(FLUSH_US, "10M", 10000000);
    GOOD(FLUSH_US, "1m", 1000000);
    GOOD(FLUSH_US, "2k", 2000);
    BAD(FLUSH_US, "9", "from 10 to 10000000");
    BAD(FLUSH_US, "0k", "from 10 to 10000000");
    BAD(FLUSH_US, "11M", "from 10 to 10000000");
    BAD(FLUSH_US, "10000001", "from 10 to 10000000");
    BAD(FLUSH_US, "10G", "whole number");
}

static void test_level(void)
{
    GOOD(LOG, "error", AG_LOG_ERROR);
    GOOD(LOG, "warn", AG_LOG_WARN);
    GOOD(LOG, "info", AG_LOG_INFO);
    GOOD(LOG, "debug", AG_LOG_DEBUG);
    GOOD(LOG, "DEBUG", AG_LOG_DEBUG);
    GOOD(LOG, "Warn", AG_LOG_WARN);
    const char *junk[] = {"", "warning", "verbose", "3", "0", "err", "debug2"};
    for (size_t i = 0; i < sizeof junk / sizeof *junk; i++)
        BAD(LOG, junk[i], "error, warn, info or debug");
}

static void test_stats(void)
{
    long num;
    const char *text;
    GOOD(STATS, "0", 0);
    GOOD(STATS, "1", 1);
    GOOD(STATS, "./stats.json", 2);
    GOOD(STATS, "/tmp/x", 2);
    GOOD(STATS, "stats.json", 2);
    CHECK(ag_opt_parse(AG_OPT_STATS, "1", &num, &text, why, sizeof why) == 0 && text == NULL,
          "STATS=1 must leave no path (text %s)", text ? text : "NULL");
    const char *path = "out/s.json";
    CHECK(ag_opt_parse(AG_OPT_STATS, path, &num, &text, why, sizeof why) == 0 && text == path,
          "STATS=path must keep the path as text");
    const char *junk[] = {"", "2", "yes", "not-a-thing", "stats", "01"};
    for (size_t i = 0; i < sizeof junk / sizeof *junk; i++)
        BAD(STATS, junk[i], "0, 1 (summary on stderr) or a file path");
    GOOD(STATS, "s-%p-%h-%n-%q{RANK}-100%%.json", 2);
    BAD(STATS, "s-%x.json", "(%x is not one of %p %h %n %q{VAR} %%)");
    BAD(STATS, "s-%q{RANK.json", "(%q must be followed by {VARIABLE})");
    BAD(STATS, "./s%", "(a % at the end");
}

static void test_kernel_filters(void)
{
    struct {
        const char *include, *exclude, *name;
        int want;
    } cases[] = {
        {"", "", "_ZN2ns4kernEPf", 1},
        {"ns::kern", "", "_ZN2ns4kernEPf", 1},
        {"ns::*", "", "_ZN2ns4kernEPf", 1},
        {"_ZN2ns4kernEPf", "", "_ZN2ns4kernEPf", 1},
        {"ns::other", "", "_ZN2ns4kernEPf", 0},
        {"", "ns::kern", "_ZN2ns4kernEPf", 0},
        {"", "ns::k*", "_ZN2ns4kernEPf", 0},
        {"", "_ZN2ns4kern*", "_ZN2ns4kernEPf", 0},
        {"", "kern", "_ZN2ns4kernEPf", 1},
        {"ag_*", "ag_big", "ag_add", 1},
        {"ag_*", "ag_big", "ag_big", 0},
        {"", "ag_add", "_Z6ag_addPfS_i", 0},
        {"ns::scan*", "", "_ZN2ns4scanIiEEvPT_i", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ag_opt.text[AG_OPT_INCLUDE] = cases[i].include;
        ag_opt.num[AG_OPT_INCLUDE] = cases[i].include[0] != '\0';
        ag_opt.text[AG_OPT_EXCLUDE] = cases[i].exclude;
        ag_opt.num[AG_OPT_EXCLUDE] = cases[i].exclude[0] != '\0';
        int got = ag_opt_kernel_graphable(cases[i].name);
        CHECK(got == cases[i].want, "INCLUDE=%s EXCLUDE=%s %s: %d, want %d", cases[i].include,
              cases[i].exclude, cases[i].name, got, cases[i].want);
    }
    ag_opt.num[AG_OPT_INCLUDE] = ag_opt.num[AG_OPT_EXCLUDE] = 0;
}

static void test_closest(void)
{
    struct {
        const char *name, *want;
    } cases[] = {
        {"AUTOGRAPH_WARMPU", "AUTOGRAPH_WARMUP"},
        {"AUTOGRAPH_STAT", "AUTOGRAPH_STATS"},
        {"AUTOGRAPH_MAXOPS", "AUTOGRAPH_MAX_OPS"},
        {"AUTOGRAPH_FLUSH", "AUTOGRAPH_FLUSH_US"},
        {"AUTOGRAPH_log", "AUTOGRAPH_LOG"},
        {"AUTOGRAPH_WARMUP", NULL},
        {"AUTOGRAPH_LIBRARY", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *got = ag_opt_closest(cases[i].name, strlen(cases[i].name));
        CHECK(cases[i].want ? got && strcmp(got, cases[i].want) == 0 : got == NULL,
              "closest to %s: %s, want %s", cases[i].name, got ? got : "NULL",
              cases[i].want ? cases[i].want : "NULL");
    }
    /* a name longer than any option is still a mistake with a closest option */
    char longer[128] = "AUTOGRAPH_WARMUP";
    memset(longer + 16, 'X', 100);
    longer[116] = '\0';
    const char *got = ag_opt_closest(longer, strlen(longer));
    CHECK(got && strcmp(got, "AUTOGRAPH_WARMUP") == 0, "closest to a 116-character name: %s",
          got ? got : "NULL");
}

static void test_list(void)
{
    GOOD(INCLUDE, "", 0);
    GOOD(INCLUDE, "ag_fill", 1);
    GOOD(EXCLUDE, "ag_*,_Z3fooPf,ns::k<int>", 1);
    GOOD(EXCLUDE, "*", 1);
    const char *junk[] = {"a b", "a;b", "x/y", "k(int)", "a\tb"};
    for (size_t i = 0; i < sizeof junk / sizeof *junk; i++) {
        BAD(INCLUDE, junk[i], "comma-separated kernel names");
        BAD(EXCLUDE, junk[i], "comma-separated kernel names");
    }
}

static void test_list_match(void)
{
    struct {
        const char *list, *name;
        int want;
    } cases[] = {
        {"ag_fill,ag_add", "ag_add", 1},
        {"ag_fill,ag_add", "ag_fill", 1},
        {"ag_fill,ag_add", "ag_ad", 0},
        {"ag_fill", "ag_fill2", 0},
        {"ag_fill", "ag_fil", 0},
        {"ag_*", "ag_x", 1},
        {"ag_*", "ag_", 1},
        {"ag_*", "bg_x", 0},
        {"ag_*", "ag", 0},
        {"ag_fill*", "ag_fill", 1},
        {"*", "anything", 1},
        {"", "x", 0},
        {NULL, "x", 0},
        {"ag_fill,", "ag_fill", 1},
        {",ag_fill", "ag_fill", 1},
        {"a,,b", "b", 1},
        {"x*,y", "y", 1},
        {"x*,y", "yy", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int got = ag_opt_list_match(cases[i].list, cases[i].name);
        CHECK(got == cases[i].want, "ag_opt_list_match(\"%s\", \"%s\") = %d, want %d",
              cases[i].list ? cases[i].list : "NULL", cases[i].name, got, cases[i].want);
    }
}

/* Every row of options.def: its default parses, garbage does not, and the bounds hold. */
static void test_table(void)
{
    CHECK(AG_OPT_COUNT >= 12, "options.def has %d rows", (int)AG_OPT_COUNT);
    for (int id = 0; id < AG_OPT_COUNT; id++) {
        const struct ag_opt_desc *d = &ag_opt_table[id];
        long num;
        const char *text;
        CHECK(strncmp(d->env, "AUTOGRAPH", 9) == 0, "%s: not an AUTOGRAPH variable", d->env);
        CHECK(ag_opt_parse(id, d->def, &num, &text, why, sizeof why) == 0,
              "%s: default \"%s\" does not parse: %s", d->env, d->def, why);
        CHECK(ag_opt_parse(id, "not valid!", &num, &text, why, sizeof why) == -1 && why[0],
              "%s accepts \"not valid!\"", d->env);
        if (d->type == AG_TYPE_INT) {
            char v[32];
            CHECK(d->lo <= d->hi, "%s: bounds %ld > %ld", d->env, d->lo, d->hi);
            snprintf(v, sizeof v, "%ld", d->lo);
            CHECK(ag_opt_parse(id, v, &num, &text, why, sizeof why) == 0 && num == d->lo,
                  "%s: lower bound %s rejected", d->env, v);
            snprintf(v, sizeof v, "%ld", d->hi);
            CHECK(ag_opt_parse(id, v, &num, &text, why, sizeof why) == 0 && num == d->hi,
                  "%s: upper bound %s rejected", d->env, v);
            snprintf(v, sizeof v, "%ld", d->lo - 1);
            CHECK(ag_opt_parse(id, v, &num, &text, why, sizeof why) == -1,
                  "%s: %s below the bounds accepted", d->env, v);
            snprintf(v, sizeof v, "%ld", d->hi + 1);
            CHECK(ag_opt_parse(id, v, &num, &text, why, sizeof why) == -1,
                  "%s: %s above the bounds accepted", d->env, v);
        }
    }
}

/* ag_opt_load reads the environment once; a bad value gives one line on stderr and the
 * default. stderr goes to a file for the duration. */
static void test_load(void)
{
    char path[] = "/tmp/ag_unit_stderr_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp failed");
    if (fd < 0)
        return;
    int saved = dup(2);
    dup2(fd, 2);
    setenv("AUTOGRAPH_LOG", "warn", 1);
    setenv("AUTOGRAPH_WARMPU", "3", 1);
    setenv("AUTOGRAPH_LIBRARY", "/x/libautograph.so", 1);
    setenv("AUTOGRAPH_WARMUP", "7", 1);
    setenv("AUTOGRAPH_MAX_OPS", "lots", 1);
    setenv("AUTOGRAPH_STATS", "./s.json", 1);
    setenv("AUTOGRAPH_INCLUDE", "ag_*", 1);
    ag_opt_load();
    setenv("AUTOGRAPH_WARMUP", "9", 1);
    ag_opt_load(); /* a second load changes nothing */
    char before[64] = "";
    ssize_t n = pread(fd, before, sizeof before - 1, 0);
    ag_log_release(); /* the first driver call */
    ag_log_release(); /* and the next ones */
    dup2(saved, 2);
    close(saved);

    char buf[2048] = "";
    CHECK(n == 0, "warnings written before the first driver call: %s", before);
    n = pread(fd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    CHECK(ag_opt.num[AG_OPT_WARMUP] == 7, "WARMUP %ld, want 7", ag_opt.num[AG_OPT_WARMUP]);
    CHECK(ag_opt.num[AG_OPT_MAX_OPS] == 1024, "MAX_OPS %ld, want the default 1024",
          ag_opt.num[AG_OPT_MAX_OPS]);
    CHECK(ag_opt.num[AG_OPT_STATS] == 2 && ag_opt.text[AG_OPT_STATS] &&
              strcmp(ag_opt.text[AG_OPT_STATS], "./s.json") == 0,
          "STATS %ld %s", ag_opt.num[AG_OPT_STATS], ag_opt.text[AG_OPT_STATS]);
    CHECK(ag_opt.num[AG_OPT_INCLUDE] == 1 && strcmp(ag_opt.text[AG_OPT_INCLUDE], "ag_*") == 0,
          "INCLUDE not loaded");
    CHECK(ag_opt.num[AG_OPT_ENABLE] == 1, "ENABLE default %ld", ag_opt.num[AG_OPT_ENABLE]);
    CHECK(ag_log_level == AG_LOG_WARN, "log level %d, want warn", ag_log_level);
    const char *want = "autograph: warning: AUTOGRAPH_MAX_OPS=lots is not valid: expected a whole "
                       "number from 1 to 2048 (k and M suffixes allowed); using 1024\n"
                       "autograph: warning: AUTOGRAPH_WARMPU is not an autograph variable "
                       "(ignored); did you mean AUTOGRAPH_WARMUP?\n";
    CHECK(strcmp(buf, want) == 0, "stderr was \"%s\", want \"%s\"", buf, want);
}

int main(void)
{
    test_bool();
    test_int();
    test_level();
    test_stats();
    test_list();
    test_list_match();
    test_kernel_filters();
    test_closest();
    test_table();
    test_load();
    return unit_done();
}
