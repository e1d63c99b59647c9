import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies softmax over dim 1 (each row of length dim)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, dim) float32.

        Returns:
            (batch_size, dim) float32, softmax of each row.
        """
        return torch.softmax(x, dim=1)


batch_size = 4096
dim = 393216


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
