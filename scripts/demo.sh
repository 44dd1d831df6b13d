#!/usr/bin/env bash
# What `make demo` runs; it builds nothing (the Makefile target depends on what is used).
#
# With a GPU: the launch-bound tiny_kernels program eager, under autograph (through the
# launcher) and as a hand-written CUDA graph; prints the three microseconds per
# iteration, the speed-ups over eager, the share of the hand-written graph's saving that
# autograph reaches, whether the three results agree, and autograph's statistics.
# Without one: a driver-API loop on the CPU stand-in for libcuda, which shows what is
# graphed but no timings.
#
# Environment: BUILD (default build), N and ITERS for tiny_kernels (default 100, 2000).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
LAUNCHER=$BUILD/autograph

need() {
	for f in "$@"; do
		[ -e "$f" ] || { echo "autograph demo: $f is missing; run make first" >&2; exit 1; }
	done
}

# field NAME LINE: the value of NAME=value in a result:/timing: line.
field() { sed -n "s/.*[ :]$1=\([^ ]*\).*/\1/p" <<<"$2"; }

gpu_demo() {
	local prog=$BUILD/apps/static/tiny_kernels
	need "$LAUNCHER" "$BUILD/libautograph.so" "$prog"
	local args=(--n "${N:-100}" --iters "${ITERS:-2000}")
	local eager ag graph err
	err=$(mktemp)
	trap 'rm -f "$err"' RETURN

	echo "autograph demo: $prog ${args[*]} on $(nvidia-smi -L | head -n1 | sed 's/ (UUID.*//')"
	eager=$("$prog" "${args[@]}" --mode eager)
	ag=$("$LAUNCHER" --stats -- "$prog" "${args[@]}" --mode eager 2>"$err")
	graph=$("$prog" "${args[@]}" --mode graph)

	local te ta tg
	te=$(field us_per_iter "$(grep '^timing:' <<<"$eager")")
	ta=$(field us_per_iter "$(grep '^timing:' <<<"$ag")")
	tg=$(field us_per_iter "$(grep '^timing:' <<<"$graph")")
	awk -v e="$te" -v a="$ta" -v g="$tg" 'BEGIN {
		printf "  %-22s %10.2f us/iteration\n", "eager", e
		printf "  %-22s %10.2f us/iteration   %.2fx over eager\n", "autograph", a, e / a
		printf "  %-22s %10.2f us/iteration   %.2fx over eager\n", "hand-written graph", g, e / g
		if (e > g)
			printf "  autograph saves %.0f%% of the time the hand-written graph saves\n",
			       100 * (e - a) / (e - g)
	}'

	local ce ca cg
	ce=$(field checksum "$(grep '^result:' <<<"$eager")")
	ca=$(field checksum "$(grep '^result:' <<<"$ag")")
	cg=$(field checksum "$(grep '^result:' <<<"$graph")")
	if [ "$ce" = "$ca" ] && [ "$ce" = "$cg" ]; then
		echo "  results agree (checksum $ce)"
	else
		echo "  results DIFFER: eager $ce, autograph $ca, graph $cg"
	fi
	echo
	cat "$err"
}

cpu_demo() {
	local prog=$BUILD/progs/drv_link ptx=$BUILD/kernels.ptx fake=$BUILD/fakecuda
	need "$LAUNCHER" "$BUILD/libautograph.so" "$prog" "$ptx" "$fake/libcuda.so.1"
	local args=(--iters 200 --kernels 50 --sync iter "$ptx")
	local out stats err
	err=$(mktemp)
	trap 'rm -f "$err"' RETURN

	echo "autograph demo: no GPU found; running on the CPU stand-in for libcuda, which shows what is graphed but no timings"
	echo "autograph demo: $prog ${args[*]}"
	out=$(LD_LIBRARY_PATH=$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
		"$LAUNCHER" --stats -- "$prog" "${args[@]}" 2>"$err")
	echo "$out" | sed 's/^/  /'
	echo
	cat "$err"
	echo

	# What went into graphs, from the summary's "graphs" and totals lines.
	stats=$(cat "$err")
	awk '
		{ gsub(/[,;]/, "") }
		/kernel launches/ { sub(/.*kernel launches +/, ""); launches = $1 + 0 }
		/ copies / { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) copies += $i + 0 }
		/ graphs / { for (i = 1; i <= NF; i++) {
				if ($(i + 1) == "replays") replays = $i + 0
				if ($(i + 1) == "ops" && $(i + 2) == "replayed") replayed = $i + 0 } }
		END {
			total = launches + copies
			if (total == 0) { print "autograph demo: no statistics came back"; exit 1 }
			printf "autograph demo: %d of %d kernel launches, copies and memsets went into %d graph launches (%.0f%%)\n",
			       replayed, total, replays, 100 * replayed / total
		}' <<<"$stats"
}

if nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
	gpu_demo
else
	cpu_demo
fi
