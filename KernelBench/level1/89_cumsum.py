import torch
import torch.nn as nn


class Model(nn.Module):
    """Inclusive prefix sum (cumulative sum) along one dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, length) float32.

        Returns:
            (batch_size, length) float32; out[..., i, ...] = sum of x[..., :i + 1, ...] along `dim`.
        """
        return torch.cumsum(x, dim=self.dim)


batch_size = 32768
length = 32768
dim = 1


def get_inputs():
    return [torch.rand(batch_size, length)]


def get_init_inputs():
    return [dim]
