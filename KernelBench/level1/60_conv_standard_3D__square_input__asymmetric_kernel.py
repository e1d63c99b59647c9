import torch
import torch.nn as nn


class Model(nn.Module):
    """3-D convolution with a non-cubic kernel on a cubic volume (no bias by default)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        groups: int = 1,
        bias: bool = False,
    ):
        super().__init__()
        self.conv3d = nn.Conv3d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            dilation=dilation,
            groups=groups,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, width, height, depth) float32.

        Returns:
            (batch_size, out_channels, width - kernel_size[0] + 1, height - kernel_size[1] + 1,
            depth - kernel_size[2] + 1) float32 with the default stride/padding/dilation.
        """
        return self.conv3d(x)


batch_size = 16
in_channels = 3
out_channels = 64
kernel_size = (3, 5, 7)
width = 64
height = 64
depth = 64


def get_inputs():
    return [torch.rand(batch_size, in_channels, width, height, depth)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
