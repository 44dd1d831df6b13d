#!/usr/bin/env bash
# Issue 8 on the GPU: tests/progs/holes.c's patterns, and eng_loop's --spin, --spin-every and --variants
# scenarios, each run without and with the library: identical output and exit status;
# for patterns 11-13 the figures too (resident growth over 10,000 stream and module
# cycles, time for the host-wait and eviction loops). The fuzzer is scripts/gpu/fuzz.sh.
# Run from the repository root with build/ carried (make test-progs built the programs;
# they link libcuda dynamically). Prints table rows last.
set -u
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 AG_KERNELS_PTX=$PWD/build/kernels.ptx
LIB=$PWD/build/libautograph.so
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rows=()
row() { rows+=("$(printf '| %-46s | %-4s | %s |' "$1" "$2" "$3")"); }
ms() { python3 -c "import time; print(int(time.time()*1000))"; }

both() { # NAME TIMEOUT ENV... -- PROGRAM ARGS...
	local name=$1 t=$2
	shift 2
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	local t0 t1 t2
	t0=$(ms)
	timeout "$t" "$@" >"$TMP/p.out" 2>"$TMP/p.err"
	local rc1=$?
	t1=$(ms)
	rm -f "$TMP/s.json"
	timeout "$t" env "${envs[@]}" LD_PRELOAD=$LIB AUTOGRAPH_STATS="$TMP/s.json" "$@" >"$TMP/a.out" 2>"$TMP/a.err"
	local rc2=$?
	t2=$(ms)
	local extra=""
	grep -q growth_kb "$TMP/a.err" && extra="growth $(grep -o 'growth_kb=[0-9-]*' "$TMP/p.err" | cut -d= -f2) KiB plain, $(grep -o 'growth_kb=[0-9-]*' "$TMP/a.err" | cut -d= -f2) KiB autograph; "
	extra+="$((t1 - t0)) ms plain, $((t2 - t1)) ms autograph; $(python3 -c "import json; d=json.load(open('$TMP/s.json')); print('replays %d, graphs built %d, updates %d, set aside: thrash %d, not faster %d, timeout %d' % tuple(d[k] for k in ('replays', 'graphs_built', 'updates', 'fallback_thrash', 'fallback_not_faster', 'fallback_timeout')))" 2>/dev/null)"
	# Every pattern exits 0 without the library: anything else (127: the program was not
	# built) means the comparison below would compare two failures.
	if [ $rc1 -ne 0 ]; then
		row "$name" FAIL "exit $rc1 without the library: $(tail -1 "$TMP/p.err")"
	elif [ ! -s "$TMP/s.json" ]; then
		row "$name" FAIL "no statistics file: the library did not run (exit $rc2: $(tail -1 "$TMP/a.err"))"
	elif [ $rc1 -ne $rc2 ]; then
		row "$name" FAIL "exit $rc1 plain, $rc2 autograph: $(tail -1 "$TMP/a.err")"
	elif ! cmp -s "$TMP/p.out" "$TMP/a.out"; then
		row "$name" FAIL "output differs: $(diff "$TMP/p.out" "$TMP/a.out" | head -2 | tr '\n' ' ')"
	else
		row "$name" ok "same output, exit $rc1; $extra"
	fi
}

H=build/progs/holes E=build/progs/eng_loop
for p in unpinned freed null-args attr-event event-reuse "xla-steps 2000"; do
	both "holes $p" 60 -- $H $p
done
for p in hostfn-launch ipc-event reused-stream reused-stream-release; do
	both "holes $p (item 15)" 60 -- $H $p
done
# A forked child using CUDA is outside what the driver supports: on the H200 a child
# calling the driver while the parent's other thread launched sometimes hangs without
# the library too, so the two sides are counted, not compared line by line.
forks() { echo "exit $2, children: $(grep 'fork-lock: child' "$1" | sed 's/.*child [0-9]*:* *//' | sort | uniq -c | sed 's/^ *//' | paste -sd';'), $(grep -o 'parent sum=[0-9]*' "$1")"; }
if [ -x $H ]; then
	timeout 120 $H fork-lock 10 >"$TMP/fp.out" 2>&1
	rc1=$?
	timeout 120 env LD_PRELOAD=$LIB $H fork-lock 10 >"$TMP/fa.out" 2>&1
	rc2=$?
	row "holes fork-lock 10 (item 15.2)" info "plain: $(forks "$TMP/fp.out" $rc1); autograph: $(forks "$TMP/fa.out" $rc2)"
else
	row "holes fork-lock 10 (item 15.2)" FAIL "$H not built"
fi
# What the driver answers inside a host function: the library tells its threads by
# cuCtxGetCurrent being refused there (src/hook/callback.c).
# A probe that does not exit 0 answered nothing: FAIL, not info.
probe() { # NAME PATTERN
	timeout 20 $H "$2" >"$TMP/probe.out" 2>&1
	local rc=$? st=info
	[ $rc -eq 0 ] || st=FAIL
	row "$1" $st "exit $rc: $(tail -1 "$TMP/probe.out" | cut -d' ' -f2-)"
}
probe "item 15.1: driver calls inside a host function" hostfn-probe
# Whether the driver sets an executable's record node whose event was destroyed (run 11
# inferred it does not: graph.c points such nodes at a spare event before the destroy).
probe "record node set after its event's destroy" event-node-probe
both "holes stream-churn 10000 (pattern 11)" 120 -- $H stream-churn 10000
both "holes module-churn 10000 (pattern 11)" 120 -- $H module-churn 10000
both "holes event-churn 200000 (pattern 11)" 120 -- $H event-churn 200000
both "pattern 12: host wait in a sequence (eng_loop --spin)" 60 -- $E --iters 300 --spin
both "pattern 12: host wait every 37th iteration (--spin-every)" 60 -- $E --iters 1000 --spin-every 37
both "pattern 13: 8 live sequences, MAX_GRAPHS=4" 60 AUTOGRAPH_MAX_GRAPHS=4 -- $E --iters 400 --variants 8
hung=0
for i in 1 2 3; do
	timeout 20 env LD_PRELOAD=$LIB $H exit-signal >/dev/null 2>&1
	[ $? -eq 0 ] || hung=$((hung + 1))
done
[ $hung -eq 0 ] && st=ok || st=FAIL
row "pattern 7: exit() from a signal handler, 3 runs" $st "$hung runs did not exit 0 within 20 s"

# The fuzzer at scale is scripts/gpu/fuzz.sh.
printf '%s\n' "${rows[@]}"
