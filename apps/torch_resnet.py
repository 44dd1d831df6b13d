"""torch_resnet - torchvision ResNet-18 inference at batch 1 (one 3x224x224
image, eval + no_grad, weights=None: random initialisation, nothing is
downloaded): about 60 cuDNN convolutions, batch norms, ReLUs, adds and a final
GEMM per forward pass, as an unmodified vision script submits them. Options:
see --help (torch_common.py)."""
from torch_common import Workload, run


def make(torch, device, dtype):
    import torchvision
    torch.manual_seed(8)
    model = torchvision.models.resnet18(weights=None).eval().to(device, dtype)
    g = torch.Generator().manual_seed(9)
    x = torch.randn(1, 3, 224, 224, generator=g).to(device, dtype)

    def step():
        with torch.no_grad():
            return model(x)
    return Workload(step)


if __name__ == "__main__":
    run("torch_resnet", make, __doc__, default_iters=200, tol=1e-4)
