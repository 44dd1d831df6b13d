"""torch_elementwise - 50 small elementwise ops per iteration on a 1024-element
tensor: each op is one tiny kernel, so eager PyTorch is bound by Python and
launch overhead. Shows what auto-graphing gains for an unmodified script whose
launch sequence repeats exactly. Options: see --help (torch_common.py)."""
from torch_common import Workload, run

ROUNDS = 10  # 5 ops per round


def make(torch, device, dtype):
    g = torch.Generator().manual_seed(1)
    x = torch.rand(1024, generator=g).to(device, dtype)
    w = (0.75 + 0.5 * torch.rand(1024, generator=g)).to(device, dtype)
    scale = (0.75 + 0.5 * torch.rand(ROUNDS, generator=g)).tolist()
    shift = (torch.rand(ROUNDS, generator=g) - 0.5).tolist()

    def step():
        y = x
        for a, b in zip(scale, shift):
            y = y * a
            y = y + b
            y = torch.sin(y)
            y = y * w
            y = torch.tanh(y)
        return y
    return Workload(step)


if __name__ == "__main__":
    run("torch_elementwise", make, __doc__, default_iters=800, tol=1e-5)
