import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D convolution, multiplies by scale_factor, then the minimum over channels
    (kept as size 1)."""

    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, height, width) float32.

        Returns:
            (batch_size, 1, height - kernel_size + 1, width - kernel_size + 1) float32.
        """
        x = self.conv(x) * self.scale_factor
        return torch.min(x, dim=1, keepdim=True)[0]


batch_size = 64
in_channels = 64
out_channels = 128
height = 256
width = 256
kernel_size = 3
scale_factor = 2.0


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale_factor]
