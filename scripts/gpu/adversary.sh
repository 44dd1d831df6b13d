#!/usr/bin/env bash
# The patterns of issue 8 on the real driver: builds tests/progs/adversary.c against the
# real libcuda and runs every pattern without and with the library (each run bounded by
# timeout), then prints one table row per pattern: ok when the result line and exit
# status are identical and the result is "ok". Patterns 11-13 add their figures (memory
# growth, seconds per run, graphs built per replay). Run from the repository root with
# build/ built (make, and build/kernels.ptx); called by scripts/gpu-check.sh.
set -u
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
LIB=$PWD/build/libautograph.so
export AG_KERNELS_PTX=$PWD/build/kernels.ptx
work=$(mktemp -d)
bin=$work/adversary
rows=()
row() { rows+=("$(printf '| %-46s | %-4s | %s |' "$1" "$2" "$3")"); }

if ! gcc -std=c11 -O2 -Wall -Wextra -Werror -I"$CUDA_HOME/include" -o "$bin" tests/progs/adversary.c \
	-L"$CUDA_HOME/lib64/stubs" -lcuda -lpthread 2>"$work/build.log"; then
	row "adversary: build against libcuda" FAIL "$(head -c 200 "$work/build.log" | tr '\n' ' ')"
	printf '%s\n' "${rows[@]}"
	exit 1
fi
for f in "$LIB" "$AG_KERNELS_PTX"; do
	[ -e "$f" ] || { row "adversary: $f" FAIL "missing (make, make build/kernels.ptx)"; printf '%s\n' "${rows[@]}"; exit 1; }
done

# env_for N: the environment the pattern runs under with the library (as in tests/adversary.bats).
env_for() {
	case "$1" in
	1 | 2 | 3 | 4 | 5 | 9 | 10) echo AUTOGRAPH_FLUSH_US=10000000 ;;
	12) echo AUTOGRAPH_FLUSH_US=200000 ;;
	13) echo AUTOGRAPH_MAX_GRAPHS=2 ;;
	*) echo AUTOGRAPH=1 ;;
	esac
}

# one LABEL N [VAR=value ...]: runs the pattern, leaving result, status, seconds, stderr.
one() {
	local label=$1 n=$2
	shift 2
	local t0 t1
	t0=$(date +%s%N)
	env "$@" timeout 12 "$bin" --pattern "$n" >"$work/$label.out" 2>"$work/$label.err"
	echo $? >"$work/$label.rc"
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000)) >"$work/$label.ms"
}

failed=0
for n in $(seq 1 14); do
	one plain$n "$n" AUTOGRAPH=1
	# shellcheck disable=SC2046
	one lib$n "$n" $(env_for "$n") AUTOGRAPH_STATS="$work/s$n.json" LD_PRELOAD="$LIB"
	p=$(tail -1 "$work/plain$n.out"); prc=$(cat "$work/plain$n.rc")
	l=$(tail -1 "$work/lib$n.out"); lrc=$(cat "$work/lib$n.rc")
	extra="time $(cat "$work/plain$n.ms") ms / $(cat "$work/lib$n.ms") ms"
	case $n in
	11) extra="$extra; without: $(grep -o '2000 streams.*' "$work/plain$n.err" | head -1); with: $(grep -o '2000 streams.*' "$work/lib$n.err" | head -1)" ;;
	12) extra="$extra (300 iterations)" ;;
	13 | 14) extra="$extra; $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('graphs built', d.get('graphs_built'), 'replays', d.get('replays'))" "$work/s$n.json" 2>/dev/null)" ;;
	esac
	own=ok
	if [ "$n" = 13 ]; then
		# Eviction thrash: instantiations must stop (each of the 6 sequences set aside after
		# 16 instantiating replays), as tests/adversary.bats checks on the stand-in.
		own=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('ok' if d['graphs_built'] <= 6 * 17 and d['fallback_not_faster'] == 6 else 'thrash')" "$work/s13.json" 2>/dev/null || echo missing)
	elif [ "$n" = 14 ]; then
		# Determinism: two more runs must make the same decisions.
		for k in 2 3; do
			one lib14-$k 14 AUTOGRAPH_STATS="$work/s14-$k.json" LD_PRELOAD="$LIB"
			cmp -s <(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['graphs_built'], d['replays'])" "$work/s14.json") \
				<(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['graphs_built'], d['replays'])" "$work/s14-$k.json") ||
				own=nondeterministic
		done
	fi
	if [ "$own" = ok ] && [ "$p" = "$l" ] && [ "$prc" = "$lrc" ] && [ "$prc" = 0 ] && [[ "$p" == "result: pattern $n ok"* ]]; then
		row "adversary pattern $n" ok "${p#result: pattern $n }; $extra"
	else
		failed=1
		row "adversary pattern $n" FAIL "without [$prc] ${p:-(no result)}; with [$lrc] ${l:-(no result)}; check $own; $extra"
	fi
done
rm -rf "$work"
printf '%s\n' "${rows[@]}"
exit $failed
