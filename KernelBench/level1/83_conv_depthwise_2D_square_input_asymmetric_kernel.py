import torch
import torch.nn as nn


class Model(nn.Module):
    """Depthwise 2-D convolution with a vertical (kernel_size, 1) kernel: each channel is
    convolved with its own filter (groups = in_channels, no bias by default)."""

    def __init__(
        self,
        in_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        bias: bool = False,
    ):
        super().__init__()
        self.conv2d = nn.Conv2d(
            in_channels,
            in_channels,
            (kernel_size, 1),
            stride=stride,
            padding=padding,
            dilation=dilation,
            groups=in_channels,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, height, width) float32.

        Returns:
            (batch_size, in_channels, height_out, width_out) float32, where
            height_out = (height + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1
            and width_out = (width + 2 * padding - 1) // stride + 1.
        """
        return self.conv2d(x)


batch_size = 64
in_channels = 8
kernel_size = 3
height = 512
width = 512
stride = 1
padding = 0
dilation = 1


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, kernel_size, stride, padding, dilation]
