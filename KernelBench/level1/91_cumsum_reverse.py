import torch
import torch.nn as nn


class Model(nn.Module):
    """Reverse (suffix) cumulative sum along one dimension: each output element is the sum
    of itself and every later element along `dim`."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, length) float32.

        Returns:
            (batch_size, length) float32; out[..., i, ...] = sum of x[..., i:, ...] along `dim`.
        """
        flipped = torch.flip(x, dims=(self.dim,))
        return torch.flip(torch.cumsum(flipped, dim=self.dim), dims=(self.dim,))


batch_size = 32768
length = 32768
dim = 1


def get_inputs():
    return [torch.rand(batch_size, length)]


def get_init_inputs():
    return [dim]
