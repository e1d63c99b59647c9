import torch
import torch.nn as nn


class Model(nn.Module):
    """MobileNet v1: 3x3/2 conv + BN + ReLU, 13 depthwise-separable blocks (depthwise
    3x3 conv + BN + ReLU, pointwise 1x1 conv + BN + ReLU; convs have no bias), 7x7
    average pool and a linear classifier. Channel widths are scaled by `alpha`.
    BatchNorm runs in training mode (batch statistics)."""

    def __init__(self, num_classes=1000, input_channels=3, alpha=1.0):
        super().__init__()

        def conv_bn(inp, oup, stride):
            return nn.Sequential(
                nn.Conv2d(inp, oup, 3, stride, 1, bias=False),
                nn.BatchNorm2d(oup),
                nn.ReLU(inplace=True),
            )

        def conv_dw(inp, oup, stride):
            return nn.Sequential(
                nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False),
                nn.BatchNorm2d(inp),
                nn.ReLU(inplace=True),
                nn.Conv2d(inp, oup, 1, 1, 0, bias=False),
                nn.BatchNorm2d(oup),
                nn.ReLU(inplace=True),
            )

        def w(c):
            return int(c * alpha)

        # (output width, stride) of each depthwise-separable block
        blocks = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)]
        blocks += [(512, 1)] * 5 + [(1024, 2), (1024, 1)]
        layers = [conv_bn(input_channels, w(32), 2)]
        in_c = w(32)
        for out_c, stride in blocks:
            layers.append(conv_dw(in_c, w(out_c), stride))
            in_c = w(out_c)
        layers.append(nn.AvgPool2d(7))
        self.model = nn.Sequential(*layers)
        self.fc = nn.Linear(w(1024), num_classes)

    def forward(self, x):
        """
        x: (batch_size, input_channels, height, width) float32
        returns: (batch_size, num_classes) float32
        """
        x = self.model(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)


batch_size = 10
input_channels = 3
height = 224
width = 224
num_classes = 1000
alpha = 1.0


def get_inputs():
    return [torch.rand(batch_size, input_channels, height, width)]


def get_init_inputs():
    return [num_classes, input_channels, alpha]
