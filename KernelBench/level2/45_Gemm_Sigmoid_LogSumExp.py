import torch
import torch.nn as nn


class Model(nn.Module):
    """Two linear layers with a sigmoid between them, then the logsumexp of each row."""

    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, input_size) float32.

        Returns:
            (batch_size,) float32.
        """
        x = torch.sigmoid(self.linear1(x))
        x = self.linear2(x)
        return torch.logsumexp(x, dim=1)


batch_size = 16384
input_size = 2048
hidden_size = 4096
output_size = 1024


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
