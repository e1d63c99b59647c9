import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 2-D convolution, BatchNorm (training-mode batch statistics), tanh,
    2x2 max pool, then GroupNorm. The `groups` argument is accepted but unused."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, groups,
                 num_groups):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding,
        )
        self.batch_norm = nn.BatchNorm2d(out_channels)
        self.tanh = nn.Tanh()
        self.max_pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.group_norm = nn.GroupNorm(num_groups=num_groups, num_channels=out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, height, width) float32.

        Returns:
            (batch_size, out_channels, H_out, W_out) float32, where
            H_out = ((height - 1) * stride - 2 * padding + kernel_size) // 2
            and W_out likewise from width.
        """
        x = self.conv_transpose(x)
        x = self.batch_norm(x)
        x = self.tanh(x)
        x = self.max_pool(x)
        return self.group_norm(x)


batch_size = 512
in_channels = 64
out_channels = 128
height = width = 2048
kernel_size = 5
stride = 1
padding = 1
groups = 8
num_groups = 8
# The spatial size is then overridden: the actual input is 32 x 32 (kept from the reference).
height, width = 32, 32


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups, num_groups]
