import torch
import torch.nn as nn


class Model(nn.Module):
    """Multi-layer unidirectional GRU, sequence-first by default, run from a given initial
    hidden state; returns the top layer's output at every time step."""

    def __init__(self, input_size, hidden_size, num_layers, bias=True, batch_first=False):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias=bias,
                          batch_first=batch_first, dropout=0.0, bidirectional=False)

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (sequence_length, batch_size, input_size) float32
               ((batch_size, sequence_length, input_size) if batch_first).
            h0: (num_layers, batch_size, hidden_size) float32 initial hidden state.

        Returns:
            (sequence_length, batch_size, hidden_size) float32.
        """
        output, h_n = self.gru(x, h0)
        return output


batch_size = 10
sequence_length = 512
input_size = 128
hidden_size = 256
num_layers = 6


def get_inputs():
    return [torch.rand(sequence_length, batch_size, input_size),
            torch.rand(num_layers, batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]
