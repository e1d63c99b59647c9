import torch
import torch.nn as nn
import torch.nn.functional as F


def channel_shuffle(x, groups):
    """Interleave the channels of `groups` equal groups: (g, C/g) -> (C/g, g)."""
    b, c, h, w = x.shape
    x = x.view(b, groups, c // groups, h, w).transpose(1, 2).contiguous()
    return x.view(b, c, h, w)


class ShuffleUnit(nn.Module):
    """Grouped 1x1 conv -> depthwise 3x3 conv -> channel shuffle -> grouped 1x1 conv,
    plus an identity (same width) or 1x1-conv+BN (width change) shortcut. Stride 1."""

    def __init__(self, in_channels, out_channels, groups=3):
        super().__init__()
        assert out_channels % 4 == 0
        mid = out_channels // 4
        self.groups = groups
        self.conv1 = nn.Conv2d(in_channels, mid, 1, groups=groups, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, padding=1, groups=mid, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, out_channels, 1, groups=groups, bias=False)
        self.bn3 = nn.BatchNorm2d(out_channels)
        if in_channels == out_channels:
            self.shortcut = nn.Sequential()
        else:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, bias=False),
                nn.BatchNorm2d(out_channels),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = channel_shuffle(out, self.groups)
        out = F.relu(self.bn3(self.conv3(out)))
        return out + self.shortcut(x)


class Model(nn.Module):
    """ShuffleNet classifier: 3x3 stem conv (stride 2) + BN + ReLU, 3x3 max pool (stride 2),
    three stages of ShuffleUnits (all stride 1, so maps stay at 1/4 resolution),
    1x1 conv to 1024 + BN + ReLU, global average pool, linear classifier."""

    def __init__(self, num_classes=1000, groups=3, stages_repeats=[3, 7, 3],
                 stages_out_channels=[24, 240, 480, 960]):
        super().__init__()
        c = stages_out_channels
        self.conv1 = nn.Conv2d(3, c[0], 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c[0])
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.stage2 = self._make_stage(c[0], c[1], stages_repeats[0], groups)
        self.stage3 = self._make_stage(c[1], c[2], stages_repeats[1], groups)
        self.stage4 = self._make_stage(c[2], c[3], stages_repeats[2], groups)
        self.conv5 = nn.Conv2d(c[3], 1024, 1, bias=False)
        self.bn5 = nn.BatchNorm2d(1024)
        self.fc = nn.Linear(1024, num_classes)

    @staticmethod
    def _make_stage(in_channels, out_channels, repeats, groups):
        units = [ShuffleUnit(in_channels, out_channels, groups)]
        units += [ShuffleUnit(out_channels, out_channels, groups) for _ in range(repeats - 1)]
        return nn.Sequential(*units)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, input_channels, height, width) float32.

        Returns:
            (batch_size, num_classes) float32 logits.
        """
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.maxpool(x)
        x = self.stage4(self.stage3(self.stage2(x)))
        x = F.relu(self.bn5(self.conv5(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


batch_size = 10
input_channels = 3
height = 224
width = 224
num_classes = 1000


def get_inputs():
    return [torch.rand(batch_size, input_channels, height, width)]


def get_init_inputs():
    return [num_classes]
