import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D convolution y, then GroupNorm, tanh and hardswish applied to y, plus y as a
    residual, then logsumexp over channels (kept as a size-1 axis)."""

    def __init__(self, in_channels, out_channels, kernel_size, groups, eps=1e-5):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(groups, out_channels, eps=eps)
        self.tanh = nn.Tanh()
        self.hard_swish = nn.Hardswish()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, height, width) float32.

        Returns:
            (batch_size, 1, height - kernel_size + 1, width - kernel_size + 1) float32.
        """
        y = self.conv(x)
        x = self.group_norm(y)
        x = self.tanh(x)
        x = self.hard_swish(x)
        x = y + x
        return torch.logsumexp(x, dim=1, keepdim=True)


batch_size = 128
in_channels = 8
out_channels = 64
height, width = 128, 128
kernel_size = 3
groups = 16


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]
