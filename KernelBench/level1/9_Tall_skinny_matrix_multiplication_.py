import torch
import torch.nn as nn


class Model(nn.Module):
    """Product of a tall-skinny (M, N) matrix and a short-wide (N, M) matrix: C = A @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A: (M, N) float32, tall and skinny (M >> N).
            B: (N, M) float32, short and wide.

        Returns:
            (M, M) float32, A @ B.
        """
        return torch.matmul(A, B)


M = 32768
N = 32


def get_inputs():
    A = torch.rand(M, N)
    B = torch.rand(N, M)
    return [A, B]


def get_init_inputs():
    return []
