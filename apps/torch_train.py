"""torch_train - a small training step repeated on fixed random data: MLP
forward (8 Linear layers of 256 with ReLU, batch 8), MSE loss, backward, SGD
step. Forward, backward and optimizer kernels form one long repeating
sequence that updates the parameters in place; the check replays every step
in float64 on the CPU. Options: see --help (torch_common.py)."""
import torch
from torch import nn

from torch_common import run

LAYERS, WIDTH, BATCH, LR = 8, 256, 8, 0.05


class Train:
    stateful = True

    def __init__(self, device, dtype):
        torch.manual_seed(6)
        layers = []
        for _ in range(LAYERS):
            layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
        self.model = nn.Sequential(*layers[:-1]).train().to(device, dtype)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=LR)
        g = torch.Generator().manual_seed(7)
        self.x = torch.randn(BATCH, WIDTH, generator=g).to(device, dtype)
        self.target = torch.randn(BATCH, WIDTH, generator=g).to(device, dtype)

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(self.model(self.x), self.target)
        loss.backward()
        self.opt.step()
        return loss

    def state(self, loss):
        params = [p.detach().flatten() for p in self.model.parameters()]
        return torch.cat(params + [loss.detach().reshape(1)])


if __name__ == "__main__":
    run("torch_train", Train, __doc__, default_iters=100, tol=1e-4)
