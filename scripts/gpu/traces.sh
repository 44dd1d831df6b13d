#!/usr/bin/env bash
# scripts/gpu/traces.sh - AUTOGRAPH_TRACE files of issue 9's real workloads, for
# developing detection on a CPU (`autograph analyze`): each workload runs once under
# the library with a trace and statistics per process; the trace of the process that
# launched the most is kept, gzipped, in $OUT/traces.tgz, and a row gives its size,
# the live replayed share (from the statistics) and what the analyzer says of the same
# trace here (`graphed:`), so that the replay can be checked against the run.
# Run from the repository root with build/ built (make, make apps).
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-/tmp/gpu-traces}
TMP=$(mktemp -d)
mkdir -p "$OUT" "$TMP/keep"
LIB=$PWD/build/libautograph.so
export NCCL_NVLS_ENABLE=0 HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
TRACED=(
	"torch_resnet|python3 apps/torch_resnet.py --iters 30"
	"hf_decode_static|python3 apps/hf_decode.py --cache static --iters 2 --tokens 32"
	"hf_decode_dynamic|python3 apps/hf_decode.py --cache dynamic --iters 2 --tokens 32"
	"torch_mlp|python3 apps/torch_mlp.py --iters 50"
	"torch_transformer|python3 apps/torch_transformer.py --iters 30"
	"torch_train|python3 apps/torch_train.py --iters 20"
	"cupy_loop|python3 apps/cupy_loop.py"
	"cg_solver|build/apps/static/cg_solver --iters 5"
	"jax_loop|python3 apps/jax_loop.py --iters 200"
	"tiny_kernels_100|build/apps/static/tiny_kernels --n 100 --iters 200"
	"tiny_kernels_1000|build/apps/static/tiny_kernels --n 1000 --iters 30"
	"tiny_kernels_100_sync|build/apps/static/tiny_kernels --n 100 --iters 200 --sync iter"
)
rows=()
row() { rows+=("$(printf '| %-34s | %-4s | %s |' "$1" "$2" "$3")"); }

one() { # one SLUG COMMAND...
	local s=$1
	shift
	timeout 90 env LD_PRELOAD="$LIB" AUTOGRAPH_TRACE="$TMP/$s.%p.agt" AUTOGRAPH_STATS="$TMP/$s.%p.json" \
		"$@" >"$TMP/$s.out" 2>"$TMP/$s.err"
	echo $? >"$TMP/$s.rc"
}
for w in "${TRACED[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge 4 ]; do wait -n; done
	# shellcheck disable=SC2086 # the command is split into words on purpose
	one "${w%%|*}" ${w#*|} &
done
wait
for w in "${TRACED[@]}"; do
	s=${w%%|*}
	big=$(ls -S "$TMP/$s".*.agt 2>/dev/null | head -1)
	if [ -z "$big" ]; then
		row "trace $s" FAIL "no trace written (exit $(cat "$TMP/$s.rc")): $(tail -1 "$TMP/$s.err" | cut -c1-100)"
		continue
	fi
	json=${big%.agt}.json
	live=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['ops_replayed'])" "$json" 2>/dev/null)
	graphed=$(build/autograph-analyze "$big" 2>&1 | tail -1)
	gzip -9 -c "$big" >"$TMP/keep/$s.agt.gz"
	row "trace $s" ok "exit $(cat "$TMP/$s.rc"), $(stat -c %s "$TMP/keep/$s.agt.gz") bytes gzipped; live ops_replayed ${live:-?}; analyzer: $graphed"
done
tar cf "$OUT/traces.tar" -C "$TMP/keep" .
printf '%s\n' "${rows[@]}"
