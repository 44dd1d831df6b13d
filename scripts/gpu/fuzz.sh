#!/usr/bin/env bash
# scripts/gpu/fuzz.sh - the differential fuzzer at scale (issue 8): FUZZ_GPU_SEEDS programs
# (default 1000) on the real driver, then FUZZ_STANDIN_SEEDS (default 200000) on the CPU
# stand-in executing asynchronously (AG_FAKE_ASYNC=1), half of them with issue 8's shapes
# (AG_FUZZ_PATTERNS=1), all through tests/fuzz/run-seeds: each program without the
# library, with it, and with it under one variant option, outputs compared. Programs run
# FUZZ_BATCH at a time in one process (fuzz --batch; default 50 on the GPU, where a
# process start costs seconds, 100 on the stand-in), on every core. One row per part;
# mismatch lines with their reproducing commands go to stdout above the rows.
# Run from the repository root with build/ built (make, make test-progs, fakecuda).
set -u
cd "$(dirname "$0")/../.." || exit 1
export NCCL_NVLS_ENABLE=0 AG_KERNELS_PTX=$PWD/build/kernels.ptx
jobs=$(nproc)
rows=()
row() { rows+=("$(printf '| %-46s | %-4s | %s |' "$1" "$2" "$3")"); }

part() { # part LABEL FIRST COUNT BATCH [VAR=value...]: one run-seeds call, one row
	local label=$1 first=$2 count=$3 per=$4 t0=$SECONDS
	shift 4
	out=$(env "$@" FUZZ_BATCH="$per" tests/fuzz/run-seeds "$first" "$count" "$jobs" 2>&1)
	rc=$?
	grep -v '^fuzz: ' <<<"$out" | head -20
	[ $rc -eq 0 ] && st=ok || st=FAIL
	row "$label" $st "$(grep '^fuzz: ' <<<"$out" | tail -1) in $((SECONDS - t0)) s, batches of $per, $jobs jobs"
}

gpu=${FUZZ_GPU_SEEDS:-1000}
standin=${FUZZ_STANDIN_SEEDS:-200000}
# On the real driver: AG_FAKECUDA_LIB names libcuda.so.1's own directory.
real=$(ldd build/fuzz/fuzz | awk '/libcuda\.so\.1/{print $3; exit}')
[ "$gpu" -gt 0 ] && part "fuzzer on the H200 (real driver)" 1 "$gpu" "${FUZZ_BATCH_GPU:-50}" \
	AG_FAKECUDA_LIB="$real"
half=$((standin / 2))
[ "$standin" -gt 0 ] && part "fuzzer, asynchronous stand-in" 1 "$half" "${FUZZ_BATCH_STANDIN:-100}" \
	AG_FAKE_ASYNC=1 AG_FAKECUDA_LIB="$PWD/build/fakecuda/libcuda.so.1"
[ "$standin" -gt 0 ] && part "fuzzer, asynchronous stand-in, issue 8 shapes" $((half + 1)) \
	$((standin - half)) "${FUZZ_BATCH_STANDIN:-100}" AG_FAKE_ASYNC=1 AG_FUZZ_PATTERNS=1 \
	AG_FAKECUDA_LIB="$PWD/build/fakecuda/libcuda.so.1"
printf '%s\n' "${rows[@]}"
