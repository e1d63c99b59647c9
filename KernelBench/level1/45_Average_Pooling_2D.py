import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D average pooling with a square window; stride defaults to the window size."""

    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, channels, height, width) float32.

        Returns:
            (batch_size, channels, height // kernel_size, width // kernel_size) float32,
            the mean of each non-overlapping kernel_size x kernel_size window
            (trailing rows/columns that do not fill a window are dropped).
        """
        return self.pool(x)


batch_size = 16
channels = 64
height = 2048
width = 2048
kernel_size = 11


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size]
