# Shared setup for tests/*.bats, loaded by every file's setup(): bats-support and
# bats-assert, the paths of what `make test` built, a clean environment (no AUTOGRAPH_*,
# LD_PRELOAD or trace left over from the caller), and helpers to run a test program on
# the fakecuda stand-in with or without the library and to read its statistics.
# Every test gets its own empty directory, $T (bats' BATS_TEST_TMPDIR).

_common_setup() {
    bats_require_minimum_version 1.5.0 # run --separate-stderr
    export BATS_LIB_PATH="${BATS_LIB_PATH:-/usr/lib/bats}"
    bats_load_library bats-support
    bats_load_library bats-assert

    ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
    BUILD="${AG_BUILD:-$ROOT/build}"
    LIB="$BUILD/libautograph.so"
    PROGS="$BUILD/progs"
    OPTIONS_DEF="$ROOT/src/options.def"
    # The cuda.h the build used (make test BUILD=… CUDA_INCLUDE=… tests another CUDA version).
    CUDA_H="${AG_CUDA_INCLUDE:-${CUDA_HOME:-/usr/local/cuda}/include}/cuda.h"
    FAKECUDA_LIB="${AG_FAKECUDA_LIB:-$BUILD/fakecuda/libcuda.so.1}"
    export AG_KERNELS_PTX="${AG_KERNELS_PTX:-$BUILD/kernels.ptx}"
    export LD_LIBRARY_PATH="$(dirname "$FAKECUDA_LIB")"
    local f
    for f in "$LIB" "$FAKECUDA_LIB" "$AG_KERNELS_PTX" "$PROGS/drv_procaddr" "$PROGS/drv_dlsym" \
        "$PROGS/drv_link"; do
        [ -e "$f" ] || fail "$f is missing: run 'make test' (or 'make test-bats')"
    done
    for f in $(compgen -e); do
        case "$f" in AUTOGRAPH*) unset "$f" ;; esac
    done
    unset LD_PRELOAD AG_FAKE_TRACE
    T="$BATS_TEST_TMPDIR"
}

# The three door binaries, by the door name the statistics use.
prog_for_door() {
    case "$1" in
    cuGetProcAddress) echo "$PROGS/drv_procaddr" ;;
    dlsym) echo "$PROGS/drv_dlsym" ;;
    link) echo "$PROGS/drv_link" ;;
    *) echo "unknown door $1" >&2; return 1 ;;
    esac
}
DOORS=(cuGetProcAddress dlsym link)

# Runs a command with the library preloaded (extra environment goes before it: env VAR=x).
with_lib() {
    LD_PRELOAD="$LIB" "$@"
}

# json_stat FILE KEY.KEY... : one value of the JSON statistics; "absent" if a key is missing.
json_stat() {
    python3 - "$1" "$2" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    if not isinstance(v, dict) or k not in v:
        print("absent")
        sys.exit(0)
    v = v[k]
print(json.dumps(v) if isinstance(v, (dict, list)) else v)
PY
}

# count NAME [TEXT] : the number after NAME= on the "counts:" line of TEXT (default $output).
count() {
    local text="${2-$output}"
    local n
    n="$(printf '%s\n' "$text" | sed -n "s/^counts:.* $1=\([0-9][0-9]*\).*/\1/p" | tail -n 1)"
    [ -n "$n" ] || { echo "no counts line with $1= in: $text" >&2; return 1; }
    echo "$n"
}

# assert_stats_match_counts FILE : the library's statistics equal what the program says
# it submitted (the counts: line in $output), and no copy was left unclassified.
assert_stats_match_counts() {
    local json="$1" name key
    [ -s "$json" ] || fail "statistics file $json is missing or empty"
    for pair in launches:launches htod:copies.htod dtoh:copies.dtoh dtod:copies.dtod \
        memsets:memsets syncs:syncs; do
        name="${pair%%:*}" key="${pair#*:}"
        assert_equal "$key=$(json_stat "$json" "$key")" "$key=$(count "$name")"
    done
    assert_equal "copies.other=$(json_stat "$json" copies.other)" "copies.other=0"
}

# trace_calls FILE [REFERENCE] : the stand-in's trace without lookups (cuGetProcAddress*)
# and, when a REFERENCE trace (the same program without the library) is given, without
# the queries the library makes for itself: calls with "Get" in their name (cuFuncGetName,
# cuStreamGetCtx ...) that the program never made. What remains is the work the program
# asked for, arguments and all, in order.
trace_calls() {
    local own=".*" # without a reference, keep every query
    if [ -n "${2-}" ]; then
        own="$(awk '{print $1}' "$2" | sort -u | grep Get | paste -sd'|' || true)"
        own="${own:-.^}"
    fi
    awk -v own="^($own)\$" '
        $1 ~ /^cuGetProcAddress/ { next }
        $1 ~ /Get/ && $1 !~ own  { next }
        { print }' "$1"
}
