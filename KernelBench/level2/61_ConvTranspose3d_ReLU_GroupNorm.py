import torch
import torch.nn as nn


class Model(nn.Module):
    """3-D transposed convolution (no bias), ReLU, then GroupNorm."""

    def __init__(self, in_channels, out_channels, kernel_size, groups, bias):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, bias=bias)
        self.relu = nn.ReLU()
        self.group_norm = nn.GroupNorm(num_groups=groups, num_channels=out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, depth, height, width) float32.

        Returns:
            (batch_size, out_channels, depth + kernel_size - 1, height + kernel_size - 1,
            width + kernel_size - 1) float32.
        """
        x = self.conv_transpose(x)
        x = self.relu(x)
        return self.group_norm(x)


batch_size = 16
in_channels = 64
out_channels = 128
depth, height, width = 32, 32, 32
kernel_size = 3
groups = 8
bias = False


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups, bias]
