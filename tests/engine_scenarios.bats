#!/usr/bin/env bats
# The engine, one mechanism per test, on tests/progs/eng_loop.c: every run compares the
# program's output (buffer hashes and counts) without and with the library — the main
# assertion — then checks in the stand-in's trace and the statistics that the mechanism
# under test really happened (graphs replayed, fallbacks taken, work held and flushed).

setup() {
    load test_helper/common-setup
    _common_setup
    ENG="$PROGS/eng_loop"
    [ -x "$ENG" ] || fail "$ENG is missing: run 'make test'"
}

# both [VAR=value ...] -- ARGS... : eng_loop ARGS without the library, then with it (and
# the environment given, a trace in $T/trace, statistics in $T/s.json); the standard
# output must be the same. Leaves the library run's stderr in $stderr.
both() {
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    run timeout 60 "$ENG" "$@"
    assert_success
    assert_line --regexp '^counts: launches=[0-9]+ '
    local plain="$output"
    rm -f "$T/s.json" "$T/trace"
    run --separate-stderr env "${envs[@]}" AG_FAKE_TRACE="$T/trace" AUTOGRAPH_STATS="$T/s.json" \
        LD_PRELOAD="$LIB" timeout 60 "$ENG" "$@"
    assert_success
    assert_equal "$output" "$plain"
}

st() { json_stat "$T/s.json" "$1"; }

# in_trace REGEX : lines of the trace that match.
in_trace() { grep -cE "$1" "$T/trace" || true; }

# graph_sizes : the nodes= of every graph the library instantiated, one per line.
graph_sizes() { sed -n 's/^cuGraphInstantiateWithFlags .*nodes=\([0-9]*\).*/\1/p' "$T/trace"; }

# gt NAME VALUE MIN : VALUE > MIN, with the name in the failure message.
gt() { (( $2 > $3 )) || fail "$1 = $2, expected more than $3"; }

@test "stable synced loop: replayed as graphs, every launch accounted for" {
    both -- --iters 40
    local launches eager
    launches="$(count launches)"
    eager="$(in_trace '^cuLaunchKernel ')"
    gt replays "$(st replays)" 0
    gt "cuGraphLaunch lines" "$(in_trace '^cuGraphLaunch ')" 0
    (( eager * 4 < launches )) || fail "$eager of $launches launches were eager"
    assert_equal "launches=$(st launches)" "launches=$launches"
    # Every launch went either to the driver eagerly or into a graph launch.
    assert_equal "replayed+eager=$(( $(st ops_replayed) + eager ))" "replayed+eager=$launches"
    assert_equal "cuGraphLaunch=$(in_trace '^cuGraphLaunch ')" "cuGraphLaunch=$(st replays)"
}

@test "every stream kind: legacy, created blocking, created non-blocking" {
    local s
    for s in legacy created nonblocking; do
        both -- --iters 30 --stream "$s"
        gt "replays ($s)" "$(st replays)" 0
    done
}

@test "shape change mid-sequence: held work falls back, results unchanged" {
    both -- --iters 40 --shape-change-at 15
    gt fallback_shape "$(st fallback_shape)" 0
    gt replays "$(st replays)" 0
    # The new shape ran (eagerly at least while it warmed up).
    gt "eager stencils of the new grid" "$(in_trace '^cuLaunchKernel name=ag_stencil grid=5,')" 0
}

@test "pointer change: replayed with the new pointer, or falls back with AUTOGRAPH_UPDATE=0" {
    # A new variant of the graph or an update in place: either way no run falls back.
    both -- --iters 40 --ptr-change-at 15
    gt "graphs_built+updates" "$(( $(st graphs_built) + $(st updates) ))" 1
    gt replays "$(st replays)" 35
    assert_equal "fallback_args=$(st fallback_args)" "fallback_args=0"
    both AUTOGRAPH_UPDATE=0 -- --iters 40 --ptr-change-at 15
    assert_equal "updates=$(st updates)" "updates=0"
    gt fallback_args "$(st fallback_args)" 0
}

@test "scalar arguments changing every iteration: AUTOGRAPH_UPDATE=1 updates, =0 never does" {
    both -- --iters 40 --arg-change-every
    gt updates "$(st updates)" 0
    gt replays "$(st replays)" 0
    both AUTOGRAPH_UPDATE=0 -- --iters 40 --arg-change-every
    assert_equal "updates=$(st updates)" "updates=0"
    assert_equal "no update calls=$(in_trace '^cuGraphExec(Update|KernelNodeSetParams)')" "no update calls=0"
}

@test "ping-pong synced: both halves graphed" {
    both -- --iters 40 --pingpong
    gt graphs_built "$(st graphs_built)" 1
    gt replays "$(st replays)" 10
}

@test "unsynced loop: found by its period and graphed in whole periods" {
    both -- --iters 200 --sync none
    gt replays "$(st replays)" 0
    local n
    [ -n "$(graph_sizes)" ] || fail "no graph instantiated"
    for n in $(graph_sizes); do
        (( n % 5 == 0 )) || fail "graph of $n nodes is not whole iterations of 5"
    done
}

@test "unsynced ping-pong: the period is two iterations" {
    both -- --iters 200 --sync none --pingpong
    gt replays "$(st replays)" 0
    local n
    [ -n "$(graph_sizes)" ] || fail "no graph instantiated"
    for n in $(graph_sizes); do
        (( n % 10 == 0 )) || fail "graph of $n nodes is not whole pairs of iterations"
    done
}

@test "barrier-class calls mid-iteration: no graph spans them, results unchanged" {
    both -- --iters 40 --kernels 6 --barrier-mid
    gt replays "$(st replays)" 0
    local n
    for n in $(graph_sizes); do
        (( n <= 3 )) || fail "a graph of $n nodes spans the barrier at the middle of 6"
    done
    # Each barrier came after the first half of its iteration was submitted.
    run awk '/^cuMemAlloc_v2 bytes=256/ { if (!seen) bad++ } /^cuGraphLaunch|^cuLaunchKernel name=ag_(axpy|stencil)/ { seen = 1 }
        /^cuMemFree/ { seen = 0 } END { print bad + 0 }' "$T/trace"
    assert_output 0
}

@test "the program's own stream capture: engine stands aside, its graph works" {
    both -- --iters 30 --capture
    assert_line --regexp 'graph_launches=30$'
    # The program's graph is the first one instantiated (e1), from 5 captured kernels.
    assert_equal "captured=$(in_trace 'capturing=1')" "captured=5"
    assert_equal "own=$(in_trace '^cuGraphLaunch exec=e1 nodes=5 ')" "own=30"
}

@test "exit with held work: the held half iteration still runs" {
    # On a GPU, as on the asynchronous stand-in, whether unsynchronized work has run when
    # an atexit handler looks is not specified, so the count it prints is not either.
    [ "${AG_FAKE_ASYNC:-0}" != 1 ] || skip "asynchronous stand-in: unsynchronized work at exit may not have run yet"
    both AUTOGRAPH_LOG=debug -- --iters 20 --exit-held
    assert_line 'exit: hostfns=21 mapped=21'
    # It really was held, and submitted at exit.
    run grep -cE 'held ops submitted eagerly' <<<"$stderr"
    assert_success
}

@test "held work is submitted before a stream sync, a query loop, an event sync, a context sync" {
    # The host looks at host-mapped memory and a host function's count right after the
    # wait, with no other CUDA call in between: the held half iteration must have run.
    local m s
    for m in sync query event ctx; do
        for s in created nonblocking legacy; do
            both AUTOGRAPH_LOG=debug -- --iters 20 --held-then "$m" --stream "$s"
            assert_line "observed: hostfns=21 mapped=21"
            grep -q 'held ops submitted eagerly' <<<"$stderr" || fail "$m/$s: nothing was held"
        done
    done
}

@test "host spinning on mapped memory: the AUTOGRAPH_FLUSH_US timer submits held work" {
    # Without the timeout flush this hangs: timeout (in both) turns that into a failure.
    both -- --iters 80 --sync none --spin
    gt fallback_timeout "$(st fallback_timeout)" 0
    gt sequences_seen "$(st sequences_seen)" 0
}

@test "8 threads, each on its own stream: results unchanged, graphs per stream" {
    both -- --threads 8 --iters 40
    gt graphs_built "$(st graphs_built)" 7
    gt replays "$(st replays)" 100
    both -- --threads 8 --iters 150 --sync none --stream nonblocking
    gt replays "$(st replays)" 0
}

@test "AUTOGRAPH_WARMUP: WARMUP identical runs and one more eager run before the first replay" {
    local w eager
    for w in 1 2 5; do
        both AUTOGRAPH_WARMUP=$w -- --iters 20
        eager="$(awk '/^cuGraphLaunch/ { exit } /^cuLaunchKernel name=ag_axpy/ { n++ } END { print n + 0 }' "$T/trace")"
        assert_equal "warmup $w: eager iterations before replay=$eager" \
            "warmup $w: eager iterations before replay=$((w + 1))"
    done
}

@test "AUTOGRAPH_MIN_OPS: shorter sequences are not graphed" {
    both AUTOGRAPH_MIN_OPS=5 -- --iters 20 --kernels 5
    gt replays "$(st replays)" 0
    both AUTOGRAPH_MIN_OPS=6 -- --iters 20 --kernels 5
    assert_equal "sequences_seen=$(st sequences_seen)" "sequences_seen=0"
    assert_equal "cuGraphLaunch=$(in_trace '^cuGraphLaunch')" "cuGraphLaunch=0"
}

@test "AUTOGRAPH_MAX_OPS: long sequences are cut into graphs of at most MAX_OPS nodes" {
    both AUTOGRAPH_MAX_OPS=3 -- --iters 30 --kernels 10
    gt replays "$(st replays)" 0
    gt "graphs" "$(graph_sizes | wc -l)" 1
    local n
    for n in $(graph_sizes); do
        (( n <= 3 )) || fail "graph of $n nodes with AUTOGRAPH_MAX_OPS=3"
    done
    both AUTOGRAPH_MAX_OPS=7 -- --iters 300 --kernels 5 --sync none
    for n in $(graph_sizes); do
        (( n <= 7 )) || fail "graph of $n nodes with AUTOGRAPH_MAX_OPS=7"
    done
}

@test "AUTOGRAPH_MAX_GRAPHS=1 with two alternating sequences: evictions, same results" {
    both AUTOGRAPH_MAX_GRAPHS=1 -- --iters 40 --pingpong
    gt evictions "$(st evictions)" 0
    gt replays "$(st replays)" 0
    both AUTOGRAPH_MAX_GRAPHS=2 -- --iters 40 --pingpong
    assert_equal "evictions=$(st evictions)" "evictions=0"
}

@test "AUTOGRAPH_EXCLUDE / AUTOGRAPH_INCLUDE: kernels left out never go into a graph" {
    both AUTOGRAPH_EXCLUDE=ag_scale -- --iters 30
    gt replays "$(st replays)" 0
    assert_equal "scale nodes=$(in_trace '^cuGraphAddKernelNode.* name=ag_scale')" "scale nodes=0"
    assert_equal "eager scales=$(in_trace '^cuLaunchKernel name=ag_scale')" "eager scales=30"
    gt fallback_excluded "$(st fallback_excluded)" 0

    both 'AUTOGRAPH_INCLUDE=ag_axpy,ag_s*' -- --iters 30
    gt replays "$(st replays)" 0
    assert_equal "other nodes=$(in_trace '^cuGraphAddKernelNode.* name=ag_(add|iota)')" "other nodes=0"
    gt "stencil nodes" "$(in_trace '^cuGraphAddKernelNode.* name=ag_stencil')" 0
}

@test "AUTOGRAPH_LOG=debug: decision lines name the stream and the sequence" {
    both AUTOGRAPH_LOG=debug -- --iters 30 --shape-change-at 10
    run grep -cE '^autograph: stream 0x[0-9a-f]+: sequence [0-9]+ .*graph built' <<<"$stderr"
    assert_success
    run grep -cE '^autograph: stream 0x[0-9a-f]+: sequence [0-9]+: .*submitted eagerly \(an operation.s shape changed\)' <<<"$stderr"
    assert_success
    run grep -vcE '^autograph: ' <<<"$stderr"
    assert_output 0
}

@test "AUTOGRAPH_FLUSH_US counts time without a new operation, not the length of a hold" {
    # 10 launches an iteration, 30 ms of host work after each: an iteration lasts 300 ms,
    # longer than FLUSH_US (200 ms), but no gap between two operations comes near it. The
    # margin is wide (a gap would have to stretch from 30 to 200 ms on a loaded machine)
    # because with 1 ms against 5 ms a busy CI machine did stretch one.
    both AUTOGRAPH_FLUSH_US=200000 -- --iters 6 --kernels 10 --gap-us 30000
    assert_equal "fallback_timeout=$(st fallback_timeout)" "fallback_timeout=0"
    gt replays "$(st replays)" 0
}

@test "launch attributes compare by the member their id selects, not by unset union bytes" {
    both -- --iters 30 --ex-attr
    gt replays "$(st replays)" 20
    # Every graph node of the attributed kernel kept its attribute.
    gt "priority attributes set on graph nodes" "$(in_trace '^cuGraphKernelNodeSetAttribute ')" 0
}

# replayed_pct : the share of the library run's stream operations replayed from graphs,
# in whole percent, from its statistics.
replayed_pct() {
    python3 - "$T/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ops = d["launches"] + d["event_records"] + d["memsets"] + d["host_functions"] + sum(d["copies"].values())
print(100 * d["ops_replayed"] // ops)
PY
}

# The timer is out of reach in the next three: a preempted CI machine must not end a hold.
@test "copies through rotating temporaries (a caching allocator's) are replayed with their nodes updated" {
    # Each iteration copies c to d through one of 3 scratch buffers in turn: the copies'
    # addresses change from iteration to iteration as kernel arguments do. Before copies'
    # addresses were arguments, they were shape: 128 of 429 operations replayed.
    both AUTOGRAPH_FLUSH_US=10000000 -- --iters 60 --copy-rotate 3
    local pct
    pct="$(replayed_pct)"
    (( pct >= 85 )) || fail "replayed $pct% of the stream operations, expected at least 85%"
    gt "memcpy node updates" "$(in_trace '^cuGraphExecMemcpyNodeSetParams ')" 0
}

@test "a copy whose new source is no allocation gets the driver's own error at the call" {
    # Iteration 30 copies from address 64 where the held sequence expects a scratch buffer:
    # the copy must not be held (it would answer CUDA_SUCCESS); the driver's error comes
    # back from the call itself, and the program's output (which prints it) is the same.
    both AUTOGRAPH_FLUSH_US=10000000 -- --iters 60 --copy-rotate 3 --copy-bad-at 30
    assert_line --regexp '^copy-bad: rc=[1-9][0-9]*$'
    gt replays "$(st replays)" 20
}

@test "a step longer than its repeating pieces: the tail after the last whole piece is learned too" {
    # 4 launches of their own grids, then 300 launches cycling through 5 kernels, then a
    # sync: the step is cut into pieces of whole periods, and the last piece's tail is
    # submitted eagerly by the sync. Learned from the flushed held work it is replayed as
    # well: 82% of the operations were replayed before, 98% now.
    both AUTOGRAPH_FLUSH_US=10000000 -- --iters 100 --kernels 300 --head 4 --sync iter
    local pct
    pct="$(replayed_pct)"
    (( pct >= 95 )) || fail "replayed $pct% of the stream operations, expected at least 95%"
}

@test "a pageable upload each step is staged at the call and replayed; the program overwrites its buffer at once" {
    # Each iteration copies its input from malloc'd memory (cuMemcpyHtoDAsync) and overwrites
    # the buffer as soon as the call returns, as the driver allows; a sync ends the step.
    # Staged into the library's page-locked arena, the copy is a graph node like any other:
    # 81% of the operations were replayed when pageable copies ended segments, 93% now.
    local mode pct
    for mode in 0 1; do
        both AG_FAKE_ASYNC=$mode AUTOGRAPH_FLUSH_US=10000000 -- --iters 60 --upload
        assert_equal "copies_staged=$(st copies_staged)" "copies_staged=60"
        pct="$(replayed_pct)"
        (( pct >= 90 )) || fail "AG_FAKE_ASYNC=$mode: replayed $pct% of the stream operations, expected at least 90%"
        gt "memcpy nodes" "$(in_trace '^cuGraphAddMemcpyNode')" 0
    done
}

@test "a small result read back to pageable memory each step is staged, graphed and waited for at the call" {
    # Each iteration ends with cuMemcpyDtoHAsync of 64 bytes into a stack buffer, read as
    # soon as the call returns (cuBLAS's dot in host pointer mode, a CG solver's residual).
    # Staged through the library's page-locked arena, the copy ends the step's graph and the
    # call waits for the stream before copying the slot out: on the asynchronous stand-in a
    # call that returned without waiting reads stale values, and r= differs. 77% of the
    # operations were replayed when such copies were eager, 92% now.
    local mode pct
    for mode in 0 1; do
        both AG_FAKE_ASYNC=$mode AUTOGRAPH_FLUSH_US=10000000 -- --iters 60 --readback
        assert_line --regexp '^result: .* r=[0-9a-f]{16}$'
        assert_equal "copies_staged=$(st copies_staged)" "copies_staged=60"
        pct="$(replayed_pct)"
        (( pct >= 90 )) || fail "AG_FAKE_ASYNC=$mode: replayed $pct% of the stream operations, expected at least 90%"
        gt "memcpy nodes" "$(in_trace '^cuGraphAddMemcpyNode')" 0
    done
}

@test "an upload loop that never synchronizes fills its staging arena once, then copies go as they are" {
    # 600 uploads of 1 KiB and no sync: the 256 KiB arena is never known to be free again, so
    # staging stops for the stream (decided by the calls alone, never by asking the device).
    both AG_FAKE_ASYNC=1 AUTOGRAPH_FLUSH_US=10000000 -- --iters 600 --upload --sync none
    assert_equal "copies_staged=$(st copies_staged)" "copies_staged=256"
    assert_equal "copies_stage_full=$(st copies_stage_full)" "copies_stage_full=1"
    gt replays "$(st replays)" 100
}

@test "synchronous device copies and sets of device memory are ordered legacy-stream work, not barriers" {
    # Each iteration ends with cuMemsetD32 and cuMemcpyDtoD, which do not wait for the host:
    # recorded on the legacy stream they are graphed with the rest of the step (66% of the
    # operations were replayed while they were barriers, 92% now), and when they go eagerly
    # they go through their own entry points.
    local pct
    both AUTOGRAPH_FLUSH_US=10000000 -- --iters 60 --sync-copies --stream legacy
    pct="$(replayed_pct)"
    (( pct >= 90 )) || fail "replayed $pct% of the stream operations, expected at least 90%"
    gt "memset nodes" "$(in_trace '^cuGraphAddMemsetNode')" 0
    gt "eager cuMemcpyDtoD_v2" "$(in_trace '^cuMemcpyDtoD_v2 ')" 0
    assert_equal "async forms=$(in_trace '^cuMemcpyDtoDAsync|^cuMemsetD32Async')" "async forms=0"
}

@test "an unsynchronized loop of a long period is graphed after 96 confirmed operations, not 256" {
    # 17 launches an iteration (12 fills of their own grids, then the 5 kernels), no sync: a
    # period this long is a whole step, worth graphing sooner than a short one that may
    # repeat inside a step. 306 of 691 operations were replayed with 256; 510 now.
    both AUTOGRAPH_FLUSH_US=10000000 -- --iters 40 --head 12 --sync none
    local pct
    pct="$(replayed_pct)"
    (( pct >= 70 )) || fail "replayed $pct% of the stream operations, expected at least 70%"
}

@test "a loop that synchronizes once after its warmup keeps the evidence for its period across the sync" {
    # 40 unsynced iterations of 5 kernels (200 operations, too few to confirm a period this
    # short), one stream sync, 160 more. The sync ends what a graph may hold, not what the
    # period detector has seen: the period is learned once a window of whole periods fits
    # after the sync (125 operations), not after 256 more. 500 of 1004 operations were
    # replayed when the sync restarted the count; 625 now.
    both AUTOGRAPH_FLUSH_US=10000000 -- --iters 200 --sync none --sync-at 40
    gt "ops_replayed" "$(st ops_replayed)" 600
}

@test "a synced loop of one kernel with 1000 constants: exact pieces, never the shape with updates" {
    # One shape, an exact period of 1000 launches, a sync every iteration. The period's
    # evidence runs across the syncs, but an exact period can only be seen after the last
    # one: before that rule, the run across syncs settled for the shape, and 128-launch
    # pieces were replayed with 192 updates. The segment's own pieces, 8, 32, 128, 512 and
    # 320 launches long, start the GPU early (a quarter-length first piece before).
    both AUTOGRAPH_FLUSH_US=10000000 -- --distinct --kernels 1000 --sync iter --iters 30
    assert_equal "updates=$(st updates)" "updates=0"
    gt "ops_replayed" "$(st ops_replayed)" 27000
    assert_equal "$(graph_sizes | tr '\n' ' ')" "8 32 128 512 320 "
}

@test "a stream that never repeats is not observed after AUTOGRAPH_IDLE_OPS operations (the default 16384)" {
    # Every iteration's first launch has a grid of its own: no segment and no loop repeats.
    # 3000 iterations of 8 launches: the first 16384 are observed, the rest go to the driver
    # unobserved (the first pause is four times as long), each eagerly and in order.
    both -- --variants 4096 --iters 3000 --kernels 8
    local launches
    launches="$(count launches)"
    assert_equal "launches=$launches" "launches=24004"
    assert_equal "idle_pauses=$(st idle_pauses)" "idle_pauses=1"
    assert_equal "ops_unobserved=$(st ops_unobserved)" "ops_unobserved=$((launches - 16384))"
    assert_equal "ops_replayed=$(st ops_replayed)" "ops_replayed=0"
    assert_equal "cuLaunchKernel=$(in_trace '^cuLaunchKernel ')" "cuLaunchKernel=$launches"
    # Observed throughout: no pause, the same output and driver calls.
    cp "$T/trace" "$T/trace.paused"
    both AUTOGRAPH_IDLE_OPS=0 -- --variants 4096 --iters 3000 --kernels 8
    assert_equal "idle_pauses=$(st idle_pauses)" "idle_pauses=0"
    assert_equal "ops_unobserved=$(st ops_unobserved)" "ops_unobserved=0"
    cmp -s "$T/trace" "$T/trace.paused" || fail "the driver calls differ: $(diff "$T/trace" "$T/trace.paused" | head -5)"
}

@test "a loop that begins after a stream paused is learned when it is observed again" {
    # 400 iterations that never repeat, then the same iteration 1600 times. With
    # AUTOGRAPH_IDLE_OPS=200: observed 200 operations, 800 not, 200, then 1600 not (the
    # pause doubles), after which the loop (from operation 2000) is observed, learned and
    # replayed; every later operation shows repetition, so there is no third pause.
    both AUTOGRAPH_IDLE_OPS=200 -- --variants 4096 --settle-at 400 --iters 2000
    assert_equal "idle_pauses=$(st idle_pauses)" "idle_pauses=2"
    assert_equal "ops_unobserved=$(st ops_unobserved)" "ops_unobserved=2400"
    gt replays "$(st replays)" 1000
    local first="$(st ops_replayed)"
    both AUTOGRAPH_IDLE_OPS=200 -- --variants 4096 --settle-at 400 --iters 2000
    assert_equal "the same on a second run: $(st ops_replayed)" "the same on a second run: $first"
    # Observed throughout, the loop is learned as soon as it repeats.
    both AUTOGRAPH_IDLE_OPS=0 -- --variants 4096 --settle-at 400 --iters 2000
    gt "ops_replayed observed throughout" "$(st ops_replayed)" "$first"
}

@test "a step longer than AUTOGRAPH_IDLE_OPS is learned in a window after its pause" {
    # Three synchronized segments of 40 launches (iteration i's first kernel has i % 3 extra
    # blocks): no segment comes again within 100 operations, so the stream pauses once, for
    # 400. The segments counted before the pause are still counted after it: the next window
    # sees one of them again, and the step is learned and replayed, with no second pause.
    both AUTOGRAPH_IDLE_OPS=100 -- --kernels 40 --variants 3 --iters 300
    assert_equal "idle_pauses=$(st idle_pauses)" "idle_pauses=1"
    assert_equal "ops_unobserved=$(st ops_unobserved)" "ops_unobserved=400"
    gt ops_replayed "$(st ops_replayed)" 11000
}

@test "AUTOGRAPH_REPORT counts the operations of a paused stream, and the kernels' launches" {
    run env AUTOGRAPH_REPORT="$T/r.json" LD_PRELOAD="$LIB" "$ENG" --variants 4096 --iters 3000 --kernels 8
    assert_success
    run python3 - "$T/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
u = r["in_no_sequence_by_segment"]
assert u["not_observed"] == 24004 - 16384, u
k = {x["name"]: x for x in r["kernels_left_eager"]}
assert sum(x["launches"] for x in k.values()) == 24004, k
assert sum(x["in_no_sequence"] + x["not_a_node"] for x in k.values()) == 24004, k
print("ok")
PY
    assert_output ok
    run env AUTOGRAPH_REPORT="$T/r.txt" LD_PRELOAD="$LIB" "$ENG" --variants 4096 --iters 3000 --kernels 8
    assert_success
    grep -q "7620 not observed, of any kind: their stream had shown nothing learned, replayed or repeating in AUTOGRAPH_IDLE_OPS operations" "$T/r.txt" ||
        fail "$(cat "$T/r.txt")"
}
