#!/usr/bin/env bats
# The three doors into the driver (cudart-style cuGetProcAddress, cuBLAS-style dlsym,
# linked -lcuda): the library changes no program output in any mode, each door is
# really taken, and the stand-in receives exactly the calls it receives without the
# library (the same lines, arguments included, apart from lookups and the library's own
# kernel queries), so every wrapper forwards each call once.

setup() {
    load test_helper/common-setup
    _common_setup
}

# Modes every door is run in (the per-thread default stream is asked for through each
# door's own way: flags=2, the _ptsz/_ptds symbols, or linking to them).
MODES=(
    "--stream legacy"
    "--stream created"
    "--ptds --stream legacy"
    "--ptds --stream created"
    "--ex"
    "--ex --ptds --stream legacy"
    "--threads 4 --ex"
    "--load library"
    "--sync none --kernels 3 --iters 7"
)

# Runs one door in one mode without and with the library; outputs must be identical.
same_output() {
    local prog="$1"
    shift
    run --separate-stderr "$prog" "$@"
    assert_success
    [ -z "$stderr" ] || fail "stderr without the library: $stderr"
    assert_line --regexp '^result: thread=0 out=[0-9a-f]{8} '
    local plain="$output"
    run --separate-stderr with_lib "$prog" "$@"
    assert_success
    [ -z "$stderr" ] || fail "stderr with the library: $stderr"
    assert_equal "$output" "$plain"
}

@test "cuGetProcAddress door: output identical with and without the library, every mode" {
    local m
    for m in "${MODES[@]}"; do
        same_output "$PROGS/drv_procaddr" $m
    done
}

@test "dlsym door: output identical with and without the library, every mode" {
    local m
    for m in "${MODES[@]}"; do
        same_output "$PROGS/drv_dlsym" $m
    done
}

@test "link door: output identical with and without the library, every mode" {
    local m
    for m in "${MODES[@]}"; do
        same_output "$PROGS/drv_link" $m
    done
}

@test "the three doors compute the same results" {
    run "$PROGS/drv_procaddr" --ex --threads 2
    assert_success
    local first="$output"
    run with_lib "$PROGS/drv_dlsym" --ex --threads 2
    assert_equal "$output" "$first"
    run with_lib "$PROGS/drv_link" --ex --threads 2
    assert_equal "$output" "$first"
}

@test "cudart-style program: lookups go through the cuGetProcAddress door" {
    run with_lib env AUTOGRAPH_STATS="$T/s.json" "$PROGS/drv_procaddr" --iters 2
    assert_success
    # Only cuGetProcAddress_v2 itself was found with dlsym; 28 more entry points
    # (2 self-lookups + 1 through the 11.3 pointer + 27 through the 12.0 one) by lookup.
    assert_equal "$(json_stat "$T/s.json" lookups_dlsym)" 1
    assert_equal "$(json_stat "$T/s.json" lookups_proc)" 30
    assert_equal "$(json_stat "$T/s.json" lookups_unknown)" 0
    # The self-lookup handed out wrappers: both self-looked-up pointers were called
    # through the cuGetProcAddress door (the 11.3 one once, the 12.0 one 27 times).
    assert_equal "$(json_stat "$T/s.json" calls.cuGetProcAddress.cuGetProcAddress)" 1
    assert_equal "$(json_stat "$T/s.json" calls.cuGetProcAddress_v2.cuGetProcAddress)" 27
    assert_equal "$(json_stat "$T/s.json" calls.cuGetProcAddress_v2.dlsym)" 2
    assert_equal "$(json_stat "$T/s.json" calls_by_door.link)" 0
}

@test "cuBLAS-style program: every entry point handed out through dlsym" {
    run with_lib env AUTOGRAPH_STATS="$T/s.json" "$PROGS/drv_dlsym" --iters 2
    assert_success
    assert_equal "$(json_stat "$T/s.json" lookups_dlsym)" 28
    assert_equal "$(json_stat "$T/s.json" lookups_proc)" 0
    assert_equal "$(json_stat "$T/s.json" calls_by_door.cuGetProcAddress)" 0
    assert_equal "$(json_stat "$T/s.json" calls_by_door.link)" 0
}

@test "linked program: calls arrive through the exported symbols, no lookups" {
    run with_lib env AUTOGRAPH_STATS="$T/s.json" "$PROGS/drv_link" --iters 2
    assert_success
    assert_equal "$(json_stat "$T/s.json" lookups_dlsym)" 0
    assert_equal "$(json_stat "$T/s.json" lookups_proc)" 0
    assert_equal "$(json_stat "$T/s.json" calls_by_door.dlsym)" 0
    assert_equal "$(json_stat "$T/s.json" calls_by_door.cuGetProcAddress)" 0
    [ "$(json_stat "$T/s.json" calls_by_door.link)" -gt 0 ]
}

# The stand-in's trace of one run, without and with the library.
traces() {
    local prog="$1"
    shift
    rm -f "$T/plain.trace" "$T/lib.trace" # the stand-in appends
    AG_FAKE_TRACE="$T/plain.trace" "$prog" "$@" >"$T/plain.out"
    AG_FAKE_TRACE="$T/lib.trace" with_lib "$prog" "$@" >"$T/lib.out"
    trace_calls "$T/plain.trace" >"$T/plain.calls"
    trace_calls "$T/lib.trace" "$T/plain.trace" >"$T/lib.calls"
}

@test "the stand-in receives the same calls with and without the library, every door and mode" {
    local door m
    for door in "${DOORS[@]}"; do
        for m in "--stream created --ex" "--ptds --stream legacy --ex" "--load library --sync none"; do
            traces "$(prog_for_door "$door")" --iters 4 $m
            [ "$(wc -l <"$T/plain.calls")" -gt 50 ] || fail "$door $m: trace too short"
            run diff "$T/plain.calls" "$T/lib.calls"
            assert_success
        done
    done
}

@test "each launch reaches the stand-in exactly once through each door" {
    local door launches
    for door in "${DOORS[@]}"; do
        traces "$(prog_for_door "$door")" --iters 5 --kernels 6 --ex --ptds
        launches="$(count launches "$(cat "$T/lib.out")")"
        assert_equal "$launches" 30
        assert_equal "$(grep -c '^cuLaunchKernel_ptsz ' "$T/lib.trace")" 15
        assert_equal "$(grep -c '^cuLaunchKernelEx_ptsz ' "$T/lib.trace")" 15
        assert_equal "$(grep -c '^cuLaunchKernel\(Ex\)\? ' "$T/lib.trace")" 0
    done
}

@test "the cudart-style lookups reach the stand-in once each, with the caller's version and flags" {
    traces "$PROGS/drv_procaddr" --iters 1 --ptds
    # Same lookups, in the same order, as without the library: nothing asked twice.
    run diff <(grep '^cuGetProcAddress' "$T/plain.trace") <(grep '^cuGetProcAddress' "$T/lib.trace")
    assert_success
    run grep -c '^cuGetProcAddress' "$T/lib.trace"
    assert_output 30
    run grep '^cuGetProcAddress_v2 symbol=cuLaunchKernel ' "$T/lib.trace"
    assert_output 'cuGetProcAddress_v2 symbol=cuLaunchKernel version=7000 flags=2 found=cuLaunchKernel_ptsz'
}
