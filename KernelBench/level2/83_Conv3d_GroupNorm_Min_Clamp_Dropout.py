import torch
import torch.nn as nn


class Model(nn.Module):
    """3-D convolution, GroupNorm, elementwise min with min_value, clamp to
    [min_value, max_value], then dropout (active: training mode).

    forward reads min_value and max_value from the module-level constants, not from the
    constructor arguments. With min_value = 0 and max_value = 1 the result is all zeros
    (min(x, 0) <= 0, then clamping to [0, 1] gives 0; dropout keeps zeros).
    """

    def __init__(self, in_channels, out_channels, kernel_size, groups, min_value, max_value, dropout_p):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.norm = nn.GroupNorm(groups, out_channels)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, depth, height, width) float32.

        Returns:
            (batch_size, out_channels, depth - kernel_size + 1, height - kernel_size + 1,
            width - kernel_size + 1) float32.
        """
        x = self.conv(x)
        x = self.norm(x)
        x = torch.clamp(x, max=min_value)  # elementwise min with the global min_value
        x = torch.clamp(x, min=min_value, max=max_value)
        return self.dropout(x)


batch_size = 128
in_channels = 3
out_channels = 16
depth, height, width = 16, 64, 64
kernel_size = 3
groups = 8
min_value = 0.0
max_value = 1.0
dropout_p = 0.2


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups, min_value, max_value, dropout_p]
