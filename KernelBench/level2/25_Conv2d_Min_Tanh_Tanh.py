import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D convolution, minimum over channels (kept as size 1), then tanh twice."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, height, width) float32.

        Returns:
            (batch_size, 1, height - kernel_size + 1, width - kernel_size + 1) float32.
        """
        x = self.conv(x)
        x = torch.min(x, dim=1, keepdim=True)[0]
        return torch.tanh(torch.tanh(x))


batch_size = 128
in_channels = 16
out_channels = 64
height = 256
width = 256
kernel_size = 3


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
