import torch
import torch.nn as nn


class Model(nn.Module):
    """3-D convolution, GroupNorm, then the mean of all remaining values per sample.

    Degenerate by construction: GroupNorm (with its initial weight 1, bias 0) gives each
    group zero mean, so the result is zero up to rounding. Kept as in the benchmark.
    """

    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, D, H, W) float32.

        Returns:
            (batch_size,) float32.
        """
        x = self.group_norm(self.conv(x))
        return x.mean(dim=[1, 2, 3, 4])


batch_size = 128
in_channels = 3
out_channels = 24
D = 24
H = 32
W = 32
kernel_size = 3
num_groups = 8


def get_inputs():
    return [torch.rand(batch_size, in_channels, D, H, W)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
