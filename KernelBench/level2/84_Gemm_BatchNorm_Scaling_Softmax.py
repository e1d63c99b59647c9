import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer, BatchNorm1d (training mode: batch statistics), multiply by a learned
    scale, then softmax over features."""

    def __init__(self, in_features, out_features, bn_eps, bn_momentum, scale_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=bn_eps, momentum=bn_momentum)
        self.scale = nn.Parameter(torch.ones(scale_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_features) float32.

        Returns:
            (batch_size, out_features) float32.
        """
        x = self.bn(self.gemm(x))
        x = x * self.scale
        return torch.softmax(x, dim=1)


batch_size = 1024
in_features = 8192
out_features = 8192
bn_eps = 1e-5
bn_momentum = 0.1
scale_shape = (1,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bn_eps, bn_momentum, scale_shape]
