"""torch_mlp - small MLP inference (8 Linear layers of 256 with ReLU, batch 8,
eval + no_grad): each layer is a cuBLAS GEMM launched from inside the library
plus an activation kernel, so the repeated sequence includes vendor-library
launches. Options: see --help (torch_common.py)."""
import torch
from torch import nn

from torch_common import run

LAYERS, WIDTH, BATCH = 8, 256, 8


class Mlp:
    stateful = False

    def __init__(self, device, dtype):
        torch.manual_seed(2)
        layers = []
        for _ in range(LAYERS):
            layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
        self.model = nn.Sequential(*layers).eval().to(device, dtype)
        g = torch.Generator().manual_seed(3)
        self.x = torch.randn(BATCH, WIDTH, generator=g).to(device, dtype)

    def step(self):
        with torch.no_grad():
            return self.model(self.x)

    def state(self, out):
        return out.flatten()


if __name__ == "__main__":
    run("torch_mlp", Mlp, __doc__, default_iters=300, tol=1e-4)
