import torch
import torch.nn as nn
import torch.nn.functional as F


class ChannelShuffle(nn.Module):
    """Interleave channels across `groups`: (B, g*k, H, W) -> view (B, g, k, H, W) ->
    swap the g and k axes -> back to (B, g*k, H, W)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        b, c, h, w = x.size()
        x = x.view(b, self.groups, c // self.groups, h, w)
        x = x.transpose(1, 2).contiguous()
        return x.view(b, c, h, w)


class Model(nn.Module):
    """ShuffleNet unit: grouped 1x1 conv to out_channels // 4 + BN + ReLU, depthwise 3x3
    conv (padding 1) + BN, channel shuffle, grouped 1x1 conv to out_channels + BN +
    ReLU, then add the shortcut (identity when in_channels == out_channels, else 1x1
    conv + BN). No ReLU after the add. Convs have no bias.
    BatchNorm runs in training mode (batch statistics)."""

    def __init__(self, in_channels, out_channels, groups=3):
        super().__init__()
        assert out_channels % 4 == 0
        mid_channels = out_channels // 4

        self.conv1 = nn.Conv2d(in_channels, mid_channels, kernel_size=1, groups=groups, bias=False)
        self.bn1 = nn.BatchNorm2d(mid_channels)
        self.conv2 = nn.Conv2d(mid_channels, mid_channels, kernel_size=3, padding=1,
                               groups=mid_channels, bias=False)
        self.bn2 = nn.BatchNorm2d(mid_channels)
        self.conv3 = nn.Conv2d(mid_channels, out_channels, kernel_size=1, groups=groups, bias=False)
        self.bn3 = nn.BatchNorm2d(out_channels)
        self.shuffle = ChannelShuffle(groups)

        if in_channels == out_channels:
            self.shortcut = nn.Identity()
        else:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False),
                nn.BatchNorm2d(out_channels),
            )

    def forward(self, x):
        """
        x: (batch_size, in_channels, height, width) float32
        returns: (batch_size, out_channels, height, width) float32
        """
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = self.shuffle(out)
        out = F.relu(self.bn3(self.conv3(out)))
        out += self.shortcut(x)
        return out


batch_size = 10
in_channels = 240
out_channels = 480
groups = 3
height = 224
width = 224


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, groups]
