"""Shared driver for the PyTorch test scripts in apps/ (torch_*.py).

Each script defines a workload class built by make(device, dtype) with
  step()      one iteration of the workload; returns its output tensor
  state(out)  the tensor that is checksummed and compared with the reference
  stateful    True when step() changes the model (training): the float64 CPU
              reference then replays every step, otherwise a single step.
and calls run(). run() parses the common options, runs warm-up and the timed
loop eagerly or as a torch.cuda.CUDAGraph replay (--graph, the hand-written
reference), optionally under torch.profiler (--count-kernels), checks against
the float64 CPU reference (--check) and prints the `result:` and `timing:`
lines that scripts/bench parses.
"""
import argparse
import os
import sys
import time

# cuBLAS needs this before its first handle is created to be deterministic.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402


def configure_determinism():
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True, warn_only=True)


def parse_args(description, default_iters):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--iters", type=int, default=default_iters, help="timed iterations")
    p.add_argument("--warmup", type=int, default=10, help="untimed iterations first (>= 1)")
    p.add_argument("--graph", action="store_true",
                   help="replay one captured iteration with torch.cuda.CUDAGraph")
    p.add_argument("--check", action="store_true",
                   help="compare with a float64 CPU reference")
    p.add_argument("--count-kernels", action="store_true",
                   help="run under torch.profiler and print profiled_kernels=<K>")
    args = p.parse_args()
    if args.iters < 1 or args.warmup < 1:
        p.error("--iters and --warmup must be >= 1")
    return args


def execute(wl, args):
    """Warm-up, then the timed loop; returns (last output, total_ms)."""
    if args.graph:
        # Warm up on a side stream, then capture, as the CUDA graphs docs say.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(args.warmup):
                wl.step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = wl.step()
        iteration = graph.replay
    else:
        for _ in range(args.warmup):
            out = wl.step()
        iteration = None
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    if iteration is None:
        for _ in range(args.iters):
            out = wl.step()
    else:
        for _ in range(args.iters):
            iteration()
    torch.cuda.synchronize()
    return out, (time.perf_counter() - t0) * 1e3


def count_kernel_events(prof):
    """Kernel executions recorded by the profiler (memcpy/memset excluded)."""
    from torch.autograd import DeviceType
    return sum(1 for e in prof.events()
               if e.device_type == DeviceType.CUDA
               and not e.name.startswith(("Memcpy", "Memset")))


def reference_state(make, args, steps):
    """The workload's state after `steps` steps in float64 on the CPU."""
    fastpath = getattr(torch.backends, "mha", None)
    if fastpath is not None and hasattr(fastpath, "set_fastpath_enabled"):
        fastpath.set_fastpath_enabled(False)  # plain math path for the reference
    ref = make("cpu", torch.float64)
    for _ in range(steps):
        out = ref.step()
    return ref.state(out).detach()


def run(app, make, description, default_iters, tol):
    args = parse_args(description, default_iters)
    if not torch.cuda.is_available():
        print(f"{app}: CUDA is not available", file=sys.stderr)
        sys.exit(2)
    configure_determinism()
    wl = make("cuda", torch.float32)

    profiled = None
    if args.count_kernels:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            out, total_ms = execute(wl, args)
        profiled = count_kernel_events(prof)
    else:
        out, total_ms = execute(wl, args)
    final = wl.state(out).detach().double().cpu()

    check = "skipped"
    if args.check:
        steps = args.warmup + args.iters if wl.stateful else 1
        ref = reference_state(make, args, steps)
        rel = ((final - ref).abs().max() / ref.abs().max().clamp_min(1e-300)).item()
        ok = rel <= tol
        print(f"check {app}: max_rel_err={rel:.3e} tol={tol:.1e} {'ok' if ok else 'FAIL'}",
              file=sys.stderr)
        check = "pass" if ok else "FAIL"

    mode = "graph" if args.graph else "eager"
    fields = "kernels_launched=n/a"
    if profiled is not None:
        fields += f" profiled_kernels={profiled}"
    fields += f" checksum={final.sum().item():.5e} abssum={final.abs().sum().item():.5e}"
    print(f"result: app={app} mode={mode} iters={args.iters} {fields} check={check}")
    print(f"timing: us_per_iter={total_ms * 1e3 / args.iters:.3f} total_ms={total_ms:.3f}")
    sys.stdout.flush()
    sys.exit(1 if check == "FAIL" else 0)
