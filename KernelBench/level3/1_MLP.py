import torch
import torch.nn as nn


class Model(nn.Module):
    """Multi-layer perceptron: a Linear + ReLU pair for every hidden size in
    `layer_sizes`, followed by a final Linear to `output_size` (no activation)."""

    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        prev = input_size
        for size in layer_sizes:
            layers.append(nn.Linear(prev, size))
            layers.append(nn.ReLU())
            prev = size
        layers.append(nn.Linear(prev, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        """
        x: (batch_size, input_size) float32
        returns: (batch_size, output_size) float32
        """
        return self.network(x)


batch_size = 128
input_size = 16384
layer_sizes = [16384, 16384]
output_size = 8192


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, layer_sizes, output_size]
