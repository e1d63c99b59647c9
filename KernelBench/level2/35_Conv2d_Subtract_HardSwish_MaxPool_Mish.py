import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """2-D convolution, subtracts a constant, HardSwish, 2-D max pool, then Mish."""

    def __init__(self, in_channels, out_channels, kernel_size, subtract_value,
                 pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract_value = subtract_value
        self.pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, height, width) float32.

        Returns:
            (batch_size, out_channels, H_out, W_out) float32, where
            H_out = (height - kernel_size + 1) // pool_kernel_size and W_out likewise.
        """
        x = self.conv(x) - self.subtract_value
        x = F.hardswish(x)
        x = self.pool(x)
        return F.mish(x)


batch_size = 128
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
subtract_value = 0.5
pool_kernel_size = 2


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, subtract_value, pool_kernel_size]
