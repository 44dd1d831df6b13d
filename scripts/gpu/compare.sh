#!/usr/bin/env bash
# GPU-side check of `autograph compare` (issue 10): the PyTorch elementwise loop through
#   build/autograph compare -n 5 --metric us_per_iter -- python3 apps/torch_elementwise.py
# then, as time allows, one run a side by hand (plain python3, and LD_PRELOAD by hand),
# each placed against compare's range for its side. Run from the repository root with
# build/ built; every program is bounded by timeout and the whole stays under 240 s (a
# PyTorch process takes 6-15 s on the H200, so 11 of them take 70-170 s).
# Prints compare's table, then rows | check | ok/FAIL/info | detail |, last.
set -u
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
LIB=$PWD/build/libautograph.so
ITERS=300
json="$OUT/compare-torch_elementwise.json"
cmd=(python3 apps/torch_elementwise.py --iters "$ITERS")
rows=()
row() { rows+=("$(printf '| %-40s | %-4s | %s |' "$1" "$2" "$3")"); }
metric() { sed -n 's/.*us_per_iter=\([0-9.eE+-]*\).*/\1/p' "$1" | tail -1; }

start=$SECONDS
rm -f "$json"
timeout 180 build/autograph compare -n 5 --metric 'us_per_iter=([0-9.eE+-]+)' --json "$json" \
	-- "${cmd[@]}" >"$OUT/compare-torch_elementwise.txt" 2>"$OUT/compare-torch_elementwise.err"
rc=$?
cat "$OUT/compare-torch_elementwise.txt"
if [ "$rc" -eq 124 ]; then
	row "compare torch_elementwise -n 5" FAIL "timed out after 180 s (11 PyTorch processes)"
elif ! python3 -m json.tool "$json" >/dev/null 2>&1; then
	row "compare torch_elementwise -n 5" FAIL "exit $rc, no valid --json"
else
	summary=$(python3 - "$json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
w, m = c["wall_s"], c.get("metric") or {}
share = c.get("replayed_share")
# ok only if every run succeeded and printed its figure, and the outputs agreed.
good = (c["exit_status"]["plain"] == 0 and not c["exit_status"]["differs"] and
        not c["output"]["differs"] and m.get("plain") and m.get("library") and
        m["plain"]["runs"] == m["library"]["runs"] == c["runs_per_side"])
print("ok" if good else "FAIL", "us/iter %s -> %s (x%s, %s); wall x%.3f (%s); replayed %s; output %s" % (
    m.get("plain") and "%.1f" % m["plain"]["median"], m.get("library") and "%.1f" % m["library"]["median"],
    m.get("ratio") and "%.3f" % m["ratio"], m.get("verdict"), w["ratio"] or 0, w["verdict"],
    "%.1f%%" % (100 * share) if share is not None else "none",
    "DIFFERS" if c["output"]["differs"] or c["exit_status"]["differs"] else "same"))
PY
)
	st=${summary%% *}
	[ "$rc" -eq 0 ] || st=FAIL
	row "compare torch_elementwise -n 5" "$st" "exit $rc; ${summary#* }; stderr in \$OUT/compare-torch_elementwise.err"
fi

# By hand, while there is time: one plain run and one with the library preloaded.
if [ -f "$json" ] && [ $((SECONDS - start)) -lt 200 ]; then
	timeout 20 "${cmd[@]}" >"$OUT/hand-plain.txt" 2>/dev/null
	timeout 20 env LD_PRELOAD="$LIB" "${cmd[@]}" >"$OUT/hand-lib.txt" 2>/dev/null
	detail=$(python3 - "$json" "$(metric "$OUT/hand-plain.txt")" "$(metric "$OUT/hand-lib.txt")" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
m = c.get("metric") or {}
out = []
for side, v in (("plain", sys.argv[2]), ("library", sys.argv[3])):
    s = m.get(side)
    if not v or not s:
        out.append("%s: no figure" % side)
        continue
    v = float(v)
    where = "inside" if s["min"] <= v <= s["max"] else "outside"
    out.append("%s %.1f us/iter, %s compare's %.1f-%.1f" % (side, v, where, s["min"], s["max"]))
print("; ".join(out))
PY
)
	row "compare torch_elementwise: by hand" info "$detail"
else
	row "compare torch_elementwise: by hand" info "skipped: $((SECONDS - start)) s used by compare"
fi
printf '%s\n' "${rows[@]}"
