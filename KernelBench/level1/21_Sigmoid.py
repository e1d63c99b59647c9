import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies the logistic sigmoid elementwise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, dim) float32.

        Returns:
            (batch_size, dim) float32, 1 / (1 + exp(-x)).
        """
        return torch.sigmoid(x)


batch_size = 4096
dim = 393216


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
