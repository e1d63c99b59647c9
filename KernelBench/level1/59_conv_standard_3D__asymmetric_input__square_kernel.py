import torch
import torch.nn as nn


class Model(nn.Module):
    """3-D convolution whose kernel is (kernel_size, kernel_size, 1): square over the first
    two spatial axes and of size 1 along the last (short) axis. No bias by default."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
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
            (kernel_size, kernel_size, 1),
            stride=stride,
            padding=padding,
            dilation=dilation,
            groups=groups,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, height, width, depth) float32.

        Returns:
            (batch_size, out_channels, height - kernel_size + 1, width - kernel_size + 1, depth)
            float32 with the default stride/padding/dilation.
        """
        return self.conv3d(x)


batch_size = 16
in_channels = 3
out_channels = 64
kernel_size = 3
height = 256
width = 256
depth = 10


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width, depth)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
