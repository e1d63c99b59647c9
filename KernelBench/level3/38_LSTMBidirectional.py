import torch
import torch.nn as nn


class Model(nn.Module):
    """Multi-layer bidirectional LSTM (batch_first) run from given initial states, then a
    linear layer on the last time step of the top layer (forward and backward halves
    concatenated)."""

    def __init__(self, input_size, hidden_size, num_layers, output_size, dropout=0.0):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True,
                            dropout=dropout, bidirectional=True)
        self.fc = nn.Linear(hidden_size * 2, output_size)

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, sequence_length, input_size) float32.
            h0: (num_layers * 2, batch_size, hidden_size) float32 initial hidden state.
            c0: (num_layers * 2, batch_size, hidden_size) float32 initial cell state.

        Returns:
            (batch_size, output_size) float32.
        """
        out, _ = self.lstm(x, (h0, c0))          # (B, T, 2 * hidden_size)
        return self.fc(out[:, -1, :])


batch_size = 10
sequence_length = 512
input_size = 128
hidden_size = 256
num_layers = 6
output_size = 10
dropout = 0.0


def get_inputs():
    return [torch.rand(batch_size, sequence_length, input_size),
            torch.rand(num_layers * 2, batch_size, hidden_size),
            torch.rand(num_layers * 2, batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size, dropout]
