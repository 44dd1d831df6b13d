#!/usr/bin/env bash
# Everything GPU-side in one call, for the device tool (carry build/):
#   1. machine facts (GPU, driver, toolkit, commit);
#   2. interposition: every apps/ program in three builds (static cudart, shared
#      cudart, per-thread default stream) and the driver-API test programs, with
#      and without the library, each with --check: identical result lines, launches
#      counted equal launches made;
#   3. PyTorch scripts under the library with --check; for the two interposition
#      scripts also identical results and the launch count checked against
#      torch.profiler's (difference between two run lengths, so start-up cancels);
#   4. pass-through cost per launch (AUTOGRAPH=0 against no library);
#   5. make demo;
#   6. scripts/bench: every program eager, under autograph and hand-graphed;
#   7. the scripts of scripts/gpu/ (issue 8's patterns, the report's self-measurement
#      and SIGTERM file, autograph compare, the real workloads, several devices, the
#      workloads' AUTOGRAPH_TRACE files, the fuzzer at scale), each printing its own rows.
# GPU_SECTIONS (default: all) picks sections by name: interpose torch passthrough demo
# bench holes adversary report compare workloads multidev traces fuzz; BENCH_PARTS (name:regex
# pairs), BENCH_PY_REPEATS (default 2) and BENCH_CONFIGS narrow the bench. Apps are built here unless
# build/apps was carried. Every program run is bounded by a timeout. A table comes last; the logs are
# packed into $OUT/logs.tgz ($OUT: the device tool's, or /tmp/gpu-check), the
# benchmark's raw numbers are $OUT/bench-cpp.json and $OUT/bench-torch.json.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-check}
LOGS=$(mktemp -d)/logs
mkdir -p "$OUT" "$LOGS"
LIB=$PWD/build/libautograph.so
export AG_KERNELS_PTX=$PWD/build/kernels.ptx
rows=()
failed=0

row() {
	rows+=("$(printf '| %-46s | %-4s | %s |' "$1" "$2" "$3")")
	echo "${rows[-1]}" >&2
	case "$2" in ok | info) ;; *) failed=1 ;; esac
}

json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))" "$@"; }
field() { grep -o "$2=[^ ]*" "$1" | head -1 | cut -d= -f2; }

# --- 1. facts -------------------------------------------------------------------
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
nvcc_v=$(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' | head -1)
commit=$(cat build/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "gpu: $gpu; $nvcc_v; commit $commit; $(date -u +%F)" | tee "$OUT/facts.txt"
SECTIONS=" ${GPU_SECTIONS:-interpose torch passthrough demo bench holes adversary report compare workloads multidev traces fuzz} "
want() { [[ "$SECTIONS" == *" $1 "* ]]; }
[ -x build/apps/static/tiny_kernels ] || make apps >"$LOGS/build.log" 2>&1 || {
	echo "building apps failed"; tail -20 "$LOGS/build.log"; exit 1; }
# The test programs (the driver-API doors, holes, eng_loop) and the test kernels' PTX:
# without them sections 2 and 7 would compare two runs that both failed to start.
[ -x build/progs/holes ] && [ -x build/progs/drv_link ] && [ -s build/kernels.ptx ] ||
	make test-progs build/progs/multidev build/kernels.ptx >"$LOGS/build-progs.log" 2>&1 || {
	echo "building the test programs failed (make test-progs here, then carry build/)"
	tail -20 "$LOGS/build-progs.log"; exit 1; }

# --- 2. interposition -----------------------------------------------------------
declare -A ARGS=(
	[tiny_kernels]="--iters 300 --n 20 --check"
	[jacobi]="--iters 200 --check"
	[mlp_cublas]="--iters 100 --check"
	[long_kernels]="--iters 3 --check"
	[never_repeat]="--iters 200 --check"
	[multi_stream]="--iters 200 --check"
)
want interpose && for variant in static shared ptds; do
	for app in tiny_kernels jacobi mlp_cublas long_kernels never_repeat multi_stream; do
		bin=build/apps/$variant/$app
		base=$LOGS/$variant-$app
		timeout 120 "$bin" ${ARGS[$app]} >"$base.plain" 2>"$base.plain.err"
		rc1=$?
		timeout 120 env LD_PRELOAD=$LIB AUTOGRAPH_STATS=$base.json "$bin" ${ARGS[$app]} >"$base.ag" 2>"$base.ag.err"
		rc2=$?
		made=$(field "$base.plain" kernels_launched)
		blas=$(field "$base.plain" blas_calls)
		counted=$(json "$base.json" launches 2>/dev/null || echo none)
		replays=$(json "$base.json" replays 2>/dev/null || echo none)
		if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
			row "$variant $app" FAIL "exit $rc1 / $rc2: $(tail -1 "$base.ag.err")"
		elif ! diff -q <(grep '^result:' "$base.plain") <(grep '^result:' "$base.ag") >/dev/null; then
			row "$variant $app" FAIL "result lines differ"
		elif [ -n "$blas" ]; then
			[ "$counted" = $((made + blas)) ] && st=ok || st=FAIL
			row "$variant $app" $st "launches $counted = $made own + $blas cuBLAS gemv; replays $replays"
		elif [ "$counted" = "$made" ]; then
			row "$variant $app" ok "same result; launches $counted = made; replays $replays"
		else
			row "$variant $app" FAIL "launches counted $counted, made $made"
		fi
	done
done

want interpose && for prog in build/progs/drv_*; do
	[ -x "$prog" ] || continue
	name=$(basename "$prog")
	for mode in "" "--ptds"; do
		[ "$name" != drv_procaddr ] && [ -n "$mode" ] && continue
		base=$LOGS/$name$mode
		timeout 120 "$prog" $mode --iters 100 --kernels 20 >"$base.plain" 2>&1
		rc1=$?
		timeout 120 env LD_PRELOAD=$LIB AUTOGRAPH_STATS=$base.json "$prog" $mode --iters 100 --kernels 20 >"$base.ag" 2>&1
		rc2=$?
		made=$(field "$base.plain" launches)
		counted=$(json "$base.json" launches 2>/dev/null || echo none)
		if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
			row "driver API $name $mode" FAIL "exit $rc1 / $rc2: $(tail -1 "$base.ag")"
		elif diff -q <(grep -v '^autograph' "$base.plain") <(grep -v '^autograph' "$base.ag") >/dev/null &&
			[ "$counted" = "$made" ]; then
			row "driver API $name $mode" ok "same output; launches $counted = made; replays $(json "$base.json" replays)"
		else
			row "driver API $name $mode" FAIL "output differs or launches $counted != $made"
		fi
	done
done

# --- 3. PyTorch ------------------------------------------------------------------
export PYTHONUNBUFFERED=1
want torch && for script in torch_elementwise torch_mlp torch_transformer torch_train; do
	base=$LOGS/$script
	timeout 300 env LD_PRELOAD=$LIB AUTOGRAPH_STATS=$base.20.json python3 apps/$script.py --iters 20 --check >"$base.ag" 2>"$base.ag.err"
	rc2=$?
	if [ $rc2 -ne 0 ]; then
		row "pytorch $script" FAIL "exit $rc2 under autograph: $(tail -1 "$base.ag.err")"
		continue
	fi
	case $script in torch_elementwise | torch_mlp) ;; *)
		row "pytorch $script" ok "--check passes under autograph ($(grep -o 'max_rel_err=[^ ]*' "$base.ag.err")); replays $(json "$base.20.json" replays)"
		continue ;;
	esac
	# The two scripts of the interposition check: same result line, and the launch count
	# against torch.profiler's over 20 more iterations (start-up work cancels out).
	timeout 300 python3 apps/$script.py --iters 20 --check >"$base.plain" 2>"$base.plain.err"
	timeout 300 env LD_PRELOAD=$LIB AUTOGRAPH_STATS=$base.40.json python3 apps/$script.py --iters 40 >/dev/null 2>&1
	timeout 300 python3 apps/$script.py --iters 20 --count-kernels >"$base.p20" 2>/dev/null
	timeout 300 python3 apps/$script.py --iters 40 --count-kernels >"$base.p40" 2>/dev/null
	d_lib=$(($(json "$base.40.json" launches) - $(json "$base.20.json" launches)))
	d_prof=$(($(field "$base.p40" profiled_kernels) - $(field "$base.p20" profiled_kernels)))
	if ! diff -q <(grep '^result:' "$base.plain") <(grep '^result:' "$base.ag") >/dev/null; then
		row "pytorch $script" FAIL "result lines differ"
	else
		[ "$d_lib" = "$d_prof" ] && st=ok || st=FAIL
		row "pytorch $script" $st "same result, --check passes; 20 more iters: $d_lib launches counted, profiler $d_prof; replays $(json "$base.20.json" replays)"
	fi
done

# --- 4. pass-through cost per launch -----------------------------------------------
# Eager launch time varies between processes by several percent, so many short runs
# are interleaved and both the median and the minimum are compared.
us() { timeout 120 env "$@" 2>/dev/null | grep -o 'us_per_iter=[0-9.]*' | cut -d= -f2; }
stat2() { sort -n | awk '{a[NR]=$1} END {printf "%s %s", a[int((NR+1)/2)], a[1]}'; }
p=(); o=()
want passthrough && for r in $(seq 11); do
	p+=("$(us X=1 build/apps/static/tiny_kernels --n 100 --iters 1000 --mode eager)")
	o+=("$(us AUTOGRAPH=0 LD_PRELOAD=$LIB build/apps/static/tiny_kernels --n 100 --iters 1000 --mode eager)")
done
want passthrough && read -r pmed pmin <<<"$(printf '%s\n' "${p[@]}" | stat2)"
want passthrough && read -r omed omin <<<"$(printf '%s\n' "${o[@]}" | stat2)"
want passthrough && row "pass-through cost (AUTOGRAPH=0)" info "$(python3 -c "print(f'{($omed-$pmed)*10:+.0f} ns per launch by medians, {($omin-$pmin)*10:+.0f} by minima (eager {$pmed*10:.0f} ns per launch)')")"

# --- 5. make demo ----------------------------------------------------------------------
# The carried build is up to date; -o keeps make from rebuilding it here.
if ! want demo; then
	:
elif timeout 120 make -o build/libautograph.so -o build/autograph -o build/apps/static/tiny_kernels demo >"$LOGS/demo.log" 2>&1; then
	row "make demo" ok "$(grep -i 'speed-up\|share' "$LOGS/demo.log" | head -2 | tr '\n' ' ')"
else
	row "make demo" FAIL "$(tail -2 "$LOGS/demo.log" | tr '\n' ' ')"
fi

# --- 6. benchmark: every program eager, under autograph, hand-graphed -------------------
# C++ programs and PyTorch scripts in two runs, so that a cut-off keeps the first.
# BENCH_PARTS narrows it, e.g. "cpp:^tiny" for one program. BENCH_CONFIGS leaves out
# torch.compile by default (a compile run takes tens of seconds); issue 9's real workloads
# (scripts/bench --group real) take longer than this section's limit: see scripts/bench.
want bench && for part in ${BENCH_PARTS:-cpp:'^(tiny|jacobi|mlp|long|never|multi)' torch:'^torch_(elementwise|mlp|transformer|train)$'}; do
	name=${part%%:*}
	timeout 400 python3 scripts/bench --lib "$LIB" --apps build/apps/static --out "$LOGS/bench-$name" \
		--repeats 5 --py-repeats "${BENCH_PY_REPEATS:-2}" --configs "${BENCH_CONFIGS:-eager,autograph,graph}" \
		--only "${part#*:}" >"$LOGS/bench-$name.md" 2>"$LOGS/bench-$name.err"
	rc=$?
	cp "$LOGS/bench-$name/bench.json" "$OUT/bench-$name.json" 2>/dev/null
	[ $rc -eq 0 ] && st=ok || st=FAIL
	row "bench $name (scripts/bench)" $st "exit $rc; table below, raw numbers in \$OUT/bench-$name.json"
	cat "$LOGS/bench-$name.md" >&2
done

# --- 7. scripts/gpu/: each prints rows | check | ok/FAIL/info | detail | last ------------
for part in holes adversary report compare workloads multidev traces fuzz; do
	want $part && [ -x scripts/gpu/$part.sh ] || continue
	limit=260
	[ $part = fuzz ] && limit=540
	timeout $limit env OUT="$OUT" bash scripts/gpu/$part.sh >"$LOGS/gpu-$part.log" 2>&1
	rc=$?
	n=0
	while IFS= read -r line; do
		rows+=("$line")
		echo "$line" >&2
		n=$((n + 1))
		case "$line" in *"| FAIL "*) failed=1 ;; esac
	done < <(grep -E '^\| .* \| (ok|FAIL|info) +\|' "$LOGS/gpu-$part.log")
	[ $rc -eq 0 ] || [ $n -gt 0 ] || row "scripts/gpu/$part.sh" FAIL "exit $rc, no rows: $(tail -1 "$LOGS/gpu-$part.log")"
done

echo
echo "| check | ok? | details |"
echo "| --- | --- | --- |"
printf '%s\n' "${rows[@]}" | tee "$OUT/table.md"
tar czf "$OUT/logs.tgz" -C "$(dirname "$LOGS")" logs
exit $failed
