import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D max pooling with a square window, stride, padding and dilation."""

    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, channels, height, width) float32.

        Returns:
            (batch_size, channels, H_out, W_out) float32, with
            H_out = (height + 2*padding - dilation*(kernel_size-1) - 1) // stride + 1
            and W_out likewise from width.
        """
        return self.pool(x)


batch_size = 32
channels = 64
height = 512
width = 512
kernel_size = 4
stride = 1
padding = 1
dilation = 1


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation]
