import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """3-D transposed convolution, Swish (x * sigmoid(x)), GroupNorm, then hardswish."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, groups, eps, bias=True):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias
        )
        self.group_norm = nn.GroupNorm(num_groups=groups, num_channels=out_channels, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, depth, height, width) float32.

        Returns:
            (batch_size, out_channels, D, H, W) float32, where each spatial size S becomes
            (S - 1) * stride - 2 * padding + kernel_size.
        """
        x = self.conv_transpose(x)
        x = x * torch.sigmoid(x)
        x = self.group_norm(x)
        return F.hardswish(x)


batch_size = 128
in_channels = 3
out_channels = 16
depth, height, width = 16, 32, 32
kernel_size = 3
stride = 2
padding = 1
groups = 4
eps = 1e-5


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups, eps]
