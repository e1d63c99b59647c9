import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer, GroupNorm, minimum over features (kept as a size-1 axis), then add a
    learned bias of shape (1, out_features, 1, 1).

    The (batch_size, 1) row minima broadcast against the 4-D bias, so the result is
    (1, out_features, batch_size, 1) with out[0, c, b, 0] = rowmin[b] + bias[0, c, 0, 0].
    """

    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_features) float32.

        Returns:
            (1, out_features, batch_size, 1) float32.
        """
        x = self.gemm(x)
        x = self.group_norm(x)
        x = torch.min(x, dim=1, keepdim=True).values
        return x + self.bias


batch_size = 1024
in_features = 8192
out_features = 8192
num_groups = 512
bias_shape = (1, out_features, 1, 1)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups, bias_shape]
