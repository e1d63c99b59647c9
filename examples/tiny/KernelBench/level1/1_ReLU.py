import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies ReLU elementwise."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, dim) float32.

        Returns:
            (batch_size, dim) float32.
        """
        return torch.relu(x)


batch_size = 16
dim = 1024


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
