import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Transposed 3-D convolution, adds a second input tensor, then multiplies the sum
    by its own HardSwish.

    A `bias` parameter is created but never used in forward; it is kept because its
    creation consumes random numbers at initialisation.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                 output_padding, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size,
            stride=stride, padding=padding, output_padding=output_padding,
        )
        self.bias = nn.Parameter(torch.randn(bias_shape))  # unused

    def forward(self, x: torch.Tensor, add_input: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, D, H, W) float32.
            add_input: (batch_size, out_channels, D_out, H_out, W_out) float32, where
                D_out = (D - 1) * stride - 2 * padding + kernel_size + output_padding,
                and H_out, W_out likewise from H, W.

        Returns:
            (batch_size, out_channels, D_out, H_out, W_out) float32.
        """
        x = self.conv_transpose(x)
        x = x + add_input
        return x * F.hardswish(x)


batch_size = 128
in_channels = 32
out_channels = 64
D = 16
H = 16
W = 16
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
bias_shape = (out_channels, 1, 1, 1, 1)


def get_inputs():
    return [
        torch.rand(batch_size, in_channels, D, H, W),
        torch.rand(batch_size, out_channels, D * stride, H * stride, W * stride),
    ]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape]
