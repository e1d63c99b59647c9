import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Applies ELU elementwise with a configurable alpha."""

    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, dim) float32.

        Returns:
            (batch_size, dim) float32, x where x > 0, else alpha * (exp(x) - 1).
        """
        return F.elu(x, alpha=self.alpha)


batch_size = 4096
dim = 393216
alpha = 1.0


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return [alpha]
