"""torch_transformer - inference of a small transformer encoder (4 layers,
d_model 256, 4 heads, feed-forward 1024, sequence 32, batch 1, eval +
no_grad): a realistic mix of GEMMs, attention, layer norms and elementwise
kernels, about a hundred launches per forward pass. Options: see --help
(torch_common.py)."""
from torch_common import Workload, run

LAYERS, D_MODEL, HEADS, FF, SEQ = 4, 256, 4, 1024, 32


def make(torch, device, dtype):
    from torch import nn
    torch.manual_seed(4)
    layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, dim_feedforward=FF, dropout=0.0,
                                       batch_first=True)
    encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
    model = encoder.eval().to(device, dtype)
    g = torch.Generator().manual_seed(5)
    x = torch.randn(1, SEQ, D_MODEL, generator=g).to(device, dtype)

    def step():
        with torch.no_grad():
            return model(x)
    return Workload(step)


if __name__ == "__main__":
    run("torch_transformer", make, __doc__, default_iters=100, tol=1e-4)
