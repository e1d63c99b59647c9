import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Computes (B^T A^T) and returns its transpose, a view with swapped strides, as kernels that work in
    another layout often do."""

    def forward(self, A, B):
        return (B.t() @ A.t()).t()
