import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer y, then y * scaling_factor + y, where the residual copy of y is
    detached."""

    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_features) float32.

        Returns:
            (batch_size, out_features) float32.
        """
        x = self.matmul(x)
        residual = x.clone().detach()
        x = x * self.scaling_factor
        return x + residual


batch_size = 16384
in_features = 4096
out_features = 4096
scaling_factor = 0.5


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]
