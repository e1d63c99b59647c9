import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Transposed 3-D convolution, LayerNorm over the last (width) axis, exact GELU,
    then multiplies by scaling_factor.

    Note: LayerNorm(out_channels) normalises the LAST axis of the 5-D tensor, i.e. the
    width, not the channels; this only works because the transposed-conv output width
    equals out_channels.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias, eps,
                 scaling_factor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias,
        )
        self.layer_norm = nn.LayerNorm(out_channels, eps=eps)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, D, H, W) float32.

        Returns:
            (batch_size, out_channels, D_out, H_out, W_out) float32, where
            D_out = (D - 1) * stride - 2 * padding + kernel_size,
            and H_out, W_out likewise from H, W (W_out must equal out_channels).
        """
        x = self.conv_transpose(x)
        x = self.layer_norm(x)
        x = F.gelu(x)
        return x * self.scaling_factor


batch_size = 32
in_channels = 32
out_channels = 64
D = 16
H = 32
W = 32
kernel_size = 4
stride = 2
padding = 1
bias = True
eps = 1e-5
scaling_factor = 1.0


def get_inputs():
    return [torch.rand(batch_size, in_channels, D, H, W)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, bias, eps, scaling_factor]
