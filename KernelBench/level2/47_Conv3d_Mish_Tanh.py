import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """3-D convolution, Mish, then tanh."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size,
                              stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, D, H, W) float32.

        Returns:
            (batch_size, out_channels, D - kernel_size + 1, H - kernel_size + 1,
             W - kernel_size + 1) float32 (with the default stride 1, padding 0).
        """
        x = F.mish(self.conv(x))
        return torch.tanh(x)


batch_size = 16
in_channels = 32
out_channels = 64
D = 32
H = 64
W = 64
kernel_size = 3


def get_inputs():
    return [torch.rand(batch_size, in_channels, D, H, W)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
