import torch
import torch.nn as nn


class Model(nn.Module):
    """3-D convolution, multiplies by a learned per-channel scale, tanh, multiplies by a
    learned per-channel bias, then sigmoid.

    The `scaling_factor` constructor argument is ignored: the parameter of that name
    is a standard-normal tensor of shape bias_shape.
    """

    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor, bias_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.scaling_factor = nn.Parameter(torch.randn(bias_shape))
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, depth, height, width) float32.

        Returns:
            (batch_size, out_channels, depth - kernel_size + 1, height - kernel_size + 1,
             width - kernel_size + 1) float32.
        """
        x = self.conv(x) * self.scaling_factor
        x = torch.tanh(x)
        x = x * self.bias
        return torch.sigmoid(x)


batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 64
width = 64
kernel_size = 3
scaling_factor = 2
bias_shape = (out_channels, 1, 1, 1)


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scaling_factor, bias_shape]
