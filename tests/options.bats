#!/usr/bin/env bats
# Every AUTOGRAPH_* variable of src/options.def (the list is read from the file, so a new
# option is covered without touching this test): a bad value prints exactly one line
# naming the variable and the value, and the program's output and exit status are
# unchanged; good values print nothing.

setup() {
    load test_helper/common-setup
    _common_setup
}

# "NAME DEFAULT" for each row of options.def.
options() {
    sed -n 's/^AG_OPT([A-Z_]*, *"\(AUTOGRAPH[A-Z_]*\)", *"[^"]*", *[A-Z]*, *"\([^"]*\)".*/\1 \2/p' "$OPTIONS_DEF"
}

@test "the option list is read from src/options.def" {
    local rows
    rows="$(grep -c '^AG_OPT(' "$OPTIONS_DEF")"
    [ "$rows" -ge 12 ] || fail "only $rows rows in $OPTIONS_DEF"
    assert_equal "$(options | wc -l)" "$rows"
    run options
    assert_line "AUTOGRAPH 1"
    assert_line "AUTOGRAPH_STATS 0"
    assert_line "AUTOGRAPH_WARMUP 2"
}

@test "a bad value of every variable: one line on stderr, normal output and exit status" {
    local var def plain door prog tail
    for door in "${DOORS[@]}"; do
        prog="$(prog_for_door "$door")"
        run "$prog" --iters 3 --kernels 3
        assert_success
        plain="$output"
        while read -r var def; do
            run --separate-stderr with_lib env "$var=bad@value" "$prog" --iters 3 --kernels 3
            assert_success
            assert_equal "$output" "$plain"
            assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 1
            [[ "$stderr" == "autograph: error: $var=bad@value is not valid: expected "*"; using"* ]] ||
                fail "$var: unexpected stderr: $stderr"
            # run strips trailing blanks, so an empty default leaves "using" at the end
            tail="${stderr##*; using}"
            assert_equal "$var falls back to: ${tail# }" "$var falls back to: $def"
        done < <(options)
    done
}

@test "a program that fails keeps its exit status and error under a bad option" {
    run --separate-stderr "$PROGS/drv_link" --iters 1 /nonexistent.ptx
    assert_failure 2
    local plain="$stderr"
    run --separate-stderr with_lib env AUTOGRAPH_WARMUP=0 "$PROGS/drv_link" --iters 1 /nonexistent.ptx
    assert_failure 2
    assert_equal "$(printf '%s\n' "$stderr" | grep -v '^autograph:')" "$plain"
    assert_equal "$(printf '%s\n' "$stderr" | grep -c '^autograph: error: AUTOGRAPH_WARMUP=0 is not valid')" 1
}

@test "good values of every type print nothing" {
    run --separate-stderr with_lib env AUTOGRAPH=yes AUTOGRAPH_LOG=warn AUTOGRAPH_STATS=0 \
        AUTOGRAPH_WARMUP=3 AUTOGRAPH_MAX_OPS=1k AUTOGRAPH_FLUSH_US=2k AUTOGRAPH_UPDATE=off \
        AUTOGRAPH_INCLUDE='ag_*' AUTOGRAPH_EXCLUDE=ag_big,ag_mix AUTOGRAPH_NVTX=0 \
        "$PROGS/drv_procaddr" --iters 3
    assert_success
    assert_equal "$stderr" ""
    assert_line --regexp '^counts: launches=24 '
}

@test "AUTOGRAPH_LOG=info lists every option once" {
    run --separate-stderr with_lib env AUTOGRAPH_LOG=info "$PROGS/drv_link" --iters 1
    assert_success
    local var def
    while read -r var def; do
        assert_equal "$var: $(printf '%s\n' "$stderr" | grep -c "^autograph: option $var=")" "$var: 1"
    done < <(options)
}
