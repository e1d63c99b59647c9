import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies log-softmax over a configurable dimension (default dim 1, the rows)."""

    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, dim) float32.

        Returns:
            (batch_size, dim) float32, log-softmax of each row.
        """
        return torch.log_softmax(x, dim=self.dim)


batch_size = 4096
dim = 393216


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
