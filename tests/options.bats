#!/usr/bin/env bats
# Every AUTOGRAPH_* variable of src/options.def (the list is read from the file, so a new
# option is covered without touching this test): a bad value prints exactly one warning
# naming the variable and the value, and the program's output and exit status are
# unchanged; good values print nothing. A misspelt AUTOGRAPH_* name gets one warning with
# the closest option; processes that never reach the driver print nothing.

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
            [[ "$stderr" == "autograph: warning: $var=bad@value is not valid: expected "*"; using"* ]] ||
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
    assert_equal "$(printf '%s\n' "$stderr" | grep -c '^autograph: warning: AUTOGRAPH_WARMUP=0 is not valid')" 1
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

@test "a misspelt AUTOGRAPH_* name: one warning with the closest option, the program unaffected" {
    run "$PROGS/drv_link" --iters 2
    local plain="$output"
    run --separate-stderr with_lib env AUTOGRAPH_WARMPU=3 AUTOGRAPH_STAT=1 "$PROGS/drv_link" --iters 2
    assert_success
    assert_equal "$output" "$plain"
    assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 2
    run grep -c '^autograph: warning: AUTOGRAPH_WARMPU is not an autograph variable (ignored); did you mean AUTOGRAPH_WARMUP?$' <<<"$stderr"
    assert_output 1
    run grep -c '^autograph: warning: AUTOGRAPH_STAT is not an autograph variable (ignored); did you mean AUTOGRAPH_STATS?$' <<<"$stderr"
    assert_output 1
    # the launcher's own variable is not a mistake
    run --separate-stderr with_lib env AUTOGRAPH_LIBRARY="$LIB" "$PROGS/drv_link" --iters 2
    assert_success
    assert_equal "$stderr" ""
}

@test "warnings come once, from the process that uses CUDA, not from the shell around it" {
    # bash and the two true's load the library too (LD_PRELOAD is inherited) but never
    # reach the driver: only drv_link warns, once per mistake.
    run --separate-stderr with_lib env AUTOGRAPH_WARMUP=bad AUTOGRAPH_WARMPU=1 \
        bash -c '/bin/true; /bin/true; "$0" --iters 2; /bin/true' "$PROGS/drv_link"
    assert_success
    assert_line --regexp '^counts: '
    assert_equal "$(printf '%s\n' "$stderr" | grep -c 'AUTOGRAPH_WARMUP=bad is not valid')" 1
    assert_equal "$(printf '%s\n' "$stderr" | grep -c 'AUTOGRAPH_WARMPU is not an autograph variable')" 1
    assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 2
    # and a process tree that never uses CUDA says nothing at all
    run --separate-stderr with_lib env AUTOGRAPH_WARMUP=bad AUTOGRAPH_LOG=info \
        bash -c '/bin/true; echo done'
    assert_success
    assert_output done
    assert_equal "$stderr" ""
}

@test "AUTOGRAPH_LOG=info: the option list comes from the process that uses CUDA only" {
    run --separate-stderr with_lib env AUTOGRAPH_LOG=info bash -c '/bin/true; "$0" --iters 1' \
        "$PROGS/drv_link"
    assert_success
    assert_equal "$(printf '%s\n' "$stderr" | grep -c '^autograph: option AUTOGRAPH_WARMUP=2$')" 1
}
