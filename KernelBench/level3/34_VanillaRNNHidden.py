import torch
import torch.nn as nn


class Model(nn.Module):
    """Vanilla RNN unrolled over a sequence: at each step
    h = tanh(i2h([x_t, h])) and y_t = h2o(h); returns all y_t stacked along time."""

    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (sequence_length, batch_size, input_size) float32.
            h0: (batch_size, hidden_size) float32 initial hidden state.

        Returns:
            (sequence_length, batch_size, output_size) float32.
        """
        h = h0
        outputs = []
        for t in range(x.shape[0]):
            h = self.tanh(self.i2h(torch.cat((x[t], h), dim=1)))
            outputs.append(self.h2o(h))
        return torch.stack(outputs, dim=0)


batch_size = 8
input_size = 1024
hidden_size = 256
output_size = 128
sequence_length = 256


def get_inputs():
    return [torch.rand(sequence_length, batch_size, input_size),
            torch.rand(batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
