import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean squared error: the mean of (predictions - targets)^2 over all elements."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        Args:
            predictions: (batch_size, dim) float32.
            targets: (batch_size, dim) float32.

        Returns:
            0-dim float32 scalar tensor.
        """
        return torch.mean((predictions - targets) ** 2)


batch_size = 32768
dim = 32768


def get_inputs():
    scale = torch.rand(())  # one shared random scale, drawn before the tensors
    predictions = torch.rand(batch_size, dim) * scale
    targets = torch.rand(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return []
