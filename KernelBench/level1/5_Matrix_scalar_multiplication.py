import torch
import torch.nn as nn


class Model(nn.Module):
    """Multiplies every element of a matrix by a Python float scalar: C = A * s."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        """
        Args:
            A: (M, N) float32.
            s: Python float (not a tensor), equal to scalar.

        Returns:
            (M, N) float32, A * s.
        """
        return A * s


M = 65536
N = 16384
scalar = 3.14


def get_inputs():
    A = torch.rand(M, N)
    return [A, scalar]


def get_init_inputs():
    return []
