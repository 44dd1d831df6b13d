"""torch_mlp - small MLP inference (8 Linear layers of 256 with ReLU, batch 8,
eval + no_grad): each layer is a cuBLAS GEMM launched from inside the library
plus an activation kernel, so the repeated sequence includes vendor-library
launches. Options: see --help (torch_common.py)."""
from torch_common import Workload, run

LAYERS, WIDTH, BATCH = 8, 256, 8


def make(torch, device, dtype):
    from torch import nn
    torch.manual_seed(2)
    layers = []
    for _ in range(LAYERS):
        layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
    model = nn.Sequential(*layers).eval().to(device, dtype)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(BATCH, WIDTH, generator=g).to(device, dtype)

    def step():
        with torch.no_grad():
            return model(x)
    return Workload(step)


if __name__ == "__main__":
    run("torch_mlp", make, __doc__, default_iters=300, tol=1e-4)
