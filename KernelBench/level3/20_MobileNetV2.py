import torch
import torch.nn as nn


class Model(nn.Module):
    """MobileNet v2 classifier: 3x3/2 conv + BN + ReLU6, 17 inverted-residual style
    blocks from the (t, c, n, s) table, 1x1 conv to 1280 + BN + ReLU6, global average
    pool, Dropout(p=0.0) and a linear classifier. All convs have no bias.

    Quirks kept on purpose:
      * the blocks NEVER add a residual: each one is a plain stack of
        [1x1 expand conv + BN + ReLU6 (only when t != 1)], depthwise 3x3 conv + BN +
        ReLU6, 1x1 project conv + BN;
      * after construction every weight is re-initialised in module order: convs
        kaiming_normal (fan_out), BN weight 1 / bias 0, linear normal(0, 0.01) with a
        zero bias.
    BatchNorm runs in training mode (batch statistics)."""

    # expansion t, output channels c, repeats n, first stride s
    SETTINGS = [
        [1, 16, 1, 1],
        [6, 24, 2, 2],
        [6, 32, 3, 2],
        [6, 64, 4, 2],
        [6, 96, 3, 1],
        [6, 160, 3, 2],
        [6, 320, 1, 1],
    ]

    def __init__(self, num_classes=1000):
        super().__init__()

        def block(inp, oup, stride, expand_ratio):
            hidden = inp * expand_ratio
            layers = []
            if expand_ratio != 1:
                layers += [
                    nn.Conv2d(inp, hidden, 1, 1, 0, bias=False),
                    nn.BatchNorm2d(hidden),
                    nn.ReLU6(inplace=True),
                ]
            layers += [
                nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
                nn.BatchNorm2d(hidden),
                nn.ReLU6(inplace=True),
                nn.Conv2d(hidden, oup, 1, 1, 0, bias=False),
                nn.BatchNorm2d(oup),
            ]
            return nn.Sequential(*layers)  # no skip connection, by design of this problem

        input_channel = 32
        last_channel = 1280
        features = [
            nn.Conv2d(3, input_channel, 3, 2, 1, bias=False),
            nn.BatchNorm2d(input_channel),
            nn.ReLU6(inplace=True),
        ]
        for t, c, n, s in self.SETTINGS:
            for i in range(n):
                features.append(block(input_channel, c, s if i == 0 else 1, t))
                input_channel = c
        features += [
            nn.Conv2d(input_channel, last_channel, 1, 1, 0, bias=False),
            nn.BatchNorm2d(last_channel),
            nn.ReLU6(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)),
        ]
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.0),
            nn.Linear(last_channel, num_classes),
        )

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        """
        x: (batch_size, channels, height, width) float32
        returns: (batch_size, num_classes) float32
        """
        x = self.features(x)
        x = x.view(x.size(0), -1)
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
