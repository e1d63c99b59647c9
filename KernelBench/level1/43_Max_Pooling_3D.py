import torch
import torch.nn as nn


class Model(nn.Module):
    """3-D max pooling with a cubic window, stride, padding and dilation (floor mode)."""

    def __init__(
        self,
        kernel_size: int,
        stride: int,
        padding: int,
        dilation: int,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ):
        super().__init__()
        self.pool = nn.MaxPool3d(
            kernel_size=kernel_size,
            stride=stride,
            padding=padding,
            dilation=dilation,
            return_indices=return_indices,
            ceil_mode=ceil_mode,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, channels, dim1, dim2, dim3) float32.

        Returns:
            (batch_size, channels, D1_out, D2_out, D3_out) float32, with
            Di_out = (dimi + 2*padding - dilation*(kernel_size-1) - 1) // stride + 1.
        """
        return self.pool(x)


batch_size = 16
channels = 32
dim1 = 128
dim2 = 128
dim3 = 128
kernel_size = 3
stride = 2
padding = 1
dilation = 3


def get_inputs():
    return [torch.rand(batch_size, channels, dim1, dim2, dim3)]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation]
