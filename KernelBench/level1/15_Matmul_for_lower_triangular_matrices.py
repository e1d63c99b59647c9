import torch
import torch.nn as nn


class Model(nn.Module):
    """Multiplies two lower-triangular matrices and keeps the lower triangle: C = tril(A @ B)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A: (N, N) float32, lower-triangular.
            B: (N, N) float32, lower-triangular.

        Returns:
            (N, N) float32, tril(A @ B) (diagonal kept).
        """
        return torch.tril(torch.matmul(A, B))


N = 4096


def get_inputs():
    A = torch.tril(torch.rand(N, N))
    B = torch.tril(torch.rand(N, N))
    return [A, B]


def get_init_inputs():
    return []
