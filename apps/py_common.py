"""py_common - what every Python workload in apps/ shares, without importing any
GPU framework (so that `--help` works on a machine that has none): the common
options, the check line on stderr, and the two last lines of stdout that
scripts/bench and scripts/gpu/workloads.sh read:

  result: app=<name> mode=<mode> iters=<N> <deterministic fields> check=<pass|FAIL|skipped>
  timing: us_per_iter=<x> total_ms=<y> time_per_iter_us=<x>

The result line holds no times or addresses, so it must be byte-identical with
and without libautograph. time_per_iter_us repeats us_per_iter under the name
issue 9 gives it; scripts/bench reads us_per_iter.
"""
import argparse
import sys


def parser(description, default_iters, modes=("eager",)):
    """The common options; a script adds its own before calling parse()."""
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iters", type=int, default=default_iters, help="timed iterations")
    p.add_argument("--warmup", type=int, default=10, help="untimed iterations first (>= 1)")
    if len(modes) > 1:
        p.add_argument("--mode", choices=modes, default=modes[0],
                       help="eager: the program as written; graph: hand-written "
                            "torch.cuda.graph capture and replay; compile: "
                            "torch.compile(mode='reduce-overhead')")
    p.set_defaults(mode=modes[0])
    p.add_argument("--check", action="store_true",
                   help="compare with a plain reference run in the same process")
    return p


def parse(p):
    args = p.parse_args()
    if args.iters < 1 or args.warmup < 1:
        p.error("--iters and --warmup must be >= 1")
    return args


def check_line(app, rel, tol, what="max_rel_err"):
    """Prints the check's line on stderr; returns the result line's word."""
    ok = rel <= tol  # False for NaN too
    print(f"check {app}: {what}={rel:.3e} tol={tol:.1e} {'ok' if ok else 'FAIL'}",
          file=sys.stderr)
    return "pass" if ok else "FAIL"


def report(app, mode, iters, fields, check, total_ms):
    """Prints the last two lines and exits: 1 when the check failed."""
    us = total_ms * 1e3 / iters
    print(f"result: app={app} mode={mode} iters={iters} {fields} check={check}")
    print(f"timing: us_per_iter={us:.3f} total_ms={total_ms:.3f} time_per_iter_us={us:.3f}")
    sys.stdout.flush()
    sys.exit(1 if check == "FAIL" else 0)
