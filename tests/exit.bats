#!/usr/bin/env bats
# Work submitted at the end of a program's life: exit() right after launching without
# synchronizing, and kernels launched from the program's own atexit handler after main
# returns. The statistics are still written, and count everything. A program ended by
# SIGTERM or SIGINT (tests/progs/sig_end.c raises the signal itself, so nothing depends on
# timing) still writes them, ends by the same signal, and sees the default disposition;
# a program's own handler is kept.

setup() {
    load test_helper/common-setup
    _common_setup
}

@test "exit without synchronize: statistics written, counts exact, every door" {
    local door
    for door in "${DOORS[@]}"; do
        rm -f "$T/s.json"
        run --separate-stderr with_lib env AUTOGRAPH_STATS="$T/s.json" "$(prog_for_door "$door")" \
            --exit-nosync --sync none --iters 50 --kernels 10
        assert_success
        assert_line "result: not read back (exit without synchronize)"
        assert_line "counts: launches=500 htod=2 dtoh=0 dtod=50 memsets=3 syncs=0"
        assert_stats_match_counts "$T/s.json"
    done
}

@test "exit without synchronize with threads and the per-thread stream" {
    run with_lib env --default-signal=INT,TERM AUTOGRAPH_STATS="$T/s.json" "$PROGS/drv_procaddr" --exit-nosync --sync none \
        --threads 4 --ptds --stream legacy --iters 20 --kernels 5
    assert_success
    assert_line --regexp '^counts: launches=400 '
    assert_stats_match_counts "$T/s.json"
    assert_equal "$(json_stat "$T/s.json" calls.cuLaunchKernel_ptsz.cuGetProcAddress)" 400
}

@test "exit without synchronize: the stand-in still receives every launch" {
    AG_FAKE_TRACE="$T/t" with_lib "$PROGS/drv_dlsym" --exit-nosync --sync none --iters 30 --kernels 4 >/dev/null
    run grep -c '^cuLaunchKernel ' "$T/t"
    assert_output 120
}

@test "a program that closed the driver before exit: statistics and report written, no call into the unloaded driver" {
    # What a static-cudart program does when its initialization fails (apps/jacobi on the
    # stand-in: exit 2 before, a segmentation fault at exit under the library with statistics).
    run --separate-stderr "$PROGS/unload"
    assert_success
    assert_output "unload: version=13000 driver unloaded"
    run --separate-stderr with_lib env AUTOGRAPH_STATS="$T/s.json" AUTOGRAPH_REPORT="$T/r.txt" "$PROGS/unload"
    assert_success
    assert_output "unload: version=13000 driver unloaded"
    assert_equal "$(json_stat "$T/s.json" end)" "exit"
    [ -s "$T/r.txt" ] || fail "no report written"
}

@test "kernels launched from an atexit handler after main returns are counted" {
    local door
    for door in "${DOORS[@]}"; do
        run "$(prog_for_door "$door")" --iters 2 --atexit 25
        assert_success
        assert_line "atexit: counter=25"
        local plain="$output"
        rm -f "$T/s.json"
        run with_lib env --default-signal=INT,TERM AUTOGRAPH_STATS="$T/s.json" "$(prog_for_door "$door")" --iters 2 --atexit 25
        assert_success
        assert_equal "$output" "$plain"
        # 2 x 8 in main, 25 in the handler
        assert_line --regexp '^counts: launches=41 '
        assert_stats_match_counts "$T/s.json"
        assert_equal "$(json_stat "$T/s.json" calls.cuLaunchKernel.$door)" 41
    done
}

# Each program starts with SIGINT and SIGTERM at their defaults (env --default-signal): a
# shell running make test in the background hands its children SIGINT ignored, and these
# tests are about what the program sees, not about how it was started.

@test "ended by SIGTERM or SIGINT: a valid JSON file with the metadata, the same signal status" {
    local sig status how
    for sig in TERM INT; do
        case $sig in TERM) status=143 how=SIGTERM ;; INT) status=130 how=SIGINT ;; esac
        run env --default-signal=INT,TERM "$PROGS/sig_end" "$sig"
        assert_failure "$status"
        rm -f "$T/s.json"
        run with_lib env --default-signal=INT,TERM AUTOGRAPH_STATS="$T/s.json" "$PROGS/sig_end" "$sig"
        assert_failure "$status"
        assert_line "driver: 13000"
        python3 -m json.tool "$T/s.json" >/dev/null || fail "not valid JSON: $(cat "$T/s.json")"
        assert_equal "$(json_stat "$T/s.json" end)" "$how"
        assert_equal "$(json_stat "$T/s.json" argv)" "[\"$PROGS/sig_end\", \"$sig\"]"
        assert_equal "$(json_stat "$T/s.json" driver_version)" 13000
        assert_equal "$(json_stat "$T/s.json" calls.cuInit.link)" 1
        assert_equal "$(json_stat "$T/s.json" calls.cuDriverGetVersion.link)" 1
    done
}

@test "ended by SIGTERM: the program sees the default disposition, with and without statistics" {
    local stats
    for stats in 0 "$T/s.json"; do
        run with_lib env --default-signal=INT,TERM AUTOGRAPH_STATS="$stats" "$PROGS/sig_end" --query TERM
        assert_failure 143
        assert_line "SIGTERM: default"
        assert_line "SIGINT: default"
    done
    [ -s "$T/s.json" ] || fail "no statistics written"
}

@test "a program's own SIGTERM handler is kept, and the statistics come at its exit" {
    run env --default-signal=INT,TERM "$PROGS/sig_end" --own-handler TERM
    assert_success
    local plain="$output"
    run with_lib env --default-signal=INT,TERM AUTOGRAPH_STATS="$T/s.json" "$PROGS/sig_end" --own-handler --query TERM
    assert_success
    assert_line "own handler: 15"
    assert_equal "$(grep -v '^SIG' <<<"$output")" "$plain"
    assert_equal "$(json_stat "$T/s.json" end)" exit
}

@test "a program that puts SIG_DFL back still writes the statistics on the signal (as Python does on Ctrl-C)" {
    run env --default-signal=INT,TERM "$PROGS/sig_end" --restore-default TERM
    assert_failure 143
    run with_lib env --default-signal=INT,TERM AUTOGRAPH_STATS="$T/s.json" "$PROGS/sig_end" --restore-default --query TERM
    assert_failure 143
    assert_line "SIGTERM: default"
    assert_equal "$(json_stat "$T/s.json" end)" SIGTERM
}
