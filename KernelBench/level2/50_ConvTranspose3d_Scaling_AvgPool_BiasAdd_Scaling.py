import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 3-D convolution, multiplies by a learned scalar, 2x2x2 average pool,
    adds a learned per-channel bias, then multiplies by a second learned scalar."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scale1,
                 scale2, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding,
        )
        self.scale1 = nn.Parameter(torch.tensor(scale1))
        self.avg_pool = nn.AvgPool3d(kernel_size=2)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scale2 = nn.Parameter(torch.tensor(scale2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, depth, height, width) float32.

        Returns:
            (batch_size, out_channels, D_out, H_out, W_out) float32, where
            D_out = ((depth - 1) * stride - 2 * padding + kernel_size) // 2,
            and H_out, W_out likewise from height, width.
        """
        x = self.conv_transpose(x) * self.scale1
        x = self.avg_pool(x)
        x = x + self.bias
        return x * self.scale2


batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 32
width = 32
kernel_size = 3
stride = 2
padding = 1
scale1 = 0.5
scale2 = 1.0
bias_shape = (out_channels, 1, 1, 1)


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, scale1, scale2, bias_shape]
