import torch
import torch.nn as nn


class Model(nn.Module):
    """Pointwise (1x1) 2-D convolution: a per-pixel linear map across channels
    (no bias by default)."""

    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super().__init__()
        self.pointwise = nn.Conv2d(
            in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, height, width) float32.

        Returns:
            (batch_size, out_channels, height, width) float32.
        """
        return self.pointwise(x)


batch_size = 16
in_channels = 64
out_channels = 128
height = 1024
width = 1024


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
