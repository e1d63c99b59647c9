import torch
import torch.nn as nn


class Model(nn.Module):
    """Multiplies two upper-triangular matrices and keeps the upper triangle: C = triu(A @ B)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A: (N, N) float32, upper-triangular.
            B: (N, N) float32, upper-triangular.

        Returns:
            (N, N) float32, triu(A @ B) (diagonal kept).
        """
        return torch.triu(torch.matmul(A, B))


N = 4096


def get_inputs():
    A = torch.triu(torch.rand(N, N))
    B = torch.triu(torch.rand(N, N))
    return [A, B]


def get_init_inputs():
    return []
