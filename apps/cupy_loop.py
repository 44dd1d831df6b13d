"""cupy_loop - an unmodified-style CuPy loop: each step applies 50 rounds of
(sin, multiply by an array, multiply by a scalar, add an array) to 4096
float32 values and then sums them, 201 kernels a step, with no
synchronization inside the loop (the step sums stay on the GPU until the end).
Every operation allocates its result from CuPy's memory pool, which hands the
same few blocks around, as real CuPy code does. --check replays every step in
float64 with NumPy in the same process. The result line has a hash of the step
sums and of the final values (bit-exact) and their rounded sums.
"""
import hashlib
import sys

import py_common

N, ROUNDS, SCALE = 4096, 50, 0.9


def data(np):
    rng = np.random.default_rng(12)
    x = rng.uniform(-1.0, 1.0, N).astype(np.float32)
    w = rng.uniform(0.5, 1.0, N).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, N).astype(np.float32)
    return x, w, b


def step(xp, x, w, b):
    """One step; xp is cupy or numpy. |d/dx| <= 0.9, so errors do not grow."""
    for _ in range(ROUNDS):
        y = xp.sin(x)
        y = y * w
        y = y * SCALE
        x = y + b
    return x, x.sum()


def main():
    p = py_common.parser(__doc__, default_iters=220)
    args = py_common.parse(p)
    import cupy as cp
    import numpy as np
    if cp.cuda.runtime.getDeviceCount() < 1:
        print("cupy_loop: no CUDA device", file=sys.stderr)
        sys.exit(2)

    x0, w0, b0 = data(np)
    x, w, b = cp.asarray(x0), cp.asarray(w0), cp.asarray(b0)
    sums = []
    for _ in range(args.warmup):
        x, s = step(cp, x, w, b)
        sums.append(s)
    cp.cuda.Device().synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(args.iters):
        x, s = step(cp, x, w, b)
        sums.append(s)
    end.record()
    end.synchronize()
    total_ms = cp.cuda.get_elapsed_time(start, end)
    got_sums, got_x = cp.stack(sums).get(), x.get()

    check = "skipped"
    if args.check:
        rx, rw, rb = (v.astype(np.float64) for v in (x0, w0, b0))
        ref_sums = []
        for _ in range(args.warmup + args.iters):
            rx, rs = step(np, rx, rw, rb)
            ref_sums.append(rs)
        got = np.concatenate([got_sums, got_x]).astype(np.float64)
        ref = np.concatenate([ref_sums, rx])
        check = py_common.check_line("cupy_loop",
                                     float(np.abs(got - ref).max() / np.abs(ref).max()), 1e-4)

    digest = hashlib.sha256(got_sums.tobytes() + got_x.tobytes()).hexdigest()[:16]
    fields = (f"n={N} rounds={ROUNDS} sha256={digest} "
              f"sum_of_sums={float(got_sums.astype(np.float64).sum()):.6e} "
              f"checksum={float(got_x.astype(np.float64).sum()):.6e}")
    py_common.report("cupy_loop", "eager", args.iters, fields, check, total_ms)


if __name__ == "__main__":
    main()
