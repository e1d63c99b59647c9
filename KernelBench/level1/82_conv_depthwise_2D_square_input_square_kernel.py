import torch
import torch.nn as nn


class Model(nn.Module):
    """Depthwise 2-D convolution with a square kernel: each channel is convolved with its
    own filter (groups = in_channels, no bias by default)."""

    def __init__(
        self,
        in_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        bias: bool = False,
    ):
        super().__init__()
        self.conv2d = nn.Conv2d(
            in_channels,
            in_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            groups=in_channels,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, height, width) float32.

        Returns:
            (batch_size, in_channels, height_out, width_out) float32, where along each axis:
            out = (in + 2 * padding - kernel_size) // stride + 1.
        """
        return self.conv2d(x)


batch_size = 16
in_channels = 64
kernel_size = 3
height = 512
width = 512
stride = 1
padding = 0


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, kernel_size, stride, padding]
