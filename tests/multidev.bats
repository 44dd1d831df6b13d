#!/usr/bin/env bats
# Several devices and contexts in one process (tests/progs/multidev.c on the stand-in
# with AG_FAKE_DEVICES=N): the stand-in's rules for devices, contexts, peer access and
# stream ownership, and under the library the same results with every device graphed
# and held work always submitted in its own context.

setup() {
    load test_helper/common-setup
    _common_setup
    MULTIDEV="$PROGS/multidev"
    [ -x "$MULTIDEV" ] || fail "$MULTIDEV is missing: run 'make test'"
}

# graph_launches_per_device TRACE : "dev=D N" lines, one per device that got graph launches.
graph_launches_per_device() {
    sed -n 's/^cuGraphLaunch.* dev=\([0-9-]*\).*/\1/p' "$1" | sort -n | uniq -c | awk '{print "dev=" $2 " " $1}'
}

# failed_calls TRACE : calls the stand-in answered with an error, except the parameter
# probing the library does past a kernel's last parameter (cuFuncGetParamInfo and
# cuKernelGetParamInfo answer CUDA_ERROR_INVALID_VALUE there, by design).
failed_calls() {
    grep ' rc=' "$1" | grep -v '^cu\(Func\|Kernel\)GetParamInfo .*rc=1$' || true
}

# same_and_graphed DEVICES ARGS... : the loop gives the same output with and without the
# library, no call fails under it, and every device got graph launches.
same_and_graphed() {
    local ndev="$1" d
    shift
    run env AG_FAKE_DEVICES="$ndev" "$MULTIDEV" "$@"
    assert_success
    assert_line "devices: $ndev"
    local plain="$output"
    rm -f "$T/trace" "$T/s.json"
    run --separate-stderr with_lib env AG_FAKE_DEVICES="$ndev" AG_FAKE_TRACE="$T/trace" \
        AUTOGRAPH_STATS="$T/s.json" "$MULTIDEV" "$@"
    assert_success
    assert_equal "$output" "$plain"
    assert_equal "$(failed_calls "$T/trace")" ""
    local per_dev
    per_dev="$(graph_launches_per_device "$T/trace")"
    for ((d = 0; d < ndev; d++)); do
        [[ "$per_dev" == *"dev=$d "* ]] || fail "no graph launch on device $d ($ndev devices, $*): $per_dev"
    done
    [ "$(json_stat "$T/s.json" replays)" -gt 0 ]
}

@test "stand-in: AG_FAKE_DEVICES=3 gives three devices with the driver's rules for contexts, peers and streams" {
    run env AG_FAKE_DEVICES=3 "$MULTIDEV" --probe
    assert_success
    assert_line "probe: every context is on its device and owns its allocations"
    assert_line "probe: cuDeviceCanAccessPeer(0, 1): 1"
    assert_line "probe: cuDeviceCanAccessPeer(0, 0): 0"
    assert_line "probe: launch into another context's stream: CUDA_ERROR_INVALID_HANDLE"
    assert_line "probe: kernel reading a peer's memory without peer access: CUDA_ERROR_ILLEGAL_ADDRESS"
    assert_line "probe: cuCtxEnablePeerAccess again: CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"
    assert_line "probe: kernel reading a peer's memory with peer access: CUDA_SUCCESS"
    assert_line "probe: cuCtxDisablePeerAccess again: CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"
    assert_line "probe: launch into a stream of a destroyed context: CUDA_ERROR_CONTEXT_IS_DESTROYED"
    assert_line "probe: passed"
    run env AG_FAKE_DEVICES=3 "$MULTIDEV" --iters 1
    assert_success
    assert_line "devices: 3"
}

@test "stand-in: without AG_FAKE_DEVICES there is one device, as before" {
    run "$MULTIDEV" --iters 1
    assert_success
    assert_line "devices: 1"
    run "$MULTIDEV" --probe
    assert_failure 2
}

@test "stand-in: a malformed AG_FAKE_DEVICES is reported in one line and one device is used" {
    local v
    for v in x 0 17 2x; do
        run --separate-stderr env AG_FAKE_DEVICES="$v" "$MULTIDEV" --iters 1
        assert_success
        assert_line "devices: 1"
        assert_equal "$stderr" "fakecuda: AG_FAKE_DEVICES=$v: expected an integer from 1 to 16; using 1"
    done
}

@test "the probe's answers are the same under the library" {
    run env AG_FAKE_DEVICES=2 "$MULTIDEV" --probe
    assert_success
    local plain="$output"
    run --separate-stderr with_lib env AG_FAKE_DEVICES=2 "$MULTIDEV" --probe
    assert_success
    assert_equal "$output" "$plain"
}

@test "loop on 1, 2 and 4 devices, primary contexts and created streams: same results, every device graphed" {
    local n
    for n in 1 2 4; do
        same_and_graphed "$n" --iters 30
    done
}

@test "loop on 3 devices in contexts made by cuCtxCreate: same results, every device graphed" {
    same_and_graphed 3 --iters 30 --ctx created
}

@test "loop on 3 devices on each context's legacy stream: same results, every device graphed" {
    same_and_graphed 3 --iters 30 --stream legacy
}

@test "loop on 3 devices with peer access and kernels reading a peer's memory: same results, every device graphed" {
    same_and_graphed 3 --iters 30 --peer-access
}

@test "one thread per device, 4 devices, each stream kind and context kind: same results, every device graphed" {
    run env AG_FAKE_DEVICES=4 "$MULTIDEV" --iters 30
    assert_success
    local one_thread="$output"
    same_and_graphed 4 --iters 30 --threads
    assert_equal "$output" "$one_thread"
    same_and_graphed 4 --iters 30 --threads --stream legacy
    same_and_graphed 4 --iters 30 --threads --ctx created --peer-access
}

# The tail of every device is held (it matches the start of a learned sequence) and
# submitted by the program's cuCtxSynchronize in the last device's context: with a
# created stream a submission from the wrong context fails with INVALID_HANDLE, on the
# legacy stream it would reach the last device and read the others' memory without peer
# access (ILLEGAL_ADDRESS). The timer is set far off so that the context sync does it.
@test "held work is submitted in its own context when another device's context is current" {
    local s
    for s in created legacy; do
        same_and_graphed 3 --iters 30 --tail-held --stream "$s"
        rm -f "$T/trace" "$T/s.json"
        run --separate-stderr with_lib env AG_FAKE_DEVICES=3 AG_FAKE_TRACE="$T/trace" AUTOGRAPH_FLUSH_US=10000000 \
            AUTOGRAPH_STATS="$T/s.json" "$MULTIDEV" --iters 30 --tail-held --stream "$s"
        assert_success
        assert_equal "$(failed_calls "$T/trace")" ""
        # held operations were submitted eagerly: the tails
        [ "$(json_stat "$T/s.json" ops_eager)" -gt 0 ]
    done
}
