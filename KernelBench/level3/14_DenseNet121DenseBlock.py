import torch
import torch.nn as nn


class Model(nn.Module):
    """DenseNet dense block: `num_layers` layers, each BatchNorm -> ReLU -> 3x3 conv
    (padding 1, no bias) -> Dropout(p=0.0) producing `growth_rate` new channels from
    everything so far; the new channels are concatenated onto the running tensor
    after every layer. BatchNorm runs in training mode (batch statistics)."""

    def __init__(self, num_layers, num_input_features, growth_rate):
        super().__init__()
        self.layers = nn.ModuleList(
            self._make_layer(num_input_features + i * growth_rate, growth_rate) for i in range(num_layers)
        )

    @staticmethod
    def _make_layer(in_features, growth_rate):
        return nn.Sequential(
            nn.BatchNorm2d(in_features),
            nn.ReLU(inplace=True),
            nn.Conv2d(in_features, growth_rate, kernel_size=3, padding=1, bias=False),
            nn.Dropout(p=0.0),
        )

    def forward(self, x):
        """
        x: (batch_size, num_input_features, height, width) float32
        returns: (batch_size, num_input_features + num_layers * growth_rate, height, width) float32
        """
        features = [x]
        for layer in self.layers:
            features.append(layer(x))
            x = torch.cat(features, dim=1)
        return x


batch_size = 10
num_layers = 6
num_input_features = 32
growth_rate = 32
height = 224
width = 224


def get_inputs():
    return [torch.rand(batch_size, num_input_features, height, width)]


def get_init_inputs():
    return [num_layers, num_input_features, growth_rate]
