import torch
import torch.nn as nn


class Model(nn.Module):
    """1-D average pooling; padded zeros count in the divisor (count_include_pad=True)."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, input_length) float32.

        Returns:
            (batch_size, in_channels, L_out) float32, each window sum divided by
            kernel_size, with L_out = (input_length + 2*padding - kernel_size) // stride + 1.
        """
        return self.pool(x)


batch_size = 64
in_channels = 128
input_length = 65536
kernel_size = 8
stride = 1
padding = 4


def get_inputs():
    return [torch.rand(batch_size, in_channels, input_length)]


def get_init_inputs():
    return [kernel_size, stride, padding]
