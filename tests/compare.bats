#!/usr/bin/env bats
# autograph compare on the CPU stand-in: the table and --json, the replayed share read
# from the library's statistics, the alternating order, metric extraction and verdicts,
# the differential check of stdout and exit status, and bad arguments. Timings are
# never asserted: the verdicts tested come from metrics the test programs print.

setup() {
    load test_helper/common-setup
    _common_setup
    LAUNCHER="$BUILD/autograph"
    [ -x "$LAUNCHER" ] || fail "$LAUNCHER is missing: run 'make test'"
    ENG="$PROGS/eng_loop"
}

# script NAME BODY: an executable sh script in $T (the library is preloaded into sh on
# the library side, so ${LD_PRELOAD:+...} tells the two sides apart).
script() {
    printf '#!/bin/sh\n%s\n' "$2" >"$T/$1"
    chmod +x "$T/$1"
    echo "$T/$1"
}

@test "compare: table, valid JSON with both sides, replayed share from the statistics" {
    run --separate-stderr "$LAUNCHER" compare -n 3 --flush-us 10000000 --json "$T/c.json" -- "$ENG" --iters 40
    assert_success
    assert_line --partial 'autograph compare: 3 runs a side after 1 warm-up'
    assert_line --regexp '^\| wall time \(s\) \| plain \| [0-9.e-]+ \| [0-9.e-]+-[0-9.e-]+ \| [0-9.e-]+ \| 3 \|$'
    assert_line --regexp '^\| wall time \(s\) \| library \| '
    assert_line --regexp '^wall time: library/plain = [0-9.e-]+ \(medians\): '
    assert_line --regexp '^replayed: [0-9.]+% of the library side.s stream operations'
    assert_line --partial 'output: the same on both sides'
    assert_line 'exit status: 0 on both sides'
    python3 -m json.tool "$T/c.json" >/dev/null || fail "invalid JSON: $(cat "$T/c.json")"
    python3 - "$T/c.json" <<'PY' || fail "JSON content: $(cat "$T/c.json")"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["runs_per_side"] == 3 and len(c["runs"]) == 7, c["runs"]
assert c["wall_s"]["plain"]["runs"] == 3 and c["wall_s"]["library"]["runs"] == 3
assert c["options"] == {"AUTOGRAPH_FLUSH_US": "10000000"}, c["options"]
lib = [r for r in c["runs"] if r["side"] == "library"]
# Each library run left one statistics file; eng_loop --iters 40 submits 40 x 5 + 4
# launches and 5 copies. How many were replayed depends on detection, so the share is
# checked against the counters it is computed from, not against a fixed figure.
assert all(r["stats_files"] == 1 and r["ops"] == 209 for r in lib), lib
share = sum(r["ops_replayed"] for r in lib) / sum(r["ops"] for r in lib)
assert abs(c["replayed_share"] - share) < 1e-6, (c["replayed_share"], share)
assert all("ops" not in r for r in c["runs"] if r["side"] == "plain")
assert c["output"]["differs"] is False and c["exit_status"]["differs"] is False
PY
}

@test "compare: its temporary statistics are removed, also when it is interrupted" {
    mkdir "$T/tmp"
    run env TMPDIR="$T/tmp" "$LAUNCHER" compare -n 2 -- "$ENG" --iters 10
    assert_success
    assert_equal "left in TMPDIR: $(ls -A "$T/tmp")" "left in TMPDIR: "
    # The program itself sends compare the SIGINT a Ctrl-C would, in its first library run.
    local prog
    prog="$(script p.sh '[ -z "$LD_PRELOAD" ] || kill -INT $PPID; echo done')"
    run -130 --separate-stderr env TMPDIR="$T/tmp" "$LAUNCHER" compare -n 2 -- "$prog"
    assert_regex "$stderr" '^autograph: error: compare: stopped by signal 2 \(.*\) after library run 1; nothing summarized$'
    assert_output ''
    assert_equal "left in TMPDIR: $(ls -A "$T/tmp")" "left in TMPDIR: "
}

@test "compare: one warm-up, then pairs alternating which side goes first" {
    local prog
    prog="$(script p.sh 'echo same')"
    run "$LAUNCHER" compare -n 4 --json "$T/c.json" -- "$prog"
    assert_success
    run python3 -c 'import json,sys; print(" ".join("%s%d" % (r["side"][0], r["pair"]) for r in json.load(open(sys.argv[1]))["runs"]))' "$T/c.json"
    assert_output 'p0 p1 l1 l2 p2 p3 l3 l4 p4'
}

@test "compare: a program whose output differs under the library is caught, with the line" {
    local prog
    prog="$(script p.sh 'echo header; echo "result: x=${LD_PRELOAD:+changed}"; echo footer')"
    run --separate-stderr "$LAUNCHER" compare -n 2 --json "$T/c.json" -- "$prog"
    assert_failure 1
    assert_line 'output: WARNING: differs on the library side (pair 1), line 2:'
    assert_line '  plain:   result: x='
    assert_line '  library: result: x=changed'
    assert_equal "$(json_stat "$T/c.json" output.differs)" True
    assert_equal "$(json_stat "$T/c.json" output.library_line)" 'result: x=changed'
}

@test "compare: a differing exit status is caught; lines that vary between plain runs are not" {
    local prog
    # The date line varies from run to run on both sides: it must not count as a difference.
    prog="$(script p.sh 'echo "now $(date +%s%N)"; echo result; [ -z "$LD_PRELOAD" ] || exit 3')"
    run --separate-stderr "$LAUNCHER" compare -n 2 -- "$prog"
    assert_failure 1
    assert_line 'exit status: WARNING: plain 0, library 3'
    assert_line --partial 'output: the same on both sides (1 lines compared, 1 left out'
}

@test "compare --metric: first group of the last matching line, ratio and verdicts" {
    local prog
    # Plain runs report 10 then 20 us per step, library runs 4 then 5.
    prog="$(script p.sh 'echo "step=99 us"; if [ -n "$LD_PRELOAD" ]; then echo "step=$((4 + $(cat '"$T"'/n) % 2)) us"; else echo "step=$((10 + 10 * ($(cat '"$T"'/n) % 2))) us"; fi; echo $(($(cat '"$T"'/n) + 1)) > '"$T"'/n')"
    echo 0 >"$T/n"
    run --separate-stderr "$LAUNCHER" compare -n 4 --metric 'step=([0-9.]+) us' --json "$T/c.json" -- "$prog"
    assert_success
    assert_line --regexp '^\| metric \| plain \| 15 \| 10-20 \| 5 \| 4 \|$'
    assert_line --regexp '^\| metric \| library \| 4.5 \| 4-5 \| 0.5 \| 4 \|$'
    assert_line 'metric: library/plain = 0.3 (medians): library lower (the two ranges do not overlap)'
    assert_equal "$(json_stat "$T/c.json" metric.verdict)" 'library lower'
    # The same metric on both sides: the ranges overlap.
    prog="$(script q.sh 'echo "step=7 us"')"
    run --separate-stderr "$LAUNCHER" compare -n 2 --metric 'step=([0-9.]+) us' -- "$prog"
    assert_success
    assert_line 'metric: library/plain = 1 (medians): spread too large to conclude (the two ranges overlap)'
    # A metric the output never has is said so, not invented.
    run --separate-stderr "$LAUNCHER" compare -n 2 --metric 'loss=([0-9.]+)' -- "$prog"
    assert_success
    assert_line 'metric: not found in the output of either side'
    # A plain median of 0 has no ratio: said so, and the JSON stays valid (no inf).
    prog="$(script z.sh 'echo "step=0 us"')"
    run --separate-stderr "$LAUNCHER" compare -n 2 --metric 'step=([0-9.]+) us' --json "$T/z.json" -- "$prog"
    assert_success
    assert_line 'metric: spread too large to conclude (the plain median is 0: no ratio)'
    python3 -m json.tool "$T/z.json" >/dev/null || fail "invalid JSON: $(cat "$T/z.json")"
    assert_equal "$(json_stat "$T/z.json" metric.ratio)" None
}

@test "compare: bad arguments are one line naming the problem, exit 2; a missing program 127" {
    local args
    for args in "-n 0 -- true" "-n x -- true" "-n" "--metric ( -- true" "--metric abc -- true" \
        "--stats -- true" "--stats-json s.json -- true" "--warmup 0 -- true" "--bogus -- true" "--"; do
        # shellcheck disable=SC2086
        run --separate-stderr "$LAUNCHER" compare $args
        assert_equal "$args: status $status" "$args: status 2"
        assert_equal "$args: $(wc -l <<<"$stderr") line(s)" "$args: 1 line(s)"
        assert_regex "$stderr" '^autograph: error: '
    done
    run --separate-stderr "$LAUNCHER" compare -n 0 -- true
    assert_equal "$stderr" 'autograph: error: compare: -n 0 is not valid: expected a whole number of runs a side, 1 to 1000'
    run --separate-stderr "$LAUNCHER" compare --metric abc -- true
    assert_regex "$stderr" 'no capture group'
    run -127 --separate-stderr "$LAUNCHER" compare -- "$T/no-such-program"
    assert_equal "$stderr" "autograph: error: compare: cannot run $T/no-such-program: No such file or directory"
}
