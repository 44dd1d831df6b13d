#!/usr/bin/env bats
# scripts/bench on the CPU stand-in, with stand-in programs in place of the apps (scripts
# printing the result: and timing: lines the real ones print, and, for a Python row, the
# statistics files the library would write): the benchmark mode writes bench.json and its
# table (medians, min–max spreads, verdict, replayed share from the process that launched
# the most, configurations in rotating order), --compare runs every program through
# `autograph compare`, --markdown and --chart read new and older bench.json files, and the
# row selection (--group, --only, --skip, --configs) picks what --list shows.

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
    # A stand-in for apps/torch_resnet.py, run by --python /bin/sh. The k-th run (from 0)
    # of a mode on a side takes 40 + k us plain eager, 10 + k under the library, 5 in the
    # graph and compile modes. Its graph mode computes a different checksum, its compile
    # mode fails its own --check. Under the library it writes the statistics of two
    # processes, as %p would: the main one (90 launches, 4 event records, 2 memsets, 1 host
    # function, 3 copies: 100 stream operations; 90, 80, then 95 replayed) and a child that
    # launched less (5 launches, all replayed), which must not count. $dir/differ makes the
    # library side's result differ.
    cat >"$T/apps/torch_resnet.py" <<'EOF'
dir=$(dirname "$0")
mode=eager check=skipped prev=
for a in "$@"; do
    [ "$prev" = --mode ] && mode=$a
    [ "$a" = --check ] && check=pass
    prev=$a
done
side=plain
[ -n "$LD_PRELOAD" ] && side=lib
k=$(cat "$dir/n.$mode.$side" 2>/dev/null || echo 0)
echo $((k + 1)) >"$dir/n.$mode.$side"
case $mode.$side in
eager.plain) us=$((40 + k)) ;;
eager.lib) us=$((10 + k)) ;;
*) us=5 ;;
esac
sum=1.0
[ $mode = graph ] && sum=1.5
[ $side = lib ] && [ -e "$dir/differ" ] && sum=2.0
[ $mode = compile ] && [ $check = pass ] && check=FAIL
if [ -n "$AUTOGRAPH_STATS" ]; then
    stem=${AUTOGRAPH_STATS%\%p.json}
    case $k in 0) r=90 ;; 1) r=80 ;; *) r=95 ;; esac
    printf '{"launches": 90, "ops_replayed": %d, "graphs_built": 1, "replays": 9, "event_records": 4, "memsets": 2, "host_functions": 1, "copies": {"htod": 2, "dtoh": 1, "dtod": 0, "other": 0}}\n' $r >"${stem}1001.json"
    printf '{"launches": 5, "ops_replayed": 5, "graphs_built": 1, "replays": 1}\n' >"${stem}1002.json"
fi
echo "result: app=torch_resnet mode=$mode iters=220 kernels_launched=n/a checksum=$sum check=$check"
echo "timing: us_per_iter=$us total_ms=1 time_per_iter_us=$us"
[ $check = FAIL ] && exit 1
exit 0
EOF
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
    assert_line --index 1 '| program | eager µs/iter | autograph µs/iter | graph µs/iter | speed-up | verdict | of graph speed-up | of graph throughput | operations replayed |'
    assert_line '| tiny_kernels n=100 | 40.00 | 10.00 | 40.00 | 4.00× | faster (n=1) | — | 400.0% | — |'
    python3 -m json.tool "$T/out/bench.json" >/dev/null || fail "invalid bench.json"
    assert_equal "$(json_stat "$T/out/bench.json" partial)" False
}

@test "scripts/bench: a real-workload row in four configurations, rotating, with spreads and the main process's share" {
    run --separate-stderr "$ROOT/scripts/bench" --lib "$LIB" --apps "$T/apps" \
        --py-apps "$T/apps" --python /bin/sh --out "$T/out" --only '^torch_resnet$' \
        --repeats 3 --py-repeats 3 --compile-repeats 1 --check
    assert_success
    assert_line --index 1 '| program | eager µs/iter | autograph µs/iter | graph µs/iter | compile µs/iter | speed-up | verdict | of graph speed-up | of graph throughput | operations replayed |'
    # Medians and min–max over 3 runs; the share is the 100-operation process's (90, 80,
    # 95%), never the child's 100%.
    assert_line '| torch_resnet | 41.00 (40.00–42.00) | 11.00 (10.00–12.00) | 5.00 (5.00–5.00) | 5.00 | 3.73× | faster (n=3) | 38% | 45.5% | 90.0% (80.0–95.0) |'
    # A peer's different result and its failed own check are notes, not failures.
    assert_line '- torch_resnet: NOTE: graph result differs from eager: checksum=1.5 (eager 1.0)'
    assert_line --partial '- torch_resnet: NOTE: compile: its own --check failed in 1 run(s)'
    refute_output --partial 'FAILED'
    # Repeat k starts with configuration k mod n; compile ran in the first repeat only;
    # every autograph run found both statistics files and kept the main process's.
    run python3 - "$T/out/bench.json" <<'PY'
import json, sys
row = json.load(open(sys.argv[1]))["rows"][0]
runs = [(r["repeat"], r["seq"], c) for c, rs in row["runs"].items() for r in rs]
for rep in range(3):
    print(rep, " ".join(c for _, _, c in sorted(x for x in runs if x[0] == rep)))
ag = row["runs"]["autograph"]
print("stats", [r["stats_files"] for r in ag], [r["stats_file"].endswith(".1001.json") for r in ag],
      [r["cmd"][-1] for r in ag])
PY
    assert_success
    assert_line '0 eager autograph graph compile'
    assert_line '1 autograph graph eager'
    assert_line '2 graph eager autograph'
    assert_line "stats [2, 2, 2] [True, True, True] ['--check', '--check', '--check']"
    # The library side's result differing from eager's is a MISMATCH and fails the run.
    touch "$T/apps/differ"
    run --separate-stderr "$ROOT/scripts/bench" --lib "$LIB" --apps "$T/apps" \
        --py-apps "$T/apps" --python /bin/sh --out "$T/out2" --only '^torch_resnet$' \
        --repeats 1 --configs eager,autograph
    assert_failure
    assert_line --regexp '^\| torch_resnet \*\*\(!\)\*\* \| 43\.00 \| 13\.00 \| — \| 3\.31× \|'
    assert_line --partial "MISMATCH: autograph 'result: app=torch_resnet mode=eager iters=220 kernels_launched=n/a checksum=2.0"
}

@test "scripts/bench --markdown: the compile column, spreads and shares of a bench.json; older files; several files" {
    python3 - "$T/new.json" <<'PY'
import json, sys
def run(us, result="result: app=x mode=eager iters=1 checksum=1 check=skipped", **kw):
    return dict(ok=True, rc=0, us_per_iter=us, result=result, **kw)
def stats(replayed, self_ns, eager_ns):
    return {"launches": 200, "ops_replayed": replayed, "graphs_built": 2, "replays": 20,
            "event_records": 0, "memsets": 0, "host_functions": 0,
            "copies": {"htod": 0, "dtoh": 0, "dtod": 0, "other": 0},
            "self_ns_per_call": self_ns, "eager_ns_per_op": eager_ns}
row = {"name": "demo", "program": "demo", "configs": {}, "runs": {
    "eager": [run(100), run(120), run(110)],
    "autograph": [run(105, stats=stats(150, 100, 4000)), run(90, stats=stats(190, 120, 3000)),
                  run(95, stats=stats(180, 110, 3300))],
    "graph": [run(20), run(22), run(21)],
    "compile": [run(30)]}}
flat = {"name": "flat", "program": "flat", "configs": {}, "runs": {
    "eager": [run(100), run(100), run(100)],
    "autograph": [run(104, stats=stats(0, 100, 4000)), run(103, stats=stats(0, 120, 3000)),
                  run(103, stats=stats(0, 110, 3300))]}}
json.dump({"gpu": "GPU", "driver": "1", "date": "today", "git_commit": "abc", "repeats": 3,
           "py_repeats": 3, "compile_repeats": 1, "rows": [row, flat]}, open(sys.argv[1], "w"))
PY
    run --separate-stderr "$ROOT/scripts/bench" --markdown "$T/new.json"
    assert_success
    assert_line --index 0 'GPU, driver 1, today, commit abc, median (min–max) of 3 runs (Python scripts: 3, compile: at most 1)'
    assert_line '| program | eager µs/iter | autograph µs/iter | graph µs/iter | compile µs/iter | speed-up | verdict | of graph speed-up | of graph throughput | operations replayed |'
    assert_line '| demo | 110.00 (100.00–120.00) | 95.00 (90.00–105.00) | 21.00 (20.00–22.00) | 30.00 | 1.16× | within spread (n=3) | 4% | 22.1% | 90.0% (75.0–95.0) |'
    # The in-process measure where nothing was replayed: each run's own ratio (2.5%, 4.0%,
    # 3.3%), then its median; not for a row with replays, whose eager operations are a mix.
    assert_line '- flat: 110 (100–120) ns per call, 3.3% (2.5–4.0) of 3300 (3000–4000) ns per eager submission'
    refute_line --partial '- demo: 110'
    # The first benchmark's file: three configurations, no compile column, one
    # statistics file a run.
    run --separate-stderr "$ROOT/scripts/bench" --markdown "$ROOT/docs/bench-2026-11-30.json"
    assert_success
    assert_line '| program | eager µs/iter | autograph µs/iter | graph µs/iter | speed-up | verdict | of graph speed-up | of graph throughput | operations replayed |'
    assert_line '| tiny_kernels n=100 | 461.87 (449.96–471.42) | 103.09 (103.02–103.39) | 102.84 (102.70–103.03) | 4.48× | faster | 100% | 99.8% | 99.5% |'
    assert_line '| never_repeat | 463.05 (386.05–480.17) | 475.30 (405.48–517.10) | — | 0.97× | within spread | — | — | 0.0% |'
    # Both files at once: one table with the rows of each, what differs joined.
    run --separate-stderr "$ROOT/scripts/bench" --markdown "$ROOT/docs/bench-2026-11-30.json" "$T/new.json"
    assert_success
    assert_line --index 0 --partial 'commit f85deb9 / abc, median (min–max) of 5 / 3 runs (Python scripts: 2 / 3'
    assert_line --partial '| tiny_kernels n=100 | 461.87 '
    assert_line --partial '| demo | 110.00 (100.00–120.00) |'
    assert_line --partial '| tiny_kernels n=100 | 461.87 (449.96–471.42) | 103.09 (103.02–103.39) | 102.84 (102.70–103.03) | — | 4.48× |'
    # A row measured again in a newer run is shown once, from the newer run, in its place.
    python3 - "$ROOT/docs/bench-2026-11-30.json" "$T/later.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
b["date"] = "2099-01-01"
b["rows"] = [r for r in b["rows"] if r["name"] == "never_repeat"]
for run in b["rows"][0]["runs"]["eager"]:
    run["us_per_iter"] = 1000.0
json.dump(b, open(sys.argv[2], "w"))
PY
    run --separate-stderr "$ROOT/scripts/bench" --markdown "$ROOT/docs/bench-2026-11-30.json" "$T/later.json"
    assert_success
    assert_equal "$(grep -c '^| never_repeat ' <<<"$output")" 1
    assert_line --partial '| never_repeat | 1000.00 (1000.00–1000.00) | 475.30 '
    assert_line --index 3 --partial '| tiny_kernels n=100 | 461.87 '
}

@test "scripts/bench --chart draws new and older bench.json files" {
    command -v gnuplot >/dev/null || skip "gnuplot is not installed"
    run --separate-stderr "$ROOT/scripts/bench" --chart "$ROOT/docs/bench-2026-11-30.json" --png "$T/old.png"
    assert_success
    [ "$(head -c 4 "$T/old.png" | tail -c 3)" = PNG ] || fail "old.png is not a PNG"
    run --separate-stderr "$ROOT/scripts/bench" --lib "$LIB" --apps "$T/apps" \
        --py-apps "$T/apps" --python /bin/sh --out "$T/out" --only '^torch_resnet$' --repeats 1
    assert_success
    run --separate-stderr "$ROOT/scripts/bench" --chart "$T/out/bench.json" --png "$T/new.png"
    assert_success
    [ "$(head -c 4 "$T/new.png" | tail -c 3)" = PNG ] || fail "new.png is not a PNG"
}

@test "scripts/bench --list: --group, --only, --skip and --configs pick rows and configurations" {
    run --separate-stderr "$ROOT/scripts/bench" --list --group real
    assert_success
    assert_equal "$(grep -v '^ ' <<<"$output" | sed 's/  \[.*//' | paste -sd,)" \
        'torch_mlp,torch_transformer,torch_train,torch_resnet,hf_decode static,hf_decode dynamic,cupy_loop,cg_solver,jax_loop'
    # JAX's deterministic ops on both sides; the dynamic cache has no graph or compile mode;
    # the static decode runs 7 sequences of 64 tokens; compile runs fewer times.
    assert_line --regexp '^  eager +x3  XLA_FLAGS=--xla_gpu_deterministic_ops=true XLA_PYTHON_CLIENT_PREALLOCATE=false python3 .*/jax_loop\.py --iters 1000$'
    assert_line --regexp '^  autograph x3  LD_PRELOAD=<lib> AUTOGRAPH_STATS=<stats>\.%p\.json XLA_FLAGS=--xla_gpu_deterministic_ops=true .*/jax_loop\.py --iters 1000$'
    assert_line --regexp '^  compile +x2  python3 .*/hf_decode\.py --cache static --iters 7 --tokens 64 --mode compile$'
    assert_line --regexp '^  graph +x3  python3 .*/torch_resnet\.py --iters 220 --mode graph$'
    assert_line --regexp '^  autograph x5  LD_PRELOAD=<lib> .*/cg_solver --iters 50$'
    run --separate-stderr "$ROOT/scripts/bench" --list --group real --skip '^hf_decode' \
        --configs eager,autograph --repeats 5 --py-repeats 5 --quick
    assert_success
    assert_equal "$(grep -c '^[^ ]' <<<"$output")" 7
    refute_output --partial 'hf_decode'
    refute_output --regexp '^  (graph|compile) '
    assert_line --regexp '^  eager +x5  python3 .*/cupy_loop\.py --iters 20$'
    # Graph and compile capped: compile at most the row's repeats (3 for a Python script).
    run --separate-stderr "$ROOT/scripts/bench" --list --only '^torch_resnet$' --graph-repeats 1 \
        --compile-repeats 9
    assert_success
    assert_equal "$(awk '/^  /{print $1, $2}' <<<"$output" | paste -sd,)" \
        'eager x3,autograph x3,graph x1,compile x3'
    run --separate-stderr "$ROOT/scripts/bench" --list --group micro,torch --only 'elementwise|never'
    assert_success
    assert_equal "$(grep -v '^ ' <<<"$output" | sed 's/  \[.*//' | paste -sd,)" \
        'never_repeat,never_repeat long,never_repeat observed,never_repeat pass-through,torch_elementwise'
    # A row's environment is shown and applies to both sides.
    run --separate-stderr "$ROOT/scripts/bench" --list --only '^never_repeat observed$'
    assert_success
    assert_line --regexp '^  autograph +x5  LD_PRELOAD=<lib> AUTOGRAPH_STATS=<stats>\.%p\.json AUTOGRAPH_IDLE_OPS=0 .*/never_repeat$'
    run --separate-stderr "$ROOT/scripts/bench" --list --group nonsense
    assert_equal "$status" 2
    assert_regex "$stderr" '--group: one or more of micro, torch, real'
}
