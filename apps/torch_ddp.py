"""torch_ddp - data-parallel training of a small MLP on every GPU of the host, one
process per GPU, gradients averaged by NCCL (PyTorch DistributedDataParallel):

    python3 -m torch.distributed.run --nproc-per-node 2 apps/torch_ddp.py --steps 100

Seeds are fixed (the model from seed 0 on every rank, each rank's data from its own
seed) and the algorithms deterministic, so two runs on the same machine give the same
losses and final weights bit for bit. Rank 0 prints

    result: app=torch_ddp world=W steps=S final_loss=L hash=H check=C
    timing: us_per_step=T total_ms=M

H hashes every step's loss (averaged over ranks) and the final weights. --check FILE
compares with a plain run: the first run that finds no FILE writes its losses and
weights there (check=saved); a later run, e.g. under the library, compares with them
bit for bit (check=pass, or FAIL with the first differing step on stderr).
"""
import argparse
import hashlib
import os
import sys
import time

# cuBLAS needs this before its first handle is created to be deterministic.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

# torch is imported after the options are read, so --help works without it.
torch = dist = nn = DistributedDataParallel = None

LAYERS, WIDTH, BATCH = 4, 256, 32


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=100, help="training steps (timed after --warmup)")
    p.add_argument("--warmup", type=int, default=10, help="of which untimed at the start")
    p.add_argument("--check", metavar="FILE", help="write (first run) or compare (later runs) losses and weights")
    args = p.parse_args()
    if args.steps < 1 or not 0 <= args.warmup < args.steps:
        p.error("need --steps >= 1 and 0 <= --warmup < --steps")
    return args


def model():
    torch.manual_seed(0)
    layers = []
    for _ in range(LAYERS - 1):
        layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
    layers.append(nn.Linear(WIDTH, 1))
    return nn.Sequential(*layers)


def compare(path, losses, weights):
    """check= value against the reference in path (written when absent)."""
    if not os.path.exists(path):
        torch.save({"losses": losses, "weights": weights}, path)
        return "saved"
    ref = torch.load(path)
    if ref["losses"].shape != losses.shape or ref["weights"].shape != weights.shape:
        print("torch_ddp: check: the reference has other shapes (other --steps?)", file=sys.stderr)
        return "FAIL"
    differ = (ref["losses"] != losses).nonzero()
    if len(differ):
        s = int(differ[0])
        print(f"torch_ddp: check: loss of step {s} differs: {losses[s].item()!r} vs {ref['losses'][s].item()!r}",
              file=sys.stderr)
        return "FAIL"
    if not torch.equal(ref["weights"], weights):
        n = int((ref["weights"] != weights).sum())
        print(f"torch_ddp: check: {n} final weights differ", file=sys.stderr)
        return "FAIL"
    return "pass"


def main():
    global torch, dist, nn, DistributedDataParallel
    args = parse_args()
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel
    rank, world, local = (int(os.environ[k]) for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"))
    if not torch.cuda.is_available():
        print("torch_ddp: CUDA is not available", file=sys.stderr)
        sys.exit(2)
    device = torch.device("cuda", local)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.use_deterministic_algorithms(True)

    net = DistributedDataParallel(model().to(device), device_ids=[local])
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(1000 + rank)
    x = torch.randn(args.steps, BATCH, WIDTH, generator=g).to(device)
    y = x[..., :8].sum(-1, keepdim=True).sin()

    losses = []
    t0 = None
    for s in range(args.steps):
        if s == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        loss = nn.functional.mse_loss(net(x[s]), y[s])
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    torch.cuda.synchronize()
    total_ms = (time.perf_counter() - t0) * 1e3
    timed = args.steps - args.warmup

    # Each rank's losses, averaged over ranks; the weights are the same on every rank.
    all_losses = torch.stack(losses)
    dist.all_reduce(all_losses)
    all_losses = (all_losses / world).cpu()
    weights = torch.cat([p.detach().flatten() for p in net.module.parameters()]).cpu()
    if rank == 0:
        h = hashlib.sha256(all_losses.numpy().tobytes() + weights.numpy().tobytes()).hexdigest()[:16]
        check = compare(args.check, all_losses, weights) if args.check else "skipped"
        print(f"result: app=torch_ddp world={world} steps={args.steps} final_loss={all_losses[-1].item():.6e} "
              f"hash={h} check={check}")
        print(f"timing: us_per_step={total_ms * 1e3 / timed:.3f} total_ms={total_ms:.3f}", flush=True)
    dist.destroy_process_group()
    if rank == 0 and check == "FAIL":
        sys.exit(1)


if __name__ == "__main__":
    main()
