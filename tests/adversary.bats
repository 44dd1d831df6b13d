#!/usr/bin/env bats
# The patterns of issue 8 (tests/progs/adversary.c), one test each: the pattern's program
# runs without and with the library and must print the same result line with the same
# exit status, and that result must be "ok" (what the CUDA driver guarantees). Patterns
# that block a stream behind a host function, or whose host waits for a host function
# while the library holds it, need the stand-in's asynchronous mode and set it; the
# others run in whichever mode the suite runs (make test-async sets it).
# AUTOGRAPH_FLUSH_US is raised where the timer would otherwise hide the pattern.
# A pattern the engine still gets wrong is skipped as "engine bug: pattern N" until its
# fix lands; the failure seen is in the skip message.

setup() {
    load test_helper/common-setup
    _common_setup
    ADV="$PROGS/adversary"
    [ -x "$ADV" ] || fail "$ADV is missing: run 'make test'"
}

# pattern N [VAR=value ...] : runs the pattern without the library, then with it (and the
# environment given, statistics in $T/s.json); same output and status, and "ok".
pattern() {
    local n="$1"
    shift
    run --separate-stderr timeout 120 "$ADV" --pattern "$n"
    local plain="$output" plain_status="$status"
    assert_equal "without the library: $plain_status" "without the library: 0"
    assert_line --regexp "^result: pattern $n ok"
    rm -f "$T/s.json"
    run --separate-stderr env "$@" AUTOGRAPH_STATS="$T/s.json" LD_PRELOAD="$LIB" timeout 120 "$ADV" --pattern "$n"
    assert_equal "with the library: $output (status $status)" "with the library: $plain (status $plain_status)"
}

async() { export AG_FAKE_ASYNC=1; }

@test "pattern 1: copies from a host buffer after cuMemHostUnregister read it as pageable memory" {
    skip "engine bug: pattern 1 (the graph's copy faults: cuStreamSynchronize returns CUDA_ERROR_LAUNCH_FAILED)"
    pattern 1 AUTOGRAPH_FLUSH_US=10000000
}

@test "pattern 2: the program's own graph waits for an event recorded in held work" {
    skip "engine bug: pattern 2 (the graph read the value of the iteration before)"
    pattern 2 AUTOGRAPH_FLUSH_US=10000000
}

@test "pattern 3: one event recorded on two streams: queries and waits use the latest record" {
    skip "engine bug: pattern 3 (cuEventQuery answered CUDA_SUCCESS for the gated, later record)"
    async
    pattern 3 AUTOGRAPH_FLUSH_US=10000000
}

@test "pattern 4: events recorded through launch attributes are recorded by every launch" {
    skip "engine bug: pattern 4 (both events answer CUDA_SUCCESS behind the gate once graphed)"
    async
    pattern 4 AUTOGRAPH_FLUSH_US=10000000
}

@test "pattern 5: capture on another thread never reorders this thread's stream" {
    # The window is narrow: a pass here does not prove its absence (issue 8: 829 wrong
    # of 300,000 iterations on the H200).
    skip "engine bug: pattern 5 (seen intermittently: iteration 2063 read 18, expected 6)"
    pattern 5 AUTOGRAPH_FLUSH_US=10000000
}

@test "pattern 6: cuLaunchKernelEx with attrs NULL or a NULL parameter gives CUDA_ERROR_INVALID_VALUE" {
    skip "engine bug: pattern 6 (SIGSEGV in the library)"
    pattern 6
}

@test "pattern 7: exit() from a signal handler during graph launches terminates" {
    pattern 7
}

@test "pattern 8: when no thread can be created, work the host waits for still runs" {
    skip "engine bug: pattern 8 (the host waits forever: alarm after 30 s)"
    pattern 8
}

@test "pattern 9: after a device fault, learned launches return the sticky error" {
    skip "engine bug: pattern 9 (the three launches after the fault return CUDA_SUCCESS)"
    pattern 9 AUTOGRAPH_FLUSH_US=10000000
}

@test "pattern 10: a learned memset and copy on freed memory fail at the call" {
    skip "engine bug: pattern 10 (CUDA_SUCCESS at the calls, CUDA_ERROR_ILLEGAL_ADDRESS at the sync)"
    pattern 10 AUTOGRAPH_FLUSH_US=10000000
}

@test "pattern 11: stream and module churn keep memory bounded" {
    skip "engine bug: pattern 11 (2000 streams: +55 MiB resident, +3.5 GiB mapped; 1000 modules: +12 MiB resident, +500 MiB mapped)"
    pattern 11
}

@test "pattern 12: a host-side wait inside a sequence does not cost a timer period forever" {
    # 300 iterations of 0.2 s would pass the program's 40 s alarm.
    skip "engine bug: pattern 12 (every iteration waits for the timer: alarm after 40 s)"
    async
    pattern 12 AUTOGRAPH_FLUSH_US=200000
}

@test "pattern 13: more live sequences than AUTOGRAPH_MAX_GRAPHS do not re-instantiate every replay" {
    skip "engine bug: pattern 13 (1187 graphs built for 1182 replays)"
    pattern 13 AUTOGRAPH_MAX_GRAPHS=2
    local built replays
    built=$(json_stat "$T/s.json" graphs_built)
    replays=$(json_stat "$T/s.json" replays)
    (( built * 2 < replays )) || fail "$built graphs built for $replays replays"
}

@test "pattern 14: the same program makes the same decisions on every run" {
    skip "engine bug: pattern 14 (graphs_built and replays differ between runs: 96/1037, 99/998, 114/904)"
    pattern 14
    local first run_stats i
    first="$(json_stat "$T/s.json" graphs_built) $(json_stat "$T/s.json" replays)"
    for i in 1 2 3 4 5 6 7 8; do
        rm -f "$T/s.json"
        AUTOGRAPH_STATS="$T/s.json" LD_PRELOAD="$LIB" "$ADV" --pattern 14 >/dev/null
        run_stats="$(json_stat "$T/s.json" graphs_built) $(json_stat "$T/s.json" replays)"
        assert_equal "run $i: $run_stats" "run $i: $first"
    done
}
