#!/usr/bin/env bats
# Work submitted at the end of a program's life: exit() right after launching without
# synchronizing, and kernels launched from the program's own atexit handler after main
# returns. The statistics are still written, and count everything.

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
    run with_lib env AUTOGRAPH_STATS="$T/s.json" "$PROGS/drv_procaddr" --exit-nosync --sync none \
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

@test "kernels launched from an atexit handler after main returns are counted" {
    local door
    for door in "${DOORS[@]}"; do
        run "$(prog_for_door "$door")" --iters 2 --atexit 25
        assert_success
        assert_line "atexit: counter=25"
        local plain="$output"
        rm -f "$T/s.json"
        run with_lib env AUTOGRAPH_STATS="$T/s.json" "$(prog_for_door "$door")" --iters 2 --atexit 25
        assert_success
        assert_equal "$output" "$plain"
        # 2 x 8 in main, 25 in the handler
        assert_line --regexp '^counts: launches=41 '
        assert_stats_match_counts "$T/s.json"
        assert_equal "$(json_stat "$T/s.json" calls.cuLaunchKernel.$door)" 41
    done
}
