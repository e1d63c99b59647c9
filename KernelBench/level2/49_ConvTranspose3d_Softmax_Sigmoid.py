import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 3-D convolution, softmax over channels, then sigmoid."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                 output_padding, bias=True):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size,
            stride=stride, padding=padding, output_padding=output_padding, bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, D, H, W) float32.

        Returns:
            (batch_size, out_channels, D_out, H_out, W_out) float32, where
            D_out = (D - 1) * stride - 2 * padding + kernel_size + output_padding,
            and H_out, W_out likewise from H, W.
        """
        x = self.conv_transpose(x)
        x = torch.softmax(x, dim=1)
        return torch.sigmoid(x)


batch_size = 16
in_channels = 32
out_channels = 64
D = 16
H = 32
W = 32
kernel_size = 3
stride = 2
padding = 1
output_padding = 1


def get_inputs():
    return [torch.rand(batch_size, in_channels, D, H, W)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]
