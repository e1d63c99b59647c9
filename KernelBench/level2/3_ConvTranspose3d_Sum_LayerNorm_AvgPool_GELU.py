import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 3-D convolution, adds a learned scalar, applies LayerNorm over the
    last (width) axis, 3-D average pooling, then exact GELU.

    Note: LayerNorm(norm_shape) normalises the LAST axis of the 5-D tensor, i.e. the
    width, not the channels; this only works because the transposed-conv output width
    equals norm_shape[-1].
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                 output_padding, sum_weight, norm_shape, pool_kernel_size):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size,
            stride=stride, padding=padding, output_padding=output_padding,
        )
        self.sum_weight = nn.Parameter(torch.tensor(sum_weight))
        self.norm = nn.LayerNorm(norm_shape)
        self.avg_pool = nn.AvgPool3d(kernel_size=pool_kernel_size)
        self.gelu = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, depth, height, width) float32.

        Returns:
            (batch_size, out_channels, D_out, H_out, W_out) float32, where
            D_out = ((depth - 1) * stride[0] - 2 * padding[0] + kernel_size[0]
                     + output_padding[0]) // pool_kernel_size[0],
            and H_out, W_out likewise from height, width (indices 1, 2).
        """
        x = self.conv_transpose(x)
        x = x + self.sum_weight
        x = self.norm(x)
        x = self.avg_pool(x)
        return self.gelu(x)


batch_size = 32
in_channels = 32
out_channels = 64
depth = 16
height = 32
width = 32
kernel_size = (3, 3, 3)
stride = (2, 2, 2)
padding = (1, 1, 1)
output_padding = (1, 1, 1)
sum_weight = 1.0
norm_shape = (out_channels,)
pool_kernel_size = (2, 2, 2)


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding,
            sum_weight, norm_shape, pool_kernel_size]
