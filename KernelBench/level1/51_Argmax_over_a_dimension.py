import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns the index of the largest value along one dimension (first index on ties)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, dim1, dim2) float32.

        Returns:
            int64 indices with dimension `dim` of x removed; (batch_size, dim2) for dim=1.
        """
        return torch.argmax(x, dim=self.dim)


batch_size = 128
dim1 = 4096
dim2 = 4095
dim = 1


def get_inputs():
    return [torch.rand(batch_size, dim1, dim2)]


def get_init_inputs():
    return [dim]
