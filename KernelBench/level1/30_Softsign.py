import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies Softsign elementwise: x / (1 + |x|)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, dim) float32.

        Returns:
            (batch_size, dim) float32, x / (1 + |x|).
        """
        return x / (1 + torch.abs(x))


batch_size = 4096
dim = 393216


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
