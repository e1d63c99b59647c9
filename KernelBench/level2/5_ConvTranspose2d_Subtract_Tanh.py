import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 2-D convolution, subtracts a learned per-channel bias, then tanh."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape,
                 stride=2, padding=1, output_padding=1):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size,
            stride=stride, padding=padding, output_padding=output_padding,
        )
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, height, width) float32.

        Returns:
            (batch_size, out_channels, H_out, W_out) float32, where with the
            constructor defaults stride=2, padding=1, output_padding=1:
            H_out = (height - 1) * 2 - 2 + kernel_size + 1, W_out likewise from width.
        """
        return torch.tanh(self.conv_transpose(x) - self.bias)


batch_size = 32
in_channels = 64
out_channels = 64
height = 256
width = 256
kernel_size = 4
bias_shape = (out_channels, 1, 1)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
