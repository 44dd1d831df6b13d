#!/usr/bin/env bats
# Many threads launching at once, each on its own stream and buffers: the results are
# those of the same threads without the library, and the counts are exact.

setup() {
    load test_helper/common-setup
    _common_setup
}

@test "8 threads x 10000 launches: counts exact, results unchanged" {
    run "$PROGS/drv_procaddr" --threads 8 --iters 1000 --kernels 10 --n 64 --ex
    assert_success
    local plain="$output"
    run --separate-stderr with_lib env AUTOGRAPH_STATS="$T/s.json" "$PROGS/drv_procaddr" \
        --threads 8 --iters 1000 --kernels 10 --n 64 --ex
    assert_success
    assert_equal "$output" "$plain"
    # per thread: 1000 iteration syncs and 1 before reading back; 1 context sync at the end
    assert_line --regexp '^counts: launches=80000 htod=16 dtoh=24 dtod=8000 memsets=24 syncs=8009$'
    assert_stats_match_counts "$T/s.json"
    assert_equal "$(json_stat "$T/s.json" calls.cuLaunchKernel.cuGetProcAddress)" 40000
    assert_equal "$(json_stat "$T/s.json" calls.cuLaunchKernelEx.cuGetProcAddress)" 40000
}

@test "threads through every door, legacy and per-thread streams" {
    local door m
    for door in "${DOORS[@]}"; do
        for m in "--stream created" "--stream legacy" "--ptds --stream legacy"; do
            rm -f "$T/s.json"
            run with_lib env AUTOGRAPH_STATS="$T/s.json" "$(prog_for_door "$door")" --threads 6 \
                --iters 200 --kernels 5 --n 32 --sync none $m
            assert_success
            assert_line --regexp '^counts: launches=6000 '
            assert_stats_match_counts "$T/s.json"
        done
    done
}

@test "threads that come and go: counts of exited threads are kept" {
    # 32 threads one after another reuse counter blocks; totals must still add up.
    run with_lib env AUTOGRAPH_STATS="$T/s.json" "$PROGS/drv_link" --threads 32 --iters 50 \
        --kernels 3 --n 16
    assert_success
    assert_line --regexp '^counts: launches=4800 '
    assert_stats_match_counts "$T/s.json"
}
