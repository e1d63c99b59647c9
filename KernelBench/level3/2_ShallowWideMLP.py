import torch
import torch.nn as nn


class Model(nn.Module):
    """Shallow, very wide multi-layer perceptron: Linear + ReLU for every entry of
    `hidden_layer_sizes`, then a final Linear to `output_size` (no activation)."""

    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        layers = []
        prev = input_size
        for size in hidden_layer_sizes:
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
hidden_layer_sizes = [32768, 32768]
output_size = 16384


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_layer_sizes, output_size]
