import torch
import torch.nn as nn


class Model(nn.Module):
    """Layer normalisation over the trailing normalized_shape dims (eps=1e-5, elementwise affine)."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, features, dim1, dim2) float32.

        Returns:
            (batch_size, features, dim1, dim2) float32, each sample normalised over all
            its (features, dim1, dim2) values, then scaled and shifted elementwise.
        """
        return self.ln(x)


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    return [torch.rand(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [(features, dim1, dim2)]
