import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer, add a learned bias, hardtanh to [-1, 1], Mish, then GroupNorm."""

    def __init__(self, in_features, out_features, bias_shape, num_groups):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.hardtanh = nn.Hardtanh()
        self.mish = nn.Mish()
        self.group_norm = nn.GroupNorm(num_groups=num_groups, num_channels=out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_features) float32.

        Returns:
            (batch_size, out_features) float32.
        """
        x = self.gemm(x) + self.bias
        x = self.hardtanh(x)
        x = self.mish(x)
        return self.group_norm(x)


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)
num_groups = 256


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape, num_groups]
