#!/usr/bin/env bats
# The user-facing tools around the library: the autograph launcher (flags and --help from
# src/options.def, install layout, exit status), the generated option documentation, and
# NVTX ranges switched on.

setup() {
    load test_helper/common-setup
    _common_setup
    LAUNCHER="$BUILD/autograph"
    [ -x "$LAUNCHER" ] || fail "$LAUNCHER is missing: run 'make test'"
    ENG="$PROGS/eng_loop"
}

@test "autograph --help lists every option of src/options.def" {
    run "$LAUNCHER" --help
    assert_success
    local env n=0
    while read -r env; do
        assert_output --partial "$env"
        n=$((n + 1))
    done < <(sed -n 's/^AG_OPT([A-Z_]*, *"\(AUTOGRAPH[A-Z_]*\)".*/\1/p' "$ROOT/src/options.def")
    (( n >= 12 )) || fail "only $n options read from options.def"
}

@test "autograph --version, a bad flag value, an unknown flag" {
    run "$LAUNCHER" --version
    assert_success
    assert_output --regexp '^autograph [0-9]+\.[0-9]+\.[0-9]+$'
    run --separate-stderr "$LAUNCHER" --warmup x -- true
    assert_equal "$status" 2
    assert_equal "$(wc -l <<<"$stderr")" 1
    assert_regex "$stderr" '--warmup.*x'
    run "$LAUNCHER" --no-such-flag -- true
    assert_equal "$status" 2
}

@test "autograph passes the program's exit status through" {
    run "$LAUNCHER" -- sh -c 'exit 7'
    assert_equal "$status" 7
}

@test "after make install, autograph --stats -- prog finds the installed library" {
    local prefix="$T/prefix"
    run make -C "$ROOT" --no-print-directory BUILD="$BUILD" PREFIX="$prefix" install
    assert_success
    [ -x "$prefix/bin/autograph" ] && [ -f "$prefix/lib/libautograph.so" ] ||
        fail "install layout: $(find "$prefix")"
    [ -f "$prefix/share/man/man1/autograph.1" ] || fail "man page not installed"
    run --separate-stderr "$prefix/bin/autograph" --stats -- \
        "$ENG" --iters 30
    assert_success
    assert_line --regexp '^counts: launches=[0-9]+ '
    assert_regex "$stderr" 'autograph: statistics'
    assert_regex "$stderr" 'replays'
}

@test "the README's and the man page's option tables match src/options.def" {
    run "$ROOT/scripts/gen-options-doc" --check "$ROOT/README.md" "$ROOT/docs/autograph.1"
    assert_success
}

@test "AUTOGRAPH_NVTX=1: ranges around build, replay and fallback change nothing computed" {
    run timeout 60 "$ENG" --iters 40 --shape-change-at 20
    assert_success
    local plain="$output"
    run --separate-stderr env AUTOGRAPH_NVTX=1 \
        AUTOGRAPH_STATS="$T/s.json" LD_PRELOAD="$LIB" timeout 60 "$ENG" --iters 40 --shape-change-at 20
    assert_success
    assert_equal "$output" "$plain"
    (( $(json_stat "$T/s.json" replays) > 0 )) || fail "nothing replayed"
    (( $(json_stat "$T/s.json" fallback_shape) > 0 )) || fail "no fallback"
}
