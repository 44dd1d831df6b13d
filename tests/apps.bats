#!/usr/bin/env bats
# The workloads in apps/ as far as a machine without a GPU can check them: every
# Python script answers --help and rejects bad options without PyTorch, CuPy or JAX
# installed (their imports wait until the options are parsed), the output lines that
# scripts/bench and scripts/gpu/workloads.sh read have their documented form, and
# cg_solver builds with the apps.mk rule and parses its options. Running them needs
# the GPU: scripts/gpu/workloads.sh.

setup() {
    load test_helper/common-setup
    _common_setup
    APPS="$ROOT/apps"
}

@test "every apps/*.py answers --help without a GPU framework" {
    local f n=0
    for f in "$APPS"/*.py; do
        case "$(basename "$f")" in py_common.py | torch_common.py) continue ;; esac
        run python3 "$f" --help
        assert_success
        # torch_ddp.py counts training steps (torchrun, several processes); the rest iterations.
        if [ "$(basename "$f")" = torch_ddp.py ]; then
            assert_output --partial "--steps"
        else
            assert_output --partial "--iters"
        fi
        assert_output --partial "--check"
        n=$((n + 1))
    done
    (( n >= 8 )) || fail "only $n workload scripts found"
}

@test "the PyTorch scripts offer eager, graph and compile modes" {
    local f
    for f in torch_elementwise torch_mlp torch_transformer torch_train torch_resnet hf_decode; do
        run python3 "$APPS/$f.py" --help
        assert_success
        assert_output --partial "{eager,graph,compile}"
    done
}

@test "bad workload options are refused before anything is imported" {
    run --separate-stderr python3 "$APPS/torch_resnet.py" --mode fast
    assert_equal "$status" 2
    assert_regex "$stderr" "invalid choice: 'fast'"
    run --separate-stderr python3 "$APPS/hf_decode.py" --mode graph --cache dynamic
    assert_equal "$status" 2
    assert_regex "$stderr" "--mode graph needs --cache static"
    run --separate-stderr python3 "$APPS/cupy_loop.py" --iters 0
    assert_equal "$status" 2
    assert_regex "$stderr" "--iters and --warmup must be >= 1"
}

@test "py_common prints the result line, then the timing line the bench reads" {
    run python3 -c "import sys; sys.path.insert(0, '$APPS'); import py_common
py_common.report('demo', 'eager', 4, 'checksum=1.0', 'pass', 2.0)"
    assert_success
    assert_line --index 0 "result: app=demo mode=eager iters=4 checksum=1.0 check=pass"
    assert_line --index 1 "timing: us_per_iter=500.000 total_ms=2.000 time_per_iter_us=500.000"
    run python3 -c "import sys; sys.path.insert(0, '$APPS'); import py_common
py_common.report('demo', 'graph', 1, 'x=1', 'FAIL', 1.0)"
    assert_equal "$status" 1
    assert_line --index 0 "result: app=demo mode=graph iters=1 x=1 check=FAIL"
}

@test "py_common's check is FAIL above the tolerance and for NaN" {
    run --separate-stderr python3 -c "import sys; sys.path.insert(0, '$APPS'); import py_common
print(py_common.check_line('a', 1e-6, 1e-5), py_common.check_line('a', 1e-4, 1e-5),
      py_common.check_line('a', float('nan'), 1e-5))"
    assert_success
    assert_output "pass FAIL FAIL"
}

@test "cg_solver builds with the apps.mk rule and parses its options" {
    run make -s -C "$ROOT" BUILD="$T/b" "$T/b/apps/static/cg_solver"
    assert_success
    run "$T/b/apps/static/cg_solver" --help
    assert_success
    assert_output --partial "usage: cg_solver"
    run "$T/b/apps/static/cg_solver" --size 1
    assert_equal "$status" 2
    assert_output --partial "bad value for --size: 1"
}
