#!/usr/bin/env bats
# Statistics (AUTOGRAPH_STATS): the JSON counts equal what each program says it
# submitted (its counts: line) for every door and mode; calls are filed under the door
# they came through and under the exact entry point (_ptsz for the per-thread default
# stream, cuLaunchKernelEx for Ex launches); AUTOGRAPH=0 is a pass-through that still
# reports; AUTOGRAPH_STATS=1 prints a summary on stderr. The JSON carries the metadata and
# exactly the keys src/stats.def documents; file names expand %p, %h, %n, %q{VAR} and %%.

setup() {
    load test_helper/common-setup
    _common_setup
}

@test "counts equal what each door's program submitted, in every mode" {
    local door m
    for door in "${DOORS[@]}"; do
        for m in "--stream legacy" "--stream created --ex" "--ptds --stream legacy --ex" \
            "--threads 3 --sync none" "--load library --iters 13 --kernels 5"; do
            rm -f "$T/s.json"
            run --separate-stderr with_lib env AUTOGRAPH_STATS="$T/s.json" "$(prog_for_door "$door")" $m
            assert_success
            assert_stats_match_counts "$T/s.json"
        done
    done
}

@test "the counts line itself is what the workload was asked to do" {
    run "$PROGS/drv_link" --iters 13 --kernels 5 --threads 2
    assert_success
    # 2 threads x (13 x 5 launches, 2 uploads, 3 downloads, 13 device copies, 3 memsets,
    # 13 + 1 stream syncs) and one context synchronize at the end.
    assert_line "counts: launches=130 htod=4 dtoh=6 dtod=26 memsets=6 syncs=29"
}

# Launch calls per door: the only door with calls is the program's own.
@test "launches are counted under the door they came through" {
    local door other
    for door in "${DOORS[@]}"; do
        rm -f "$T/s.json"
        run with_lib env AUTOGRAPH_STATS="$T/s.json" "$(prog_for_door "$door")" --iters 6 --kernels 4
        assert_success
        assert_equal "$(json_stat "$T/s.json" launches)" 24
        assert_equal "$(json_stat "$T/s.json" "calls.cuLaunchKernel.$door")" 24
        for other in "${DOORS[@]}"; do
            [ "$other" = "$door" ] && continue
            assert_equal "$other: $(json_stat "$T/s.json" "calls.cuLaunchKernel.$other")" "$other: 0"
            # Nothing at all came through a door the program does not use, except the
            # cudart-style program's one dlsym of cuGetProcAddress_v2.
            if [ "$door" != cuGetProcAddress ] || [ "$other" != dlsym ]; then
                assert_equal "$other: $(json_stat "$T/s.json" "calls_by_door.$other")" "$other: 0"
            fi
        done
    done
}

@test "per-thread default stream: launches arrive at cuLaunchKernel_ptsz and cuLaunchKernelEx_ptsz" {
    local door
    for door in "${DOORS[@]}"; do
        rm -f "$T/s.json"
        run with_lib env AUTOGRAPH_STATS="$T/s.json" "$(prog_for_door "$door")" --ptds --stream legacy \
            --ex --iters 5 --kernels 4
        assert_success
        assert_equal "$(json_stat "$T/s.json" launches)" 20
        assert_equal "$(json_stat "$T/s.json" "calls.cuLaunchKernel_ptsz.$door")" 10
        assert_equal "$(json_stat "$T/s.json" "calls.cuLaunchKernelEx_ptsz.$door")" 10
        assert_equal "$(json_stat "$T/s.json" calls.cuLaunchKernel)" absent
        assert_equal "$(json_stat "$T/s.json" calls.cuLaunchKernelEx)" absent
        assert_equal "$(json_stat "$T/s.json" "calls.cuStreamSynchronize_ptsz.$door")" 6
        assert_equal "$(json_stat "$T/s.json" "calls.cuMemcpyHtoD_v2_ptds.$door")" 1
    done
}

@test "legacy stream: launches arrive at cuLaunchKernel and cuLaunchKernelEx" {
    run with_lib env AUTOGRAPH_STATS="$T/s.json" "$PROGS/drv_procaddr" --ex --iters 5 --kernels 4
    assert_success
    assert_equal "$(json_stat "$T/s.json" calls.cuLaunchKernel.cuGetProcAddress)" 10
    assert_equal "$(json_stat "$T/s.json" calls.cuLaunchKernelEx.cuGetProcAddress)" 10
    assert_equal "$(json_stat "$T/s.json" calls.cuLaunchKernel_ptsz)" absent
}

@test "kernels by name: top_kernels and kernels_distinct follow the launches" {
    run with_lib env AUTOGRAPH_STATS="$T/s.json" "$PROGS/drv_dlsym" --iters 7 --kernels 1
    assert_success
    # --kernels 1: iteration i launches step i mod 7, so each of 7 kernels exactly once.
    assert_equal "$(json_stat "$T/s.json" kernels_distinct)" 7
    run python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["top_kernels"]; print(" ".join(sorted("%s=%d" % (k["name"], k["launches"]) for k in t)))' "$T/s.json"
    assert_output "ag_add=1 ag_axpy=1 ag_big=1 ag_fill=1 ag_mix=1 ag_scale=1 ag_stencil=1"
}

@test "AUTOGRAPH=0: identical output and enabled: 0" {
    local door plain
    for door in "${DOORS[@]}"; do
        run "$(prog_for_door "$door")" --ex --threads 2
        assert_success
        plain="$output"
        rm -f "$T/s.json"
        run --separate-stderr with_lib env AUTOGRAPH=0 AUTOGRAPH_STATS="$T/s.json" \
            "$(prog_for_door "$door")" --ex --threads 2
        assert_success
        assert_equal "$output" "$plain"
        assert_equal "$stderr" ""
        assert_equal "$(json_stat "$T/s.json" enabled)" 0
    done
    rm -f "$T/s.json"
    run with_lib env AUTOGRAPH_STATS="$T/s.json" "$PROGS/drv_link" --iters 1
    assert_equal "$(json_stat "$T/s.json" enabled)" 1
}

@test "AUTOGRAPH=0: calls are still counted and forwarded once, in order" {
    local door prog
    for door in "${DOORS[@]}"; do
        prog="$(prog_for_door "$door")"
        rm -f "$T/plain.trace" "$T/off.trace" "$T/s.json"
        AG_FAKE_TRACE="$T/plain.trace" "$prog" --iters 3 --ex >/dev/null
        run with_lib env AG_FAKE_TRACE="$T/off.trace" AUTOGRAPH=0 AUTOGRAPH_STATS="$T/s.json" "$prog" --iters 3 --ex
        assert_success
        assert_stats_match_counts "$T/s.json"
        assert_equal "$(json_stat "$T/s.json" "calls.cuLaunchKernel.$door")" 12
        assert_equal "$(json_stat "$T/s.json" graphs_built)" 0
        assert_equal "$(json_stat "$T/s.json" replays)" 0
        # Pass-through: the stand-in gets the program's calls, in order, once each. (The
        # library still asks kernel names and parameters for its statistics: filtered.)
        run diff <(trace_calls "$T/plain.trace") <(trace_calls "$T/off.trace" "$T/plain.trace")
        assert_success
    done
}

@test "AUTOGRAPH_STATS=1 prints the summary on stderr, and nothing on stdout" {
    run "$PROGS/drv_dlsym" --iters 3 --kernels 2
    local plain="$output"
    run --separate-stderr with_lib env AUTOGRAPH_STATS=1 "$PROGS/drv_dlsym" --iters 3 --kernels 2
    assert_success
    assert_equal "$output" "$plain"
    [ -n "$stderr" ] || fail "no summary on stderr"
    # every line of it is the library's
    run grep -vc '^autograph:' <<<"$stderr"
    assert_output 0
    run grep -E '^autograph:   kernel launches +6, 4 distinct kernels, 0 host functions, 0 graph launches$' <<<"$stderr"
    assert_success
    run grep -E '^autograph:   copies +2 htod, 3 dtoh, 3 dtod, 0 other, 3 memsets$' <<<"$stderr"
    assert_success
    run grep -E '^autograph:   calls by door +0 link, [1-9][0-9]* dlsym, 0 cuGetProcAddress$' <<<"$stderr"
    assert_success
    # every counter of stats.def is on a row, with the word stats.def gives it
    run grep -E '^autograph:   graphs +[0-9]+ sequences, [0-9]+ built, [0-9]+ replays, [0-9]+ ops replayed, [0-9]+ ops eager, [0-9]+ updates, [0-9]+ evictions$' <<<"$stderr"
    assert_success
    run grep -E '^autograph:   idle +[0-9]+ pauses, [0-9]+ ops unobserved$' <<<"$stderr"
    assert_success
    run grep -E '^autograph:   fallbacks +[0-9]+ shape, [0-9]+ args, [0-9]+ barrier, [0-9]+ timeout, [0-9]+ unsupported, [0-9]+ build failure, [0-9]+ thrash, [0-9]+ not faster, [0-9]+ excluded$' <<<"$stderr"
    assert_success
}

@test "AUTOGRAPH_STATS=not-a-thing: one clear line, normal output, no statistics" {
    run "$PROGS/drv_link" --iters 2
    local plain="$output"
    mkdir "$T/cwd"
    cd "$T/cwd"
    run --separate-stderr with_lib env AUTOGRAPH_STATS=not-a-thing "$PROGS/drv_link" --iters 2
    assert_success
    assert_equal "$output" "$plain"
    assert_equal "$stderr" "autograph: warning: AUTOGRAPH_STATS=not-a-thing is not valid: expected 0, 1 (summary on stderr) or a file path such as ./stats.json; using 0"
    run ls -A "$T/cwd"
    assert_output ""
}

@test "AUTOGRAPH_STATS to a file that cannot be written: one error line, program unaffected" {
    run --separate-stderr with_lib env AUTOGRAPH_STATS="$T/no/such/dir/s.json" "$PROGS/drv_link" --iters 2
    assert_success
    assert_line --regexp '^counts: '
    assert_equal "$stderr" "autograph: error: cannot write statistics to $T/no/such/dir/s.json"
}

# The keys of src/stats.def, one per line, as scripts/gen-options-doc reads them.
documented_keys() {
    "$ROOT/scripts/gen-options-doc" --keys | sed -n 's/^| `\([^`]*\)` .*/\1/p'
}

@test "the JSON has exactly the keys src/stats.def documents, and the metadata" {
    run with_lib env AUTOGRAPH_STATS="$T/s.json" AUTOGRAPH_WARMUP=3 "$PROGS/drv_link" --iters 4
    assert_success
    local keys
    keys="$(documented_keys)"
    [ "$(wc -l <<<"$keys")" -ge 40 ] || fail "only $(wc -l <<<"$keys") documented keys"
    run diff <(sort <<<"$keys") <(python3 -c 'import json,sys; print("\n".join(sorted(json.load(open(sys.argv[1])))))' "$T/s.json")
    assert_success
    assert_equal "$(json_stat "$T/s.json" stat_version)" 2
    assert_equal "$(json_stat "$T/s.json" library_version)" "$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")"
    assert_equal "$(json_stat "$T/s.json" cuda_headers)" \
        "$(sed -n 's/^#define CUDA_VERSION \([0-9]*\)$/\1/p' "$CUDA_H")"
    # the stand-in's cuDriverGetVersion answers 13000
    assert_equal "$(json_stat "$T/s.json" driver_version)" 13000
    assert_equal "$(json_stat "$T/s.json" argv)" "[\"$PROGS/drv_link\", \"--iters\", \"4\"]"
    assert_equal "$(json_stat "$T/s.json" end)" exit
    assert_equal "$(json_stat "$T/s.json" options.AUTOGRAPH_WARMUP)" 3
    assert_equal "$(json_stat "$T/s.json" options.AUTOGRAPH_STATS)" "$T/s.json"
    run json_stat "$T/s.json" start_time
    assert_output --regexp '^20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z$'
    # the pid is the program's: the file name says it too
    run with_lib env AUTOGRAPH_STATS="$T/p-%p.json" "$PROGS/drv_link" --iters 1
    local f
    f="$(ls "$T" | grep '^p-[0-9]*\.json$')"
    assert_equal "$(json_stat "$T/$f" pid).json" "${f#p-}"
}

@test "the README's keys table is generated from src/stats.def and checked" {
    run "$ROOT/scripts/gen-options-doc" --check "$ROOT/README.md"
    assert_success
    grep -q '^| `ops_replayed` | integer (counter) | operations submitted inside graph launches |$' "$ROOT/README.md" ||
        fail "README has no generated row for ops_replayed"
    grep -v '^| `driver_version` ' "$ROOT/README.md" >"$T/README.md"
    run --separate-stderr "$ROOT/scripts/gen-options-doc" --check "$T/README.md"
    assert_failure
    assert_regex "$stderr" 'the keys region is stale: differs for driver_version'
}

@test "file names: %p, %h, %n, %q{VAR} and %% are expanded" {
    cd "$T"
    run with_lib env AUTOGRAPH_STATS="s-%p-%h-%n-%q{AG_TEST_RANK}-%q{AG_TEST_UNSET}-100%%.json" \
        AG_TEST_RANK=7 "$PROGS/drv_link" --iters 1
    assert_success
    local f
    f="$(ls "$T" | grep '^s-.*\.json$')"
    [ -n "$f" ] || fail "no statistics file in: $(ls -A "$T")"
    assert_equal "$f" "s-$(json_stat "$f" pid)-$(uname -n)-1-7--100%.json"
}

@test "a malformed file name template: one warning naming the fault, no file, program unaffected" {
    local tmpl
    mkdir "$T/cwd"
    cd "$T/cwd"
    run "$PROGS/drv_link" --iters 1
    local plain="$output"
    for tmpl in "s-%x.json" "s-%q{RANK.json" "./s%"; do
        run --separate-stderr with_lib env AUTOGRAPH_STATS="$tmpl" "$PROGS/drv_link" --iters 1
        assert_success
        assert_equal "$output" "$plain"
        assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 1
        [[ "$stderr" == "autograph: warning: AUTOGRAPH_STATS=$tmpl is not valid: expected a file path whose % escapes are "*"; using 0" ]] ||
            fail "$tmpl: $stderr"
    done
    assert_regex "$stderr" '\(a % at the end'
    run ls -A "$T/cwd"
    assert_output ""
}

@test "the library measures itself: time per call, eager and graph launch cost, saving and share" {
    run with_lib env AUTOGRAPH_STATS="$T/s.json" "$PROGS/drv_link" --iters 60 --kernels 4
    assert_success
    run python3 - "$T/s.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
calls = sum(sum(d.values()) for d in s["calls"].values())
ops = (s["launches"] + s["host_functions"] + s["memsets"] + s["event_records"]
       + sum(s["copies"].values()))
assert s["replays"] > 0, "nothing replayed"
# about one measured call in 16 is sampled (every launch wrapper is measured, pass-through
# queries are not): 240 launches and some of the other 159 calls
assert s["launches"] // 24 <= s["self_calls"] <= calls // 10, (s["self_calls"], s["launches"], calls)
assert s["self_ns_per_call"] > 0 and s["self_ns"] >= s["self_ns_per_call"]
assert s["driver_ns"] > 0 and s["eager_ns_per_op"] > 0 and s["graph_launch_ns"] > 0
assert abs(s["replayed_share"] - s["ops_replayed"] / ops) < 0.0006, (s["replayed_share"], ops)
# the estimate from its parts (they are rounded down to whole ns)
want = s["ops_replayed"] * s["eager_ns_per_op"] - s["replays"] * s["graph_launch_ns"]
assert abs(s["launch_time_saved_ns"] - want) <= s["ops_replayed"] + s["replays"], (s["launch_time_saved_ns"], want)
print("ok")
PY
    assert_output ok
    # pass-through: nothing replayed, nothing saved, the library's time still measured
    run with_lib env AUTOGRAPH=0 AUTOGRAPH_STATS="$T/off.json" "$PROGS/drv_link" --iters 60 --kernels 4
    assert_success
    assert_equal "$(json_stat "$T/off.json" replayed_share)" 0.0
    assert_equal "$(json_stat "$T/off.json" launch_time_saved_ns)" 0
    (( $(json_stat "$T/off.json" self_calls) >= 240 / 24 )) || fail "launches not measured"
}

@test "the self-measurement samples the same calls on every run" {
    for i in 1 2; do
        run with_lib env AUTOGRAPH_STATS="$T/s$i.json" "$PROGS/drv_link" --iters 60 --kernels 4
        assert_success
    done
    assert_equal "$(json_stat "$T/s1.json" self_calls)" "$(json_stat "$T/s2.json" self_calls)"
    (( $(json_stat "$T/s1.json" self_calls) > 0 )) || fail "nothing sampled"
}
