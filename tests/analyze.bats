#!/usr/bin/env bats
# AUTOGRAPH_TRACE and `autograph analyze` (issue 9): the trace records what the engine
# sees, and the analyzer, replaying it through the same engine on the CPU, reaches the
# decisions the live run made; its output is the same on every run; bad input gets a
# message, never a crash.

setup() {
    load test_helper/common-setup
    _common_setup
    ENG="$PROGS/eng_loop"
    AN="$BUILD/autograph-analyze"
    [ -x "$AN" ] || fail "$AN is missing: run 'make'"
}

# traced ARGS...: eng_loop under the library with a trace ($T/t.agt) and statistics ($T/s.json).
# The timer is set far out, so that the live run's decisions depend on the calls alone.
traced() {
    run env AUTOGRAPH_TRACE="$T/t.agt" AUTOGRAPH_STATS="$T/s.json" AUTOGRAPH_FLUSH_US=10000000 \
        LD_PRELOAD="$LIB" "$ENG" "$@"
    assert_success
    [ -s "$T/t.agt" ] || fail "no trace written"
}

@test "analyze: a replayed trace makes the live run's decisions (same operations replayed)" {
    for args in "--iters 200" "--iters 300 --variants 40" "--iters 120 --pingpong" \
        "--iters 100 --sync none" "--iters 150 --arg-change-every" "--iters 80 --barrier-mid"; do
        # shellcheck disable=SC2086
        traced $args
        live=$(json_stat "$T/s.json" ops_replayed)
        ops=$(json_stat "$T/s.json" launches)
        run env AUTOGRAPH_FLUSH_US=10000000 "$AN" "$T/t.agt"
        assert_success
        assert_line --index -1 --regexp "^graphed: $live of [0-9]+ operations \([0-9.]+%\)$"
        [ "$live" -gt 0 ] || fail "$args: nothing replayed live: the comparison shows nothing"
    done
}

@test "analyze: a stream's idle pauses are made again from its trace (AUTOGRAPH_IDLE_OPS)" {
    # 400 iterations that never repeat, then a loop: the live run pauses twice before it
    # learns the loop. The analyzer, with the same option, pauses at the same operations.
    run env AUTOGRAPH_IDLE_OPS=200 AUTOGRAPH_TRACE="$T/t.agt" AUTOGRAPH_STATS="$T/s.json" \
        AUTOGRAPH_FLUSH_US=10000000 LD_PRELOAD="$LIB" "$ENG" --variants 4096 --settle-at 400 --iters 2000
    assert_success
    local pauses unobserved live
    pauses=$(json_stat "$T/s.json" idle_pauses)
    unobserved=$(json_stat "$T/s.json" ops_unobserved)
    live=$(json_stat "$T/s.json" ops_replayed)
    [ "$pauses" -gt 0 ] && [ "$live" -gt 0 ] || fail "live: $pauses pauses, $live replayed"
    run env AUTOGRAPH_IDLE_OPS=200 AUTOGRAPH_FLUSH_US=10000000 "$AN" "$T/t.agt"
    assert_success
    assert_line "idle pauses (AUTOGRAPH_IDLE_OPS operations with nothing learned, replayed or repeating): $pauses, $unobserved operations not observed"
    assert_line --partial "in no learned sequence: $unobserved operations not observed, of any kind"
    assert_line --index -1 --regexp "^graphed: $live of [0-9]+ operations \([0-9.]+%\)$"
}

@test "analyze: the same trace gives the same output on every run" {
    traced --iters 300 --variants 40
    run "$AN" "$T/t.agt"
    first="$output"
    for i in 1 2 3; do
        run "$AN" "$T/t.agt"
        assert_equal "$output" "$first"
    done
    assert_line --partial "sequence 1:"
}

@test "analyze: the calls that ended holds are named" {
    traced --iters 100 --held-then sync
    run "$AN" "$T/t.agt"
    assert_success
    assert_line --regexp "^  held work submitted by cuStreamSynchronize: [1-9]"
}

@test "analyze: gzip and standard input are read too" {
    traced --iters 60
    run "$AN" "$T/t.agt"
    want="$output"
    gzip -c "$T/t.agt" >"$T/t.agt.gz"
    run "$AN" "$T/t.agt.gz"
    assert_equal "$output" "${want//$T\/t.agt/$T/t.agt.gz}"
    run bash -c "'$AN' - <'$T/t.agt'"
    assert_equal "$output" "${want//$T\/t.agt/-}"
}

@test "analyze: a trace cut short is analyzed up to the cut, with one message" {
    traced --iters 200
    run --separate-stderr "$AN" "$T/t.agt"
    assert_success
    assert_equal "$stderr" ""
    # Cut inside a record or between two (the sizes of records vary with their times):
    # either way one message, and the summary of what came before.
    for bytes in 3000 3001 3002 3003; do
        head -c "$bytes" "$T/t.agt" >"$T/cut.agt"
        run --separate-stderr "$AN" "$T/cut.agt"
        assert_success
        [[ "$stderr" == *"cut short"* ]] || fail "$bytes bytes: stderr: $stderr"
        assert_equal "$(grep -c . <<<"$stderr")" 1
        assert_line --index -1 --regexp "^graphed: [0-9]+ of [0-9]+ operations"
    done
}

@test "analyze: not a trace, a missing file, no argument: a message and a status" {
    run --separate-stderr "$AN" /etc/hostname
    assert_failure 1
    assert_equal "$stderr" "autograph analyze: /etc/hostname: not an AUTOGRAPH_TRACE file"
    run --separate-stderr "$AN" "$T/none"
    assert_failure 1
    [[ "$stderr" == *"cannot be read"* ]]
    run --separate-stderr "$AN"
    assert_failure 2
    [[ "$stderr" == usage:* ]]
    run --separate-stderr "$BUILD/autograph" analyze /etc/hostname
    assert_failure 1
}

@test "AUTOGRAPH_TRACE: a value that is not a path gets one line, and the program runs" {
    run --separate-stderr env AUTOGRAPH_TRACE=yes LD_PRELOAD="$LIB" "$ENG" --iters 20
    assert_success
    assert_equal "$(grep -c AUTOGRAPH_TRACE <<<"$stderr")" 1
    [[ "$stderr" == *"AUTOGRAPH_TRACE=yes"*"file path"* ]] || fail "stderr: $stderr"
    run --separate-stderr env AUTOGRAPH_TRACE="$T/no/such/dir/t.agt" LD_PRELOAD="$LIB" "$ENG" --iters 20
    assert_success
    [[ "$stderr" == *"cannot create the file"* ]] || fail "stderr: $stderr"
}

@test "AUTOGRAPH_TRACE: a preloaded process that never calls the driver leaves the file alone; a second CUDA process naming it writes nothing and says why" {
    # Run 11: `timeout`, preloaded like its CUDA child, truncated the child's trace when the
    # library loaded and wrote its own end record over the child's first record at exit.
    run --separate-stderr env AUTOGRAPH_TRACE="$T/t.agt" LD_PRELOAD="$LIB" timeout 60 "$ENG" --iters 50
    assert_success
    run --separate-stderr "$AN" "$T/t.agt"
    [[ "$stderr" != *"malformed"* && "$stderr" != *"cut short"* ]] || fail "$stderr"
    assert_line --index -1 --regexp "^graphed: [1-9][0-9]* of [0-9]+ operations"
    # A CUDA parent and its CUDA child, one file name: the parent, first to call the driver, writes.
    run --separate-stderr env AUTOGRAPH_TRACE="$T/t2.agt" LD_PRELOAD="$LIB" python3 -c '
import ctypes, subprocess, sys
assert ctypes.CDLL("libcuda.so.1").cuInit(0) == 0
subprocess.run([sys.argv[1], "--iters", "50"], check=True)' "$ENG"
    assert_success
    [[ "$stderr" == *"AUTOGRAPH_TRACE=$T/t2.agt: another process is writing this file"*"no trace is written"* ]] ||
        fail "the child did not say why it wrote nothing: $stderr"
    run --separate-stderr "$AN" "$T/t2.agt"
    [[ "$stderr" != *"malformed"* && "$stderr" != *"cut short"* ]] || fail "$stderr"
    assert_line --index -1 "graphed: 0 of 0 operations (0.0%)"
}

@test "analyze: the committed real-program traces are graphed at least as far as tests/traces/floors.txt says" {
    local checked=0
    while read -r name floor _; do
        case "$name" in '#'* | '') continue ;; esac
        run "$AN" "$ROOT/tests/traces/$name.agt.gz"
        assert_success
        line="${lines[-1]}"
        [[ "$line" =~ ^graphed:\ ([0-9]+)\ of\ ([0-9]+)\ operations\ \(([0-9]+)\.[0-9]%\)$ ]] ||
            fail "$name: last line is not the graphed line: $line"
        [ "${BASH_REMATCH[2]}" -gt 0 ] || fail "$name: the trace has no operations"
        [ "${BASH_REMATCH[3]}" -ge "$floor" ] || fail "$name: $line, below its floor of $floor%"
        checked=$((checked + 1))
    done <"$ROOT/tests/traces/floors.txt"
    [ "$checked" -ge 11 ] || fail "only $checked traces checked"
}

@test "analyze: a committed trace gives the same lines on every run" {
    run "$AN" "$ROOT/tests/traces/torch_resnet.agt.gz"
    first="$output"
    run "$AN" "$ROOT/tests/traces/torch_resnet.agt.gz"
    assert_equal "$output" "$first"
    assert_line --regexp '^sequence [0-9]+: [0-9]+ ops \(.*\): .*replayed'
}

@test "AUTOGRAPH_REPORT: sequences, the kernel whose grid changed, the call that ended a hold; JSON by extension" {
    run env AUTOGRAPH_REPORT="$T/r.json" AUTOGRAPH_FLUSH_US=10000000 LD_PRELOAD="$LIB" "$ENG" --iters 100 --shape-change-at 50
    assert_success
    run python3 - "$T/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
seqs = r["sequences"]
assert seqs and all(s["fate"] for s in seqs), seqs
assert r["runs_diverged_by_field"]["grid"] > 0, r["runs_diverged_by_field"]
here = {k["name"]: k for k in r["kernels_left_eager"]}
assert here["ag_stencil"]["runs_diverged_here"] > 0, here
total = sum(k["replayed"] for k in r["kernels_left_eager"])
assert total > 0 and r["ops_replayed"] >= total, (total, r["ops_replayed"])
print("ok")
PY
    assert_output ok
    run env AUTOGRAPH_REPORT="$T/r.txt" AUTOGRAPH_FLUSH_US=10000000 LD_PRELOAD="$LIB" "$ENG" --iters 100 --held-then sync
    assert_success
    grep -q "^held work submitted eagerly by a synchronizing or unknown call: 1 cuStreamSynchronize$" "$T/r.txt" ||
        fail "$(cat "$T/r.txt")"
    grep -q "^kernel ag_[a-z]*: [0-9]* launches, [0-9]* replayed" "$T/r.txt" || fail "$(cat "$T/r.txt")"
    grep -q "^sequence [0-9]*: replayed" "$T/r.txt" || fail "$(cat "$T/r.txt")"
}

@test "AUTOGRAPH_REPORT: a file that cannot be created gets one line; the program's output is unchanged" {
    run --separate-stderr "$ENG" --iters 30
    want="$output"
    run --separate-stderr env AUTOGRAPH_REPORT="$T/no/such/r.txt" LD_PRELOAD="$LIB" "$ENG" --iters 30
    assert_success
    assert_equal "$output" "$want"
    [[ "$stderr" == *"AUTOGRAPH_REPORT=$T/no/such/r.txt: cannot create"* ]] || fail "stderr: $stderr"
}

@test "AUTOGRAPH_REPORT: operations other than launches that stayed eager are counted by why" {
    # 600 pageable uploads without a sync: 256 are staged, then the arena is full and the
    # rest go unstaged, which the report must name, in text and in JSON.
    run env AUTOGRAPH_REPORT="$T/r.json" AUTOGRAPH_FLUSH_US=10000000 LD_PRELOAD="$LIB" "$ENG" --iters 600 --upload --sync none
    assert_success
    run python3 - "$T/r.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["other_operations_left_eager"]
assert o["copy_from_pageable"] == 600 - 256, o
assert set(o) == {"copy_to_pageable", "copy_from_pageable", "unified_copy_pageable", "timing_event_record",
                  "other_not_a_node", "in_no_sequence"}, o
print("ok")
PY
    assert_output ok
    run env AUTOGRAPH_REPORT="$T/r.txt" AUTOGRAPH_FLUSH_US=10000000 LD_PRELOAD="$LIB" "$ENG" --iters 600 --upload --sync none
    assert_success
    grep -q "^  344 host-to-device copies from memory not page-locked and not staged" "$T/r.txt" ||
        fail "$(cat "$T/r.txt")"
}

@test "AUTOGRAPH_REPORT: operations in no learned sequence are counted by their segment, and a new segment by what differed" {
    # Each iteration's second launch has a larger grid: every segment between two syncs is
    # new, and the report must say that the grid is what differed from the one before.
    run env AUTOGRAPH_REPORT="$T/r.json" LD_PRELOAD="$LIB" "$PROGS/holes" grid-growth 300
    assert_success
    run python3 - "$T/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
u, f = r["in_no_sequence_by_segment"], r["first_seen_segments_by_field"]
assert set(u) == {"first_seen", "short_segment", "warming_up", "other", "not_observed"}, u
assert u["not_observed"] == 0, u
assert u["first_seen"] >= 2 * 290, u
assert f["grid"] >= 290 and f["grid"] == max(f.values()), f
print("ok")
PY
    assert_output ok
    run env AUTOGRAPH_REPORT="$T/r.txt" LD_PRELOAD="$LIB" "$PROGS/holes" grid-growth 300
    assert_success
    grep -q "^segments seen for the first time, by what first differed from the segment before: 29[0-9] grid" "$T/r.txt" ||
        fail "$(cat "$T/r.txt")"
}

@test "analyze: operations in no learned sequence by their segment, on the CG and dynamic-decode traces" {
    # CG: cuBLAS's event record alone between its result copy and its sync, twice a step.
    run "$BUILD/autograph" analyze "$ROOT/tests/traces/cg_solver.agt.gz"
    assert_success
    local n
    n="$(sed -n 's/^in no learned sequence: \([0-9]*\) operations in segments shorter than AUTOGRAPH_MIN_OPS$/\1/p' <<<"$output")"
    (( ${n:-0} >= 4000 )) || fail "short segments: '${n}' in: $output"
    # The dynamic cache: each token's step is longer than the one before.
    run "$BUILD/autograph" analyze "$ROOT/tests/traces/hf_decode_dynamic.agt.gz"
    assert_success
    n="$(sed -n 's/^  segments seen for the first time whose length first differed from the segment before: \([0-9]*\)$/\1/p' <<<"$output")"
    (( ${n:-0} >= 50 )) || fail "length: '${n}' in: $output"
    [[ "${lines[-1]}" == graphed:* ]] || fail "the last line is not the graphed line: ${lines[-1]}"
}
