import torch
import torch.nn as nn


class Model(nn.Module):
    """3-D average pool of the input, transposed 3-D convolution, clamp, softmax over
    all spatial positions of each channel, then multiplies by a learned per-channel
    scale (initialised to ones)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                 output_padding, pool_kernel_size, clamp_min, clamp_max):
        super().__init__()
        self.avg_pool = nn.AvgPool3d(pool_kernel_size)
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size,
            stride=stride, padding=padding, output_padding=output_padding,
        )
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max
        self.scale = nn.Parameter(torch.ones(1, out_channels, 1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, depth, height, width) float32.

        Returns:
            (batch_size, out_channels, D_out, H_out, W_out) float32, where
            D_out = (depth // pool_kernel_size - 1) * stride - 2 * padding + kernel_size
            + output_padding, and H_out, W_out likewise from height, width.
        """
        x = self.avg_pool(x)
        x = self.conv_transpose(x)
        x = torch.clamp(x, self.clamp_min, self.clamp_max)
        b, c, d, h, w = x.shape
        x = torch.softmax(x.view(b, c, -1), dim=2).view(b, c, d, h, w)
        return x * self.scale


batch_size = 32
in_channels = 32
out_channels = 64
depth = 32
height = 64
width = 64
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
pool_kernel_size = 2
clamp_min = 0.0
clamp_max = 1.0


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding,
            pool_kernel_size, clamp_min, clamp_max]
