import torch
import torch.nn as nn


class Model(nn.Module):
    """EfficientNet MBConv block without squeeze-excitation: 1x1 expand conv + BN +
    ReLU6 (only when expand_ratio != 1), depthwise kxk conv (stride, padding
    (k - 1) // 2) + BN + ReLU6, 1x1 project conv + BN. Convs have no bias. The input
    is added back only when stride == 1 and in_channels == out_channels (not the case
    at the given sizes). BatchNorm runs in training mode (batch statistics)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, expand_ratio):
        super().__init__()
        self.use_residual = stride == 1 and in_channels == out_channels
        hidden_dim = in_channels * expand_ratio

        if expand_ratio != 1:
            self.expand_conv = nn.Sequential(
                nn.Conv2d(in_channels, hidden_dim, kernel_size=1, bias=False),
                nn.BatchNorm2d(hidden_dim),
                nn.ReLU6(inplace=True),
            )
        else:
            self.expand_conv = nn.Identity()

        self.depthwise_conv = nn.Sequential(
            nn.Conv2d(hidden_dim, hidden_dim, kernel_size, stride, (kernel_size - 1) // 2,
                      groups=hidden_dim, bias=False),
            nn.BatchNorm2d(hidden_dim),
            nn.ReLU6(inplace=True),
        )
        self.project_conv = nn.Sequential(
            nn.Conv2d(hidden_dim, out_channels, kernel_size=1, bias=False),
            nn.BatchNorm2d(out_channels),
        )

    def forward(self, x):
        """
        x: (batch_size, in_channels, height, width) float32
        returns: (batch_size, out_channels, (height - 1) // stride + 1, (width - 1) // stride + 1) float32
        """
        identity = x
        x = self.expand_conv(x)
        x = self.depthwise_conv(x)
        x = self.project_conv(x)
        if self.use_residual:
            x = x + identity
        return x


batch_size = 10
in_channels = 112
out_channels = 192
kernel_size = 5
stride = 2
expand_ratio = 6
height = 224
width = 224


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, expand_ratio]
