import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer followed by exact GELU."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_features) float32.

        Returns:
            (batch_size, out_features) float32.
        """
        return torch.nn.functional.gelu(self.linear(x))


batch_size = 32
in_features = 64
out_features = 48


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
