"""torch_common - the shared driver of the PyTorch workloads in apps/ whose
iteration is one call (torch_*.py). Each script defines make(torch, device,
dtype) returning a Workload and calls run(); torch is imported only after the
options are parsed, so `--help` works without it.

run() makes the run deterministic (fixed seeds, no TF32, deterministic cuDNN
and cuBLAS, cudnn.benchmark off), then runs warm-up and the timed loop in one
of three modes:
  eager    step() as written: what libautograph is meant to speed up;
  graph    one step() captured with torch.cuda.graph and replayed (the
           hand-written graph, warmed up on a side stream as the docs say);
  compile  torch.compile(step, mode="reduce-overhead"): PyTorch's own graphs.
The timed loop is measured with CUDA events after warm-up. --check compares the
state with a float64 CPU run of the same workload in the same process
(replaying every step when the workload changes itself), --count-kernels runs
under torch.profiler and adds profiled_kernels=<K> (kernel executions CUPTI
saw). The output lines are py_common's.
"""
import os
import sys

import py_common

MODES = ("eager", "graph", "compile")


class Workload:
    """What make() returns.
    step()      one iteration; returns its output tensor
    state(out)  the tensor that is checksummed and compared with the reference
    stateful    step() changes the model (training): the float64 reference
                then replays every step, otherwise a single step."""

    def __init__(self, step, state=lambda out: out.flatten(), stateful=False):
        self.step, self.state, self.stateful = step, state, stateful


def import_torch(app, deterministic_algorithms=True):
    """Imports torch and makes runs deterministic; exits 2 without a GPU.
    deterministic_algorithms=False leaves torch.use_deterministic_algorithms
    off, for a workload that is deterministic without it (its replacements
    and the filling of new tensors add work a real program does not have)."""
    # cuBLAS needs this before its first handle is created to be deterministic.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch
    if not torch.cuda.is_available():
        print(f"{app}: CUDA is not available", file=sys.stderr)
        sys.exit(2)
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    if deterministic_algorithms:
        torch.use_deterministic_algorithms(True, warn_only=True)
    return torch


def timed(torch, iters, iteration):
    """Runs iteration() iters times between two CUDA events on the current
    stream, after the warm-up's work is done; returns (last output, ms)."""
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        out = iteration()
    end.record()
    end.synchronize()
    return out, start.elapsed_time(end)


def iteration_for(torch, wl, mode, warmup):
    """Warms up and returns the callable the timed loop repeats."""
    if mode == "graph":
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup):
                wl.step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = wl.step()

        def replay():
            graph.replay()
            return out
        return replay
    if mode == "compile":
        compiled = torch.compile(wl.step, mode="reduce-overhead")

        def step():
            # Tells the CUDA graph trees that a new iteration starts, so that
            # the previous output may be overwritten.
            torch.compiler.cudagraph_mark_step_begin()
            return compiled()
    else:
        step = wl.step
    for _ in range(warmup):
        step()
    return step


def count_kernel_events(prof):
    """Kernel executions recorded by the profiler (memcpy/memset excluded)."""
    from torch.autograd import DeviceType
    return sum(1 for e in prof.events()
               if e.device_type == DeviceType.CUDA
               and not e.name.startswith(("Memcpy", "Memset")))


def reference_state(torch, make, steps):
    """The workload's state after `steps` steps in float64 on the CPU."""
    fastpath = getattr(torch.backends, "mha", None)
    if fastpath is not None and hasattr(fastpath, "set_fastpath_enabled"):
        fastpath.set_fastpath_enabled(False)  # plain math path for the reference
    ref = make(torch, "cpu", torch.float64)
    for _ in range(steps):
        out = ref.step()
    return ref.state(out).detach()


def run(app, make, description, default_iters, tol):
    p = py_common.parser(description, default_iters, MODES)
    p.add_argument("--graph", action="store_const", dest="mode", const="graph",
                   help="the same as --mode graph")
    p.add_argument("--count-kernels", action="store_true",
                   help="run under torch.profiler and print profiled_kernels=<K>")
    args = py_common.parse(p)
    torch = import_torch(app)
    wl = make(torch, "cuda", torch.float32)

    def execute():
        return timed(torch, args.iters, iteration_for(torch, wl, args.mode, args.warmup))

    profiled = None
    if args.count_kernels:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            out, total_ms = execute()
        profiled = count_kernel_events(prof)
    else:
        out, total_ms = execute()
    final = wl.state(out).detach().double().cpu()

    check = "skipped"
    if args.check:
        # A capture runs nothing, so every mode has run warmup + iters steps.
        steps = args.warmup + args.iters if wl.stateful else 1
        ref = reference_state(torch, make, steps)
        rel = ((final - ref).abs().max() / ref.abs().max().clamp_min(1e-300)).item()
        check = py_common.check_line(app, rel, tol)

    fields = "kernels_launched=n/a"
    if profiled is not None:
        fields += f" profiled_kernels={profiled}"
    fields += f" checksum={final.sum().item():.5e} abssum={final.abs().sum().item():.5e}"
    py_common.report(app, args.mode, args.iters, fields, check, total_ms)
