import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 3-D convolution, mean over depth (kept as size 1), adds a learned
    per-channel bias, softmax over channels, tanh, then multiplies by scaling_factor."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                 scaling_factor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding,
        )
        self.bias = nn.Parameter(torch.randn(1, out_channels, 1, 1, 1))
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, depth, height, width) float32.

        Returns:
            (batch_size, out_channels, 1, H_out, W_out) float32, where
            H_out = (height - 1) * stride - 2 * padding + kernel_size
            and W_out likewise from width.
        """
        x = self.conv_transpose(x)
        x = torch.mean(x, dim=2, keepdim=True)
        x = x + self.bias
        x = torch.softmax(x, dim=1)
        x = torch.tanh(x)
        return x * self.scaling_factor


batch_size = 16
in_channels = 16
out_channels = 64
depth = 32
height = 128
width = 128
kernel_size = 3
stride = 1
padding = 1
scaling_factor = 2.0


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, scaling_factor]
