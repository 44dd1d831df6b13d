#!/usr/bin/env bats
# Differential fuzzing of the engine (tests/fuzz/fuzz.c): random race-free programs of
# streams, events, copies, memsets, kernels, host functions and syncs, with repeats and
# near-repeats, must print the same buffer and host-log hashes with and without the
# library, under the defaults and under WARMUP=1, MAX_OPS=3, MAX_GRAPHS=2 and UPDATE=0.
# `make fuzz-long FUZZ_SEEDS=5000` runs many more seeds the same way.

setup() {
    load test_helper/common-setup
    _common_setup
    FUZZ="$BUILD/fuzz/fuzz"
    [ -x "$FUZZ" ] || fail "$FUZZ is missing: run 'make test'"
}

@test "fuzz: a seed's program is deterministic and exercises the engine" {
    run "$FUZZ" 11
    assert_success
    local first="$output"
    run "$FUZZ" 11
    assert_equal "$output" "$first"
    # Across a few seeds the library really graphs, replays and falls back.
    local s replays=0 fallbacks=0
    for s in 2 3 5 8 11 14; do
        rm -f "$T/s.json"
        with_lib env AUTOGRAPH_STATS="$T/s.json" "$FUZZ" "$s" >/dev/null
        replays=$((replays + $(json_stat "$T/s.json" replays)))
        fallbacks=$((fallbacks + $(json_stat "$T/s.json" fallback_shape) + $(json_stat "$T/s.json" fallback_barrier)))
    done
    (( replays > 100 )) || fail "only $replays replays over 6 seeds"
    (( fallbacks > 10 )) || fail "only $fallbacks fallbacks over 6 seeds"
}

@test "fuzz: 1200 seeds, same output with and without the library (and a variant each)" {
    # On the asynchronous stand-in (make test-async) 300 other seeds, to keep the
    # suite's time in bounds.
    local first=1 count=1200
    [ "${AG_FAKE_ASYNC:-0}" != 1 ] || first=100001 count=300
    run "$ROOT/tests/fuzz/run-seeds" "$first" "$count" "$(nproc)"
    assert_success
    assert_line "fuzz: $count programs, 0 mismatches"
}

@test "fuzz with issue 8's shapes (AG_FUZZ_PATTERNS=1): 400 seeds, same output with and without the library" {
    # The stand-in gives a new event the handle of the last one destroyed, as a driver may.
    run env AG_FUZZ_PATTERNS=1 AG_FAKE_EVENT_REUSE=1 "$ROOT/tests/fuzz/run-seeds" 1 400 "$(nproc)"
    assert_success
    assert_line "fuzz: 400 programs, 0 mismatches"
}
