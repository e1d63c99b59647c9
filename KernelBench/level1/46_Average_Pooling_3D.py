import torch
import torch.nn as nn


class Model(nn.Module):
    """3-D average pooling; padded zeros count in the divisor (count_include_pad=True)."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, channels, depth, height, width) float32.

        Returns:
            (batch_size, channels, D_out, H_out, W_out) float32, each window sum divided
            by kernel_size**3, with D_out = (depth + 2*padding - kernel_size) // stride + 1
            and H_out, W_out likewise.
        """
        return self.pool(x)


batch_size = 16
channels = 32
depth = 128
height = 128
width = 256
kernel_size = 3
stride = 2
padding = 1


def get_inputs():
    return [torch.rand(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]
