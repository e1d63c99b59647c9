import torch
import torch.nn as nn


def make_features(config):
    """3x3 conv (padding 1, bias) + ReLU for every number in `config`, and a 2x2 max
    pool for every 'M'."""
    layers = []
    in_channels = 3
    for v in config:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
            layers.append(nn.ReLU(inplace=True))
            in_channels = v
    return nn.Sequential(*layers)


class Model(nn.Module):
    """VGG-16: 13 conv3x3 + ReLU layers in five groups (64x2, 128x2, 256x3, 512x3,
    512x3), each followed by a 2x2 max pool; flatten to 512*7*7, then three fully
    connected layers. The dropouts have p=0.0, so they do nothing."""

    CONFIG = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]

    def __init__(self, num_classes=1000):
        super().__init__()
        self.features = make_features(self.CONFIG)
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(p=0.0),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(p=0.0),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x):
        """
        x: (batch_size, channels, height, width) float32
        returns: (batch_size, num_classes) float32
        """
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


batch_size = 10
channels = 3
height = 224
width = 224
num_classes = 1000


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [num_classes]
