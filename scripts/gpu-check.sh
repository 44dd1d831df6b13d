#!/usr/bin/env bash
# Everything GPU-side in one call, for the device tool (carry build/):
#   1. machine facts (GPU, driver, toolkit, commit);
#   2. interposition: every apps/ program in three builds (static cudart, shared
#      cudart, per-thread default stream) and the driver-API test programs, with
#      and without the library: identical result lines, launches counted equal
#      launches made;
#   3. PyTorch scripts with and without: identical results; the library's launch
#      count checked against torch.profiler's (difference between two run lengths,
#      so start-up work cancels out);
#   4. engine: tiny-kernel loops eager, under autograph and hand-graphed;
#      overhead on a never-repeating and on a long-kernel program;
#   5. pass-through cost per launch.
# Every program run is bounded by a timeout. A table comes last; the logs are
# packed into $OUT/logs.tgz ($OUT: the device tool's, or /tmp/gpu-check).
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
commit=$(git rev-parse --short HEAD 2>/dev/null || cat build/COMMIT 2>/dev/null || echo unknown)
echo "gpu: $gpu; $nvcc_v; commit $commit; $(date -u +%F)" | tee "$OUT/facts.txt"
[ -x build/apps/static/tiny_kernels ] || make apps >"$LOGS/build.log" 2>&1 || {
	echo "building apps failed"; tail -20 "$LOGS/build.log"; exit 1; }

# --- 2. interposition -----------------------------------------------------------
declare -A ARGS=(
	[tiny_kernels]="--iters 300 --n 20 --check"
	[jacobi]="--iters 200 --check"
	[mlp_cublas]="--iters 100 --check"
	[long_kernels]="--iters 3 --check"
	[never_repeat]="--iters 200 --check"
	[multi_stream]="--iters 200 --check"
)
for variant in static shared ptds; do
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

for prog in build/progs/drv_*; do
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
for script in torch_elementwise torch_mlp torch_transformer torch_train; do
	base=$LOGS/$script
	timeout 300 python3 apps/$script.py --iters 20 --check >"$base.plain" 2>"$base.plain.err"
	rc1=$?
	timeout 300 env LD_PRELOAD=$LIB AUTOGRAPH_STATS=$base.20.json python3 apps/$script.py --iters 20 --check >"$base.ag" 2>"$base.ag.err"
	rc2=$?
	timeout 300 env LD_PRELOAD=$LIB AUTOGRAPH_STATS=$base.40.json python3 apps/$script.py --iters 40 >/dev/null 2>&1
	timeout 300 python3 apps/$script.py --iters 20 --count-kernels >"$base.p20" 2>/dev/null
	timeout 300 python3 apps/$script.py --iters 40 --count-kernels >"$base.p40" 2>/dev/null
	d_lib=$(($(json "$base.40.json" launches) - $(json "$base.20.json" launches)))
	d_prof=$(($(field "$base.p40" profiled_kernels) - $(field "$base.p20" profiled_kernels)))
	if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
		row "pytorch $script" FAIL "exit $rc1 / $rc2: $(tail -1 "$base.ag.err")"
	elif ! diff -q <(grep '^result:' "$base.plain") <(grep '^result:' "$base.ag") >/dev/null; then
		row "pytorch $script" FAIL "result lines differ"
	else
		[ "$d_lib" = "$d_prof" ] && st=ok || st=FAIL
		row "pytorch $script" $st "same result; 20 more iters: $d_lib launches counted, profiler $d_prof; replays $(json "$base.20.json" replays)"
	fi
done

# --- 4. engine speed ---------------------------------------------------------------
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# The library is preloaded into the measured program only (env after timeout), so
# that timeout's own exit cannot overwrite the program's statistics file.
us() { timeout 120 env "$@" 2>/dev/null | grep -o 'us_per_iter=[0-9.]*' | cut -d= -f2; }
bench3() { # name, args: eager plain / eager under autograph / hand graph, 5 interleaved repeats
	local name=$1; shift
	local e=() a=() g=()
	for r in 1 2 3 4 5; do
		e+=("$(us build/apps/static/tiny_kernels "$@" --mode eager)")
		a+=("$(us LD_PRELOAD=$LIB AUTOGRAPH_STATS=$LOGS/bench-$name.json build/apps/static/tiny_kernels "$@" --mode eager)")
		g+=("$(us build/apps/static/tiny_kernels "$@" --mode graph)")
	done
	local me ma mg
	me=$(printf '%s\n' "${e[@]}" | median); ma=$(printf '%s\n' "${a[@]}" | median); mg=$(printf '%s\n' "${g[@]}" | median)
	local frac
	frac=$(python3 -c "print(f'{$mg/$ma*100:.0f}')")
	local graphed
	graphed=$(json "$LOGS/bench-$name.json" "f'{ops_replayed}/{launches}'")
	local st=ok
	python3 -c "import sys; sys.exit(0 if $ma < $me else 1)" || st=FAIL
	row "speed $name" $st "us/iter eager $me, autograph $ma, graph $mg: $frac% of graph throughput; graphed $graphed"
}
bench3 "n=100 no sync" --n 100 --iters 2000 --sync none
bench3 "n=100 sync every iter" --n 100 --iters 1000 --sync iter
bench3 "n=100 ping-pong" --n 100 --iters 2000 --pingpong
bench3 "n=100 legacy stream" --n 100 --iters 2000 --stream default

overhead() { # name, binary args: plain vs under autograph, 5 interleaved repeats
	local name=$1; shift
	local p=() a=()
	for r in 1 2 3 4 5; do
		p+=("$(us "$@")")
		a+=("$(us LD_PRELOAD=$LIB "$@")")
	done
	local mp ma
	mp=$(printf '%s\n' "${p[@]}" | median); ma=$(printf '%s\n' "${a[@]}" | median)
	row "overhead $name" info "us/iter plain $mp, autograph $ma: $(python3 -c "print(f'{($ma/$mp-1)*100:+.1f}%')")"
}
overhead "never-repeating launches" build/apps/static/never_repeat --iters 2000
overhead "long kernels" build/apps/static/long_kernels --iters 20

# --- 5. pass-through cost per launch ----------------------------------------------------
p=(); o=(); x=()
for r in 1 2 3 4 5 6 7; do
	p+=("$(us build/apps/static/tiny_kernels --n 100 --iters 2000 --mode eager)")
	o+=("$(us AUTOGRAPH=0 LD_PRELOAD=$LIB build/apps/static/tiny_kernels --n 100 --iters 2000 --mode eager)")
	x+=("$(us AUTOGRAPH_EXCLUDE='*' LD_PRELOAD=$LIB build/apps/static/tiny_kernels --n 100 --iters 2000 --mode eager)")
done
mp=$(printf '%s\n' "${p[@]}" | median); mo=$(printf '%s\n' "${o[@]}" | median); mx=$(printf '%s\n' "${x[@]}" | median)
row "pass-through cost (AUTOGRAPH=0)" info "$(python3 -c "print(f'{($mo-$mp)*1000/100:+.1f} ns per launch (eager {$mp*10:.0f} ns per launch)')")"
row "observing cost (nothing graphed)" info "$(python3 -c "print(f'{($mx-$mp)*1000/100:+.1f} ns per launch')")"

echo
echo "| check | ok? | details |"
echo "| --- | --- | --- |"
printf '%s\n' "${rows[@]}" | tee "$OUT/table.md"
tar czf "$OUT/logs.tgz" -C "$(dirname "$LOGS")" logs
exit $failed
