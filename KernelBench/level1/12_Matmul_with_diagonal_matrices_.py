import torch
import torch.nn as nn


class Model(nn.Module):
    """Left-multiplies B by the diagonal matrix built from vector A: C = diag(A) @ B.

    The dense (N, N) diagonal matrix is materialised before the product.
    """

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A: (N,) float32, the diagonal entries.
            B: (N, M) float32.

        Returns:
            (N, M) float32, diag(A) @ B (row r of B scaled by A[r]).
        """
        return torch.diag(A) @ B


N = 4096
M = 4096


def get_inputs():
    A = torch.rand(N)
    B = torch.rand(N, M)
    return [A, B]


def get_init_inputs():
    return []
