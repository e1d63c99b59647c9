import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched matrix product: C[b] = A[b] @ B[b] for every batch entry b."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A: (batch_size, m, k) float32.
            B: (batch_size, k, n) float32.

        Returns:
            (batch_size, m, n) float32, the per-batch products A[b] @ B[b].
        """
        return torch.bmm(A, B)


batch_size = 128
m = 512
k = 1024
n = 2048


def get_inputs():
    A = torch.rand(batch_size, m, k)
    B = torch.rand(batch_size, k, n)
    return [A, B]


def get_init_inputs():
    return []
