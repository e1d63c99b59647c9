import torch
import torch.nn as nn


class Model(nn.Module):
    """Multi-layer LSTM (batch_first, unidirectional) followed by a linear layer applied to
    the top layer's output at the last time step. Initial states default to zeros."""

    def __init__(self, input_size, hidden_size, num_layers, output_size, dropout=0.0):
        super().__init__()
        self.num_layers = num_layers
        self.hidden_size = hidden_size
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True,
                            dropout=dropout, bidirectional=False)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor, h0: torch.Tensor = None, c0: torch.Tensor = None) -> torch.Tensor:
        """
        Args:
            x: (batch_size, sequence_length, input_size) float32.
            h0: optional (num_layers, batch_size, hidden_size) initial hidden state;
                zeros when omitted.
            c0: optional (num_layers, batch_size, hidden_size) initial cell state;
                zeros when omitted.

        Returns:
            (batch_size, output_size) float32: fc(output[:, -1, :]), where output is the
            (batch_size, sequence_length, hidden_size) top-layer LSTM output.
        """
        shape = (self.num_layers, x.shape[0], self.hidden_size)
        if h0 is None:
            h0 = torch.zeros(shape, device=x.device, dtype=x.dtype)
        if c0 is None:
            c0 = torch.zeros(shape, device=x.device, dtype=x.dtype)
        out, _ = self.lstm(x, (h0, c0))
        return self.fc(out[:, -1, :])


batch_size = 10
sequence_length = 512
input_size = 128
hidden_size = 256
num_layers = 6
output_size = 10
dropout = 0.0


def get_inputs():
    return [torch.rand(batch_size, sequence_length, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size, dropout]
