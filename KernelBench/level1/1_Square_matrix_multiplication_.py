import torch
import torch.nn as nn


class Model(nn.Module):
    """Multiplies two square matrices: C = A @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A: (N, N) float32.
            B: (N, N) float32.

        Returns:
            (N, N) float32, A @ B.
        """
        return torch.matmul(A, B)


N = 4096


def get_inputs():
    A = torch.rand(N, N)
    B = torch.rand(N, N)
    return [A, B]


def get_init_inputs():
    return []
