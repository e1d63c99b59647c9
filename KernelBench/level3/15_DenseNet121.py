import torch
import torch.nn as nn
import torch.nn.functional as F


class DenseBlock(nn.Module):
    """`num_layers` layers of BN -> ReLU -> 3x3 conv (no bias) -> Dropout(p=0.0), each
    adding `growth_rate` channels that are concatenated onto the running tensor."""

    def __init__(self, num_layers, num_input_features, growth_rate):
        super().__init__()
        self.layers = nn.ModuleList()
        for i in range(num_layers):
            in_features = num_input_features + i * growth_rate
            self.layers.append(nn.Sequential(
                nn.BatchNorm2d(in_features),
                nn.ReLU(inplace=True),
                nn.Conv2d(in_features, growth_rate, kernel_size=3, padding=1, bias=False),
                nn.Dropout(p=0.0),
            ))

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            features.append(layer(x))
            x = torch.cat(features, dim=1)
        return x


class TransitionLayer(nn.Module):
    """BN -> ReLU -> 1x1 conv (no bias) -> 2x2 average pool, stride 2."""

    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.transition = nn.Sequential(
            nn.BatchNorm2d(num_input_features),
            nn.ReLU(inplace=True),
            nn.Conv2d(num_input_features, num_output_features, kernel_size=1, bias=False),
            nn.AvgPool2d(kernel_size=2, stride=2),
        )

    def forward(self, x):
        return self.transition(x)


class Model(nn.Module):
    """DenseNet-121 style classifier: 7x7/2 conv stem (no bias) + BN + ReLU + 3x3/2 max
    pool, dense blocks of 6, 12, 24, 16 layers (plain BN-ReLU-conv3x3 layers, no 1x1
    bottleneck) with a channel-halving transition layer after every block but the
    last, final BN + ReLU, global average pool and a linear classifier.
    BatchNorm runs in training mode (batch statistics)."""

    BLOCK_LAYERS = [6, 12, 24, 16]

    def __init__(self, growth_rate=32, num_classes=1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, padding=1),
        )
        num_features = 64
        self.dense_blocks = nn.ModuleList()
        self.transition_layers = nn.ModuleList()
        for i, num_layers in enumerate(self.BLOCK_LAYERS):
            self.dense_blocks.append(DenseBlock(num_layers, num_features, growth_rate))
            num_features += num_layers * growth_rate
            if i != len(self.BLOCK_LAYERS) - 1:
                self.transition_layers.append(TransitionLayer(num_features, num_features // 2))
                num_features //= 2
        self.final_bn = nn.BatchNorm2d(num_features)
        self.classifier = nn.Linear(num_features, num_classes)

    def forward(self, x):
        """
        x: (batch_size, channels, height, width) float32
        returns: (batch_size, num_classes) float32
        """
        x = self.features(x)
        for i, block in enumerate(self.dense_blocks):
            x = block(x)
            if i < len(self.transition_layers):
                x = self.transition_layers[i](x)
        x = F.relu(self.final_bn(x))
        x = torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1)
        return self.classifier(x)


batch_size = 10
channels = 3
height = 224
width = 224
growth_rate = 32
num_classes = 10


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [growth_rate, num_classes]
