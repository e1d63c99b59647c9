import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix product with the second operand transposed: C = A @ B^T."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A: (M, K) float32.
            B: (N, K) float32.

        Returns:
            (M, N) float32, A @ B.T.
        """
        return torch.matmul(A, B.T)


M = 2048
K = 8192
N = 4096


def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(N, K)
    return [A, B]


def get_init_inputs():
    return []
