import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D convolution, tanh, multiply by a scalar, add a learned per-channel bias, then 2-D
    max pooling."""

    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor, bias_shape,
                 pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scaling_factor = scaling_factor
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.max_pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, height, width) float32.

        Returns:
            (batch_size, out_channels, (height - kernel_size + 1) // pool_kernel_size,
            (width - kernel_size + 1) // pool_kernel_size) float32.
        """
        x = torch.tanh(self.conv(x))
        x = x * self.scaling_factor + self.bias
        return self.max_pool(x)


batch_size = 128
in_channels = 8
out_channels = 64
height = 256
width = 256
kernel_size = 3
scaling_factor = 2.0
bias_shape = (out_channels, 1, 1)
pool_kernel_size = 4


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scaling_factor, bias_shape, pool_kernel_size]
