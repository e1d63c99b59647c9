import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 3-D convolution y, then ((y + bias) + y) * y + y, where the residual
    copies of y are detached."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                 output_padding, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size,
            stride=stride, padding=padding, output_padding=output_padding,
        )
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, depth, height, width) float32.

        Returns:
            (batch_size, out_channels, D_out, H_out, W_out) float32, where
            D_out = (depth - 1) * stride - 2 * padding + kernel_size + output_padding,
            and H_out, W_out likewise from height, width.
        """
        x = self.conv_transpose(x)
        residual = x.clone().detach()
        x = x + self.bias
        x = x + residual
        x = x * residual
        return x + residual


batch_size = 16
in_channels = 32
out_channels = 64
depth = 16
height = 32
width = 32
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
bias_shape = (out_channels, 1, 1, 1)


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape]
