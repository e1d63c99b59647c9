import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix product A @ B."""

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A: (M, K) float32.
            B: (K, N) float32.

        Returns:
            (M, N) float32.
        """
        return A @ B


M = 64
K = 128
N = 32


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
