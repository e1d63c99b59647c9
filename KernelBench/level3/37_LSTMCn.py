import torch
import torch.nn as nn


class Model(nn.Module):
    """Multi-layer LSTM (batch_first, unidirectional) run from given initial states; returns
    the final cell states c_n of every layer. The linear head on the last time step is
    still computed, and its result discarded."""

    def __init__(self, input_size, hidden_size, num_layers, output_size, dropout=0.0):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True,
                            dropout=dropout, bidirectional=False)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, sequence_length, input_size) float32.
            h0: (num_layers, batch_size, hidden_size) float32 initial hidden state.
            c0: (num_layers, batch_size, hidden_size) float32 initial cell state.

        Returns:
            (num_layers, batch_size, hidden_size) float32: c_n.
        """
        out, (h_n, c_n) = self.lstm(x, (h0, c0))
        _ = self.fc(out[:, -1, :])  # computed but unused
        return c_n


batch_size = 10
sequence_length = 512
input_size = 128
hidden_size = 256
num_layers = 6
output_size = 10
dropout = 0.0


def get_inputs():
    return [torch.rand(batch_size, sequence_length, input_size),
            torch.rand(num_layers, batch_size, hidden_size),
            torch.rand(num_layers, batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size, dropout]
