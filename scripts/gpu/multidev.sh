#!/usr/bin/env bash
# GPU-side check of several devices driven from one process (issue 11): apps/multi_device
# on however many GPUs the machine has (one is enough to run it), without and with the
# library, with --check: the result lines must be identical, and every device's stream
# must have had a graph built (AUTOGRAPH_LOG=debug lines matched to the streams the
# program prints), with graph launches in the statistics. Run from the repository root
# after `make` and `make apps`; every program is bounded by timeout (about 60 s in all on
# one GPU). Then PyTorch DDP over NCCL (apps/torch_ddp.py) on up to two GPUs.
# Prints, last, table rows: | check | ok/FAIL/info | detail |
set -u
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0
LIB=$PWD/build/libautograph.so
LOGS=$(mktemp -d)
rows=()

row() { rows+=("$(printf '| %-40s | %-4s | %s |' "$1" "$2" "$3")"); }
field() { grep -o "$2=[^ ]*" "$1" | head -1 | cut -d= -f2; }

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
row "multidev: GPUs" info "$ngpu"

# check_run NAME BINARY ARGS...
check_run() {
    local name=$1 bin=$2
    shift 2
    local base=$LOGS/$name
    if [ ! -x "$bin" ]; then
        row "multidev: $name" FAIL "$bin missing: run make apps"
        return
    fi
    timeout 60 "$bin" "$@" >"$base.plain" 2>"$base.plain.err"
    local rc1=$?
    timeout 60 env LD_PRELOAD="$LIB" AUTOGRAPH_LOG=debug AUTOGRAPH_STATS="$base.json" "$bin" "$@" \
        >"$base.ag" 2>"$base.ag.err"
    local rc2=$?
    if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
        row "multidev: $name" FAIL "exit $rc1 / $rc2: $(tail -n 1 "$base.ag.err")"
        return
    fi
    if ! diff -q <(grep '^result:' "$base.plain") <(grep '^result:' "$base.ag") >/dev/null; then
        row "multidev: $name" FAIL "result lines differ"
        return
    fi
    local check devices missing="" d ptr built
    check=$(field "$base.ag" check)
    devices=$(field "$base.ag" devices)
    built=""
    while read -r d ptr; do
        if grep -q "stream $ptr: .*graph built" "$base.ag.err"; then
            built+=" $d"
        else
            missing+=" $d"
        fi
    done < <(sed -n 's/^stream: dev=\([0-9]*\) ptr=\(0x[0-9a-f]*\)$/\1 \2/p' "$base.ag.err")
    local replays
    replays=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['replays'])" "$base.json" 2>/dev/null || echo none)
    if [ "$check" != pass ]; then
        row "multidev: $name" FAIL "check=$check"
    elif [ -n "$missing" ] || [ -z "$built" ] || [ "$replays" = none ] || [ "$replays" -eq 0 ]; then
        row "multidev: $name" FAIL "no graph on device(s)${missing:- ?}; replays $replays"
    else
        row "multidev: $name" ok "same result, check=pass on $devices device(s); graphs built on devices$built; replays $replays"
    fi
    row "multidev: $name us/iter eager, autograph" info \
        "$(grep -o 'us_per_iter=[0-9.]*' "$base.plain" | cut -d= -f2), $(grep -o 'us_per_iter=[0-9.]*' "$base.ag" | cut -d= -f2)"
}

check_run static build/apps/static/multi_device --iters 500 --n 20 --check
check_run ptds build/apps/ptds/multi_device --iters 500 --n 20 --check
if [ "$ngpu" -ge 2 ]; then
    check_run "static --peer-read" build/apps/static/multi_device --iters 500 --n 20 --peer-read --check
fi
# PyTorch DDP (NCCL) on up to two GPUs, one process each (one GPU: a world of one, which
# still goes through NCCL's init and its kernels): the run under the library must give the
# plain run's losses and final weights bit for bit.
if python3 -c 'import torch, torch.distributed' 2>/dev/null; then
    nproc=$((ngpu >= 2 ? 2 : 1))
    ddp() { # ddp [VAR=value...]: both runs compare with the reference the first one writes
        timeout 120 env "$@" python3 -m torch.distributed.run --standalone --nproc-per-node "$nproc" \
            apps/torch_ddp.py --steps 100 --check "$LOGS/ddp.ref"
    }
    ddp >"$LOGS/ddp.plain" 2>"$LOGS/ddp.plain.err"
    rc1=$?
    ddp LD_PRELOAD="$LIB" AUTOGRAPH_STATS="$LOGS/ddp-%p.json" >"$LOGS/ddp.ag" 2>"$LOGS/ddp.ag.err"
    rc2=$?
    check=$(field "$LOGS/ddp.ag" check)
    replays=$(python3 -c "import json,sys; print(sum(json.load(open(f))['replays'] for f in sys.argv[1:]))" \
        "$LOGS"/ddp-*.json 2>/dev/null || echo none)
    if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
        row "ddp: $nproc process(es), NCCL, 100 steps" FAIL "exit $rc1 / $rc2: $(tail -n 1 "$LOGS/ddp.ag.err")"
    elif [ "$check" != pass ] || ! diff -q <(grep '^result:' "$LOGS/ddp.plain" | sed 's/ check=.*//') \
        <(grep '^result:' "$LOGS/ddp.ag" | sed 's/ check=.*//') >/dev/null; then
        row "ddp: $nproc process(es), NCCL, 100 steps" FAIL "check=$check; result lines: $(grep -h -o 'hash=[0-9a-f]*' "$LOGS/ddp.plain" "$LOGS/ddp.ag" | paste -sd' ')"
    else
        row "ddp: $nproc process(es), NCCL, 100 steps" ok "losses and final weights bit-identical ($(field "$LOGS/ddp.ag" hash)); replays $replays"
    fi
    row "ddp: us/step eager, autograph" info "$(field "$LOGS/ddp.plain" us_per_step), $(field "$LOGS/ddp.ag" us_per_step)"
else
    row "ddp: PyTorch DDP" info "skipped: torch is not installed"
fi
tar -czf "${OUT:-/tmp}/multidev-logs.tgz" -C "$LOGS" . 2>/dev/null
printf '%s\n' "${rows[@]}"
