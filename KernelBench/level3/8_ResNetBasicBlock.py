import torch
import torch.nn as nn


class Model(nn.Module):
    """ResNet basic block: conv3x3(stride) -> BN -> ReLU -> conv3x3 -> BN, plus a
    shortcut that is always a 1x1 conv(stride) + BN projection, then ReLU of the sum.
    Convolutions have no bias. BatchNorm runs in training mode (batch statistics)."""

    expansion = 1

    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = nn.Sequential(
            nn.Conv2d(in_channels, out_channels * self.expansion, kernel_size=1, stride=stride, bias=False),
            nn.BatchNorm2d(out_channels * self.expansion),
        )

    def forward(self, x):
        """
        x: (batch_size, in_channels, height, width) float32
        returns: (batch_size, out_channels, (height - 1) // stride + 1, (width - 1) // stride + 1) float32
        """
        identity = self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


batch_size = 10
in_channels = 3
out_channels = 64
stride = 1
height = 224
width = 224


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, stride]
