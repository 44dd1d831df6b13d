#!/usr/bin/env bats
# The tree shows the architecture (issue 7): scripts/check-layout on this tree, and on a
# copy with one violation of each kind put in, to show that the check can fail.

setup() {
    load test_helper/common-setup
    _common_setup
}

@test "the source tree keeps its layout rules" {
    run "$ROOT/scripts/check-layout"
    assert_success
    assert_line "layout: 0 violations"
    assert_line --regexp '^  engine -> driver, src$'
}

@test "check-layout catches a cycle, an engine file including hook/, a long function, an unnamed file" {
    mkdir -p "$T/tree"
    cp -r "$ROOT/src" "$ROOT/docs" "$T/tree/"
    printf '#include "hook/hook.h"\n' >>"$T/tree/src/engine/policy.c"
    printf '#include "process/report.h"\n' >>"$T/tree/src/stats.c"
    { echo 'int long_one(void)'; echo '{'; for i in $(seq 90); do echo '	;'; done; echo '}'; } \
        >>"$T/tree/src/engine/seq.c"
    echo '/* new */' >"$T/tree/src/engine/unnamed.c"
    run "$ROOT/scripts/check-layout" "$T/tree"
    assert_failure
    assert_line --partial "src/engine/policy.c: includes hook/hook.h"
    assert_line --partial "folders include each other"
    assert_line --partial "long_one() is 93 lines"
    assert_line --partial "docs/design.md does not name src/engine/unnamed.c"
}
