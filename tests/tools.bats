#!/usr/bin/env bats
# NVTX ranges switched on. (The launcher's tests are in launcher.bats, compare.bats and
# install.bats; the documentation's in docs.bats.)

setup() {
    load test_helper/common-setup
    _common_setup
    ENG="$PROGS/eng_loop"
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
