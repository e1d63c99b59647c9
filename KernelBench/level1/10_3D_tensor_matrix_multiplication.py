import torch
import torch.nn as nn


class Model(nn.Module):
    """Multiplies a 3-D tensor by a matrix along its last dimension (broadcast over dim 0)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A: (N, M, K) float32.
            B: (K, L) float32.

        Returns:
            (N, M, L) float32, A[n] @ B for every n.
        """
        return torch.matmul(A, B)


N = 16
M = 1024
K = 2048
L = 768


def get_inputs():
    A = torch.rand(N, M, K)
    B = torch.rand(K, L)
    return [A, B]


def get_init_inputs():
    return []
