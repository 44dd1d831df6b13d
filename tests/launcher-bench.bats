#!/usr/bin/env bats
# scripts/bench on the CPU stand-in, with a stand-in program in place of apps/tiny_kernels
# (a script printing the result: and timing: lines the real one prints): the benchmark
# mode still writes bench.json and its table, and --compare runs every program through
# `autograph compare` and reports its verdict and output check.

setup() {
    load test_helper/common-setup
    _common_setup
    LAUNCHER="$BUILD/autograph"
    [ -x "$LAUNCHER" ] || fail "$LAUNCHER is missing: run 'make test'"
    mkdir -p "$T/apps"
    # 40 us per iteration plain, 10 under the library; the same result line on both sides
    # unless $T/differ exists.
    cat >"$T/apps/tiny_kernels" <<EOF
#!/bin/sh
if [ -n "\$LD_PRELOAD" ]; then us=10; else us=40; fi
if [ -n "\$LD_PRELOAD" ] && [ -e "$T/differ" ]; then echo "result: sum=2"; else echo "result: sum=1"; fi
echo "timing: us_per_iter=\$us total_ms=1"
EOF
    chmod +x "$T/apps/tiny_kernels"
}

@test "scripts/bench --compare: autograph compare per program, table and compare.json" {
    run --separate-stderr "$ROOT/scripts/bench" --compare "$LAUNCHER" --apps "$T/apps" \
        --out "$T/out" --only '^tiny_kernels n=100$' --repeats 2
    assert_success
    assert_line '| tiny_kernels n=100 | 40.00 (40.00–40.00) | 10.00 (10.00–10.00) | 0.250 | library lower | — | same |'
    python3 -m json.tool "$T/out/compare.json" >/dev/null || fail "invalid compare.json"
    assert_equal "$(json_stat "$T/out/compare/tiny_kernels_n_100.json" metric.verdict)" 'library lower'
    # A program whose output differs under the library fails the run.
    touch "$T/differ"
    run --separate-stderr "$ROOT/scripts/bench" --compare "$LAUNCHER" --apps "$T/apps" \
        --out "$T/out" --only '^tiny_kernels n=100$' --repeats 2
    assert_failure
    assert_line --partial '| DIFFERS |'
}

@test "scripts/bench (the benchmark mode) still writes bench.json and its table" {
    run --separate-stderr "$ROOT/scripts/bench" --lib "$LIB" --apps "$T/apps" --out "$T/out" \
        --only '^tiny_kernels n=100$' --repeats 1
    assert_success
    assert_line --regexp '^\| tiny_kernels n=100 \| 40\.00 \| 10\.00 \| 40\.00 \| 4\.00× \|'
    python3 -m json.tool "$T/out/bench.json" >/dev/null || fail "invalid bench.json"
}
