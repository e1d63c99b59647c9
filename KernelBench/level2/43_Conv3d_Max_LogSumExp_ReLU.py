import torch
import torch.nn as nn


class Model(nn.Module):
    """3-D convolution, 2x2x2 max pool (stride 2), logsumexp over channels (kept as
    size 1), then ReLU."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size,
                              stride=stride, padding=padding)
        self.max_pool = nn.MaxPool3d(kernel_size=2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, depth, height, width) float32.

        Returns:
            (batch_size, 1, D_out, H_out, W_out) float32, where
            D_out = ((depth + 2 * padding - kernel_size) // stride + 1) // 2,
            and H_out, W_out likewise from height, width.
        """
        x = self.max_pool(self.conv(x))
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return torch.relu(x)


batch_size = 4
in_channels = 32
out_channels = 64
depth = 32
height = 128
width = 128
kernel_size = 3
stride = 1
padding = 1


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
