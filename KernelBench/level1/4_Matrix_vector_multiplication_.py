import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix-vector product of an (M, K) matrix with a (K, 1) column vector."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A: (M, K) float32.
            B: (K, 1) float32, a column vector kept 2-D.

        Returns:
            (M, 1) float32, A @ B.
        """
        return torch.matmul(A, B)


M = 2048
K = 1048576


def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, 1)
    return [A, B]


def get_init_inputs():
    return []
