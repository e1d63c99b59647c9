import torch
import torch.nn as nn


class Model(nn.Module):
    """Multiplies two symmetric square matrices: C = A @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A: (N, N) float32, symmetric.
            B: (N, N) float32, symmetric.

        Returns:
            (N, N) float32, A @ B (not symmetric in general).
        """
        return torch.matmul(A, B)


N = 4096


def get_inputs():
    # Each input is (R + R^T) / 2 with R uniform in [0, 1); A's R is drawn first.
    A = torch.rand(N, N)
    A = (A + A.T) / 2
    B = torch.rand(N, N)
    B = (B + B.T) / 2
    return [A, B]


def get_init_inputs():
    return []
