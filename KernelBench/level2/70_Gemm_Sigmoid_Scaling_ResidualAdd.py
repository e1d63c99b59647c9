import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer y, then sigmoid(y) * scaling_factor + y (residual add of the
    pre-sigmoid output)."""

    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.gemm = nn.Linear(input_size, hidden_size)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, input_size) float32.

        Returns:
            (batch_size, hidden_size) float32.
        """
        y = self.gemm(x)
        x = torch.sigmoid(y) * self.scaling_factor
        return x + y


batch_size = 1024
input_size = 8192
hidden_size = 8192
scaling_factor = 2.0


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]
