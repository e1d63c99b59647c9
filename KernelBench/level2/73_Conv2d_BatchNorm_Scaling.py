import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D convolution, BatchNorm2d (training mode: batch statistics), then multiply by a
    scalar."""

    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bn = nn.BatchNorm2d(out_channels)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, height, width) float32.

        Returns:
            (batch_size, out_channels, height - kernel_size + 1, width - kernel_size + 1) float32.
        """
        x = self.bn(self.conv(x))
        return x * self.scaling_factor


batch_size = 128
in_channels = 8
out_channels = 64
height = 128
width = 128
kernel_size = 3
scaling_factor = 2.0


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scaling_factor]
