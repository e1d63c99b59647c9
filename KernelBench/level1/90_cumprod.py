import torch
import torch.nn as nn


class Model(nn.Module):
    """Inclusive prefix product (cumulative product) along dimension `dim`:
    out[..., i, ...] = x[..., 0, ...] * x[..., 1, ...] * ... * x[..., i, ...]."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, length) float32 with arbitrary real values (negative values and
                zeros are possible). The model is built with dim=1, so each row of x is scanned.

        Returns:
            (batch_size, length) float32, same shape as x: the running product of x along `dim`.
        """
        return torch.cumprod(x, dim=self.dim)


batch_size = 32768
length = 32768
dim = 1


def get_inputs():
    return [torch.randn(batch_size, length)]


def get_init_inputs():
    return [dim]
