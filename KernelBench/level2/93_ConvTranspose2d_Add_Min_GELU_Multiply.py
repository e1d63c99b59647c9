import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """2-D transposed convolution, add a constant, elementwise min with 0, exact GELU, then
    multiply by a constant."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, add_value, multiply_value):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride)
        self.add_value = add_value
        self.multiply_value = multiply_value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, height, width) float32.

        Returns:
            (batch_size, out_channels, (height - 1) * stride + kernel_size,
            (width - 1) * stride + kernel_size) float32.
        """
        x = self.conv_transpose(x)
        x = x + self.add_value
        x = torch.clamp(x, max=0.0)  # elementwise min with 0
        x = F.gelu(x)
        return x * self.multiply_value


batch_size = 128
in_channels = 64
out_channels = 128
height, width = 64, 64
kernel_size = 4
stride = 2
add_value = 0.5
multiply_value = 2.0


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, add_value, multiply_value]
