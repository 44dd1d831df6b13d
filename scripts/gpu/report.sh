#!/usr/bin/env bash
# The statistics report on the GPU (issue 10, items 2 and 3), for scripts/gpu-check.sh:
#   1. the library's own measurement (self_ns_per_call, eager_ns_per_op, graph_launch_ns,
#      launch_time_saved_ns, replayed_share) for a never-repeating stream (never_repeat)
#      and a replayed one (tiny_kernels), each from its JSON statistics;
#   2. a run ended by SIGTERM (timeout -s TERM) leaves a valid JSON file with the
#      metadata, and the process still ends by SIGTERM (status 143).
# Run from the repository root with build/ built and `make apps` done. Every program is
# bounded by timeout; about 30 seconds in all. Prints table rows last.
set -u
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0
LIB=$PWD/build/libautograph.so
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rows=()
row() { rows+=("$(printf '| %-46s | %-4s | %s |' "$1" "$2" "$3")"); }

# self FILE: the self-measurement fields of a statistics file, on one line.
self() {
	python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("self %d ns/call over %d calls; eager %d ns/op; graph launch %d ns; saved %.3f ms; "
      "replayed %.3f of %d launches" % (s["self_ns_per_call"], s["self_calls"],
      s["eager_ns_per_op"], s["graph_launch_ns"], s["launch_time_saved_ns"] / 1e6,
      s["replayed_share"], s["launches"]))
PY
}

for run in "never_repeat --iters 2000 --n 20" "tiny_kernels --iters 2000 --n 20 --mode eager"; do
	app=${run%% *}
	rm -f "$TMP/$app.json"
	if AUTOGRAPH_STATS="$TMP/$app.json" LD_PRELOAD=$LIB timeout 60 build/apps/static/$run \
		>"$TMP/$app.out" 2>&1 && [ -s "$TMP/$app.json" ]; then
		row "self-measurement: $app" info "$(self "$TMP/$app.json")"
	else
		row "self-measurement: $app" FAIL "status $?, $(tail -c 200 "$TMP/$app.out")"
	fi
done

# A long run, ended by SIGTERM once it is well under way.
rm -f "$TMP/term.json"
AUTOGRAPH_STATS="$TMP/term.json" LD_PRELOAD=$LIB timeout -s TERM --preserve-status 8 \
	build/apps/static/tiny_kernels --iters 100000000 --n 20 --mode eager >"$TMP/term.out" 2>&1
status=$?
check=$(python3 - "$TMP/term.json" <<'PY' 2>&1
import json, sys
s = json.load(open(sys.argv[1]))
missing = [k for k in ("library_version", "cuda_headers", "driver_version", "pid", "argv",
                       "start_time", "options") if s.get(k) in (None, "", [], {})]
assert not missing, "missing: %s" % missing
assert s["end"] == "SIGTERM", s["end"]
print("valid; end %s; driver %s; headers %s; pid %s; argv %s; start %s; %d launches, %d replays"
      % (s["end"], s["driver_version"], s["cuda_headers"], s["pid"], " ".join(s["argv"]),
         s["start_time"], s["launches"], s["replays"]))
PY
)
if [ "$status" = 143 ] && [ -s "$TMP/term.json" ] && [[ "$check" == valid* ]]; then
	row "statistics of a run ended by SIGTERM" ok "status 143; $check"
else
	row "statistics of a run ended by SIGTERM" FAIL "status $status; $check"
fi
printf '%s\n' "${rows[@]}"
