import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer, sigmoid, then sum over the hidden features (kept as a size-1 axis)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.linear = nn.Linear(input_size, hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, input_size) float32.

        Returns:
            (batch_size, 1) float32.
        """
        x = torch.sigmoid(self.linear(x))
        return torch.sum(x, dim=1, keepdim=True)


batch_size = 128
input_size = 32768
hidden_size = 32768


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
