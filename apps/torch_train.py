"""torch_train - a small training step repeated on fixed random data: MLP
forward (8 Linear layers of 256 with ReLU, batch 8), MSE loss, backward, SGD
step. Forward, backward and optimizer kernels form one long repeating
sequence that updates the parameters in place; the check replays every step
in float64 on the CPU. Options: see --help (torch_common.py)."""
from torch_common import Workload, run

LAYERS, WIDTH, BATCH, LR = 8, 256, 8, 0.05


def make(torch, device, dtype):
    from torch import nn
    torch.manual_seed(6)
    layers = []
    for _ in range(LAYERS):
        layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
    model = nn.Sequential(*layers[:-1]).train().to(device, dtype)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    g = torch.Generator().manual_seed(7)
    x = torch.randn(BATCH, WIDTH, generator=g).to(device, dtype)
    target = torch.randn(BATCH, WIDTH, generator=g).to(device, dtype)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        return loss

    def state(loss):
        params = [p.detach().flatten() for p in model.parameters()]
        return torch.cat(params + [loss.detach().reshape(1)])
    return Workload(step, state, stateful=True)


if __name__ == "__main__":
    run("torch_train", make, __doc__, default_iters=100, tol=1e-4)
