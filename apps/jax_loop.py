"""jax_loop - an unmodified-style JAX loop: a jax.jit-compiled step (a 256 x
256 matrix-vector product, tanh, 20 rounds of sin/multiply/add and a sum) run
--iters times, with no synchronization inside the loop. XLA fuses the step
into a few kernels and may submit them through its own command buffers (CUDA
graphs), so this workload is about correctness under libautograph, not speed:
--check replays every step in float64 with NumPy in the same process, and the
result line (rounded to six digits: XLA may pick its kernels per process)
must be the same with and without the library. The timing line uses the host
clock around the loop and a final block_until_ready, as JAX has no CUDA events.
"""
import sys
import time

import py_common

N, ROUNDS = 256, 20


def data(np):
    rng = np.random.default_rng(13)
    m = (rng.standard_normal((N, N)) / np.sqrt(N)).astype(np.float32)
    x = rng.uniform(-1.0, 1.0, N).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, N).astype(np.float32)
    return m, x, b


def step(xp, m, x, b):
    """One step; xp is jax.numpy or numpy."""
    x = xp.tanh(m @ x + b)
    for _ in range(ROUNDS):
        x = xp.sin(x) * 0.9 + b
    return x, x.sum()


def run(jax, args):
    import jax.numpy as jnp
    import numpy as np
    # float32 matrix products in full precision, so that the float64 check holds.
    jax.config.update("jax_default_matmul_precision", "highest")
    m0, x0, b0 = data(np)
    m, x, b = jnp.asarray(m0), jnp.asarray(x0), jnp.asarray(b0)
    jstep = jax.jit(lambda m, x, b: step(jnp, m, x, b))
    sums = []
    for _ in range(args.warmup):
        x, s = jstep(m, x, b)
        sums.append(s)
    x.block_until_ready()
    t0 = time.perf_counter()
    for _ in range(args.iters):
        x, s = jstep(m, x, b)
        sums.append(s)
    x.block_until_ready()
    total_ms = (time.perf_counter() - t0) * 1e3
    got_sums = np.asarray(jnp.stack(sums), dtype=np.float64)
    got_x = np.asarray(x, dtype=np.float64)

    check = "skipped"
    if args.check:
        rm, rx, rb = (v.astype(np.float64) for v in (m0, x0, b0))
        ref_sums = []
        for _ in range(args.warmup + args.iters):
            rx, rs = step(np, rm, rx, rb)
            ref_sums.append(rs)
        got = np.concatenate([got_sums, got_x])
        ref = np.concatenate([ref_sums, rx])
        check = py_common.check_line("jax_loop",
                                     float(np.abs(got - ref).max() / np.abs(ref).max()), 1e-4)
    fields = (f"backend={jax.default_backend()} n={N} rounds={ROUNDS} "
              f"sum_of_sums={got_sums.sum():.6e} checksum={got_x.sum():.6e} "
              f"abssum={np.abs(got_x).sum():.6e}")
    py_common.report("jax_loop", "eager", args.iters, fields, check, total_ms)


def main():
    p = py_common.parser(__doc__, default_iters=500)
    args = py_common.parse(p)
    import jax
    if jax.default_backend() != "gpu":
        print(f"jax_loop: no GPU backend (JAX runs on {jax.default_backend()})", file=sys.stderr)
        sys.exit(2)
    run(jax, args)


if __name__ == "__main__":
    main()
