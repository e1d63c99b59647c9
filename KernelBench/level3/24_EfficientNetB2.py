import torch
import torch.nn as nn


class Model(nn.Module):
    """EfficientNet-B2-like classifier: 3x3/2 conv + BN + ReLU, five blocks, 1x1 conv to
    1408 + BN + ReLU, global average pool and a linear classifier. Convs have no bias.

    Each block is [1x1 expand conv + BN + ReLU (when expand_ratio != 1)], depthwise
    3x3 conv + BN + ReLU, then squeeze-excitation-shaped layers applied IN SEQUENCE
    (not as a gate): adaptive average pool to 1x1, 1x1 conv to hidden // 4 + ReLU,
    1x1 conv back to hidden + Sigmoid; then 1x1 project conv + BN. So the spatial size
    collapses to 1x1 inside the first block, and later BatchNorms see one value per
    sample and channel. BatchNorm runs in training mode (batch statistics)."""

    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.relu = nn.ReLU(inplace=True)

        self.mbconv1 = self._make_mbconv_block(32, 96, 1, 3)
        self.mbconv2 = self._make_mbconv_block(96, 144, 2, 6)
        self.mbconv3 = self._make_mbconv_block(144, 192, 2, 6)
        self.mbconv4 = self._make_mbconv_block(192, 288, 2, 6)
        self.mbconv5 = self._make_mbconv_block(288, 384, 1, 6)

        self.conv_final = nn.Conv2d(384, 1408, kernel_size=1, bias=False)
        self.bn_final = nn.BatchNorm2d(1408)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(1408, num_classes)

    @staticmethod
    def _make_mbconv_block(in_channels, out_channels, stride, expand_ratio):
        hidden_dim = in_channels * expand_ratio
        layers = []
        if expand_ratio != 1:
            layers += [
                nn.Conv2d(in_channels, hidden_dim, kernel_size=1, bias=False),
                nn.BatchNorm2d(hidden_dim),
                nn.ReLU(inplace=True),
            ]
        layers += [
            nn.Conv2d(hidden_dim, hidden_dim, kernel_size=3, stride=stride, padding=1,
                      groups=hidden_dim, bias=False),
            nn.BatchNorm2d(hidden_dim),
            nn.ReLU(inplace=True),
            # squeeze-excitation-shaped layers, used sequentially
            nn.AdaptiveAvgPool2d((1, 1)),
            nn.Conv2d(hidden_dim, hidden_dim // 4, kernel_size=1, bias=False),
            nn.ReLU(inplace=True),
            nn.Conv2d(hidden_dim // 4, hidden_dim, kernel_size=1, bias=False),
            nn.Sigmoid(),
            nn.Conv2d(hidden_dim, out_channels, kernel_size=1, bias=False),
            nn.BatchNorm2d(out_channels),
        ]
        return nn.Sequential(*layers)

    def forward(self, x):
        """
        x: (batch_size, channels, height, width) float32
        returns: (batch_size, num_classes) float32
        """
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.mbconv1(x)
        x = self.mbconv2(x)
        x = self.mbconv3(x)
        x = self.mbconv4(x)
        x = self.mbconv5(x)
        x = self.relu(self.bn_final(self.conv_final(x)))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


batch_size = 2
channels = 3
height = 224
width = 224
num_classes = 1000


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [num_classes]
