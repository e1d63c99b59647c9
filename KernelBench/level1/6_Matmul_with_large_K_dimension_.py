import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix product C = A @ B with a very long reduction dimension K."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A: (M, K) float32.
            B: (K, N) float32.

        Returns:
            (M, N) float32, A @ B.
        """
        return torch.matmul(A, B)


M = 256
N = 256
K = 524288


def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, N)
    return [A, B]


def get_init_inputs():
    return []
