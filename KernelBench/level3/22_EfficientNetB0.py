import torch
import torch.nn as nn
import torch.nn.functional as F


class MBConv(nn.Module):
    """1x1 expand conv + BN + ReLU6 (only when expand_ratio != 1), depthwise kxk conv
    + BN + ReLU6, 1x1 project conv + BN; convs have no bias. The input is added
    (in place) when stride == 1 and in_channels == out_channels. No squeeze-excitation."""

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
            self.expand_conv = None

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
        identity = x
        if self.expand_conv is not None:
            x = self.expand_conv(x)
        x = self.depthwise_conv(x)
        x = self.project_conv(x)
        if self.use_residual:
            x += identity
        return x


class Model(nn.Module):
    """EfficientNet-B0-like classifier (ReLU6 MBConvs without squeeze-excitation):
    3x3/2 conv + BN + ReLU, 13 MBConv blocks, 1x1 conv to 1280 + BN + ReLU, global
    average pool and a linear classifier. BatchNorm runs in training mode."""

    # (in_channels, out_channels, kernel_size, stride, expand_ratio) of each MBConv
    BLOCKS = [
        (32, 16, 3, 1, 1),
        (16, 24, 3, 2, 6),
        (24, 24, 3, 1, 6),
        (24, 40, 5, 2, 6),
        (40, 40, 5, 1, 6),
        (40, 80, 3, 2, 6),
        (80, 80, 3, 1, 6),
        (80, 112, 5, 1, 6),
        (112, 112, 5, 1, 6),
        (112, 192, 5, 2, 6),
        (192, 192, 5, 1, 6),
        (192, 192, 5, 1, 6),
        (192, 320, 3, 1, 6),
    ]

    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.blocks = nn.Sequential(*[MBConv(*cfg) for cfg in self.BLOCKS])
        self.conv2 = nn.Conv2d(320, 1280, kernel_size=1, bias=False)
        self.bn2 = nn.BatchNorm2d(1280)
        self.fc = nn.Linear(1280, num_classes)

    def forward(self, x):
        """
        x: (batch_size, channels, height, width) float32
        returns: (batch_size, num_classes) float32
        """
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.blocks(x)
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.adaptive_avg_pool2d(x, (1, 1))
        x = x.view(x.size(0), -1)
        return self.fc(x)


batch_size = 10
channels = 3
height = 224
width = 224
num_classes = 1000


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [num_classes]
