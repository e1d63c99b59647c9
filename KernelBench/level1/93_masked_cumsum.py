import torch
import torch.nn as nn


class Model(nn.Module):
    """Cumulative sum along `dim` counting only the elements where a boolean mask is True
    (masked-out elements contribute zero)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, length) float32.
            mask: (batch_size, length) bool.

        Returns:
            (batch_size, length) float32, the cumulative sum of x * mask along `dim`.
        """
        return torch.cumsum(x * mask, dim=self.dim)


batch_size = 32768
length = 32768
dim = 1


def get_inputs():
    x = torch.rand(batch_size, length)
    mask = torch.randint(0, 2, (batch_size, length)).bool()
    return [x, mask]


def get_init_inputs():
    return [dim]
