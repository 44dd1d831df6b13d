"""torch_elementwise - 50 small elementwise ops per iteration on a 1024-element
tensor: each op is one tiny kernel, so eager PyTorch is bound by Python and
launch overhead. Shows what auto-graphing gains for an unmodified script whose
launch sequence repeats exactly. Options: see --help (torch_common.py)."""
import torch

from torch_common import run

ROUNDS = 10  # 5 ops per round


class Elementwise:
    stateful = False

    def __init__(self, device, dtype):
        g = torch.Generator().manual_seed(1)
        self.x = torch.rand(1024, generator=g).to(device, dtype)
        self.w = (0.75 + 0.5 * torch.rand(1024, generator=g)).to(device, dtype)
        self.scale = (0.75 + 0.5 * torch.rand(ROUNDS, generator=g)).tolist()
        self.shift = (torch.rand(ROUNDS, generator=g) - 0.5).tolist()

    def step(self):
        y = self.x
        for a, b in zip(self.scale, self.shift):
            y = y * a
            y = y + b
            y = torch.sin(y)
            y = y * self.w
            y = torch.tanh(y)
        return y

    def state(self, out):
        return out


if __name__ == "__main__":
    run("torch_elementwise", Elementwise, __doc__, default_iters=800, tol=1e-5)
