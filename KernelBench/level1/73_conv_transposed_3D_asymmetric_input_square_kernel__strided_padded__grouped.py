import torch
import torch.nn as nn


class Model(nn.Module):
    """Strided, padded 3-D transposed convolution with a cubic kernel (no bias by default).

    `output_padding` is accepted but never used: the layer always has zero output padding.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        output_padding: int = 0,
        groups: int = 1,
        bias: bool = False,
    ):
        super().__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(
            in_channels,
            out_channels,
            (kernel_size, kernel_size, kernel_size),
            stride=stride,
            padding=padding,
            groups=groups,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, depth, height, width) float32.

        Returns:
            (batch_size, out_channels, depth_out, height_out, width_out) float32, where along
            each spatial axis: out = (in - 1) * stride - 2 * padding + kernel_size.
        """
        return self.conv_transpose3d(x)


batch_size = 4
in_channels = 32
out_channels = 32
kernel_size = 3
depth = 32
height = 64
width = 128
stride = 2
padding = 1
groups = 4


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    # Positional: the 6th value (`groups`) binds to the unused `output_padding` argument,
    # so the constructed layer keeps groups=1 and is NOT grouped.
    return [in_channels, out_channels, kernel_size, stride, padding, groups]
