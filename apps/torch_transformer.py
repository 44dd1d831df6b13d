"""torch_transformer - inference of a small transformer encoder (4 layers,
d_model 256, 4 heads, feed-forward 1024, sequence 32, batch 1, eval +
no_grad): a realistic mix of GEMMs, attention, layer norms and elementwise
kernels, about a hundred launches per forward pass. Options: see --help
(torch_common.py)."""
import torch
from torch import nn

from torch_common import run

LAYERS, D_MODEL, HEADS, FF, SEQ = 4, 256, 4, 1024, 32


class Transformer:
    stateful = False

    def __init__(self, device, dtype):
        torch.manual_seed(4)
        layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, dim_feedforward=FF, dropout=0.0,
                                           batch_first=True)
        encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.model = encoder.eval().to(device, dtype)
        g = torch.Generator().manual_seed(5)
        self.x = torch.randn(1, SEQ, D_MODEL, generator=g).to(device, dtype)

    def step(self):
        with torch.no_grad():
            return self.model(self.x)

    def state(self, out):
        return out.flatten()


if __name__ == "__main__":
    run("torch_transformer", Transformer, __doc__, default_iters=100, tol=1e-4)
