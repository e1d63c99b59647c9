import torch
import torch.nn as nn


class Model(nn.Module):
    """One step of a vanilla RNN cell that keeps its hidden state on the module:
    hidden = tanh(i2h([x, hidden])), output = h2o(hidden). The state is a plain tensor
    attribute (not a parameter or buffer) created in __init__ from the module-level
    batch_size; forward overwrites it with initial_hidden when given and stores the new
    hidden state back on the module."""

    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.hidden = torch.randn(batch_size, hidden_size)  # drawn before the layers
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()

    def forward(self, x: torch.Tensor, initial_hidden: torch.Tensor = None) -> torch.Tensor:
        """
        Args:
            x: (batch_size, input_size) float32.
            initial_hidden: (batch_size, hidden_size) float32, copied into the stored state.

        Returns:
            (batch_size, output_size) float32. Side effect: self.hidden becomes the new
            (batch_size, hidden_size) hidden state.
        """
        # The plain tensor attribute is not moved by module.to(); move it here.
        self.hidden = self.hidden.to(device=x.device, dtype=x.dtype)
        if initial_hidden is not None:
            self.hidden.copy_(initial_hidden)
        combined = torch.cat((x, self.hidden), dim=1)
        self.hidden = self.tanh(self.i2h(combined))
        return self.h2o(self.hidden)


batch_size = 256
input_size = 16384
hidden_size = 16384
output_size = 8192


def get_inputs():
    return [torch.rand(batch_size, input_size), torch.rand(batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
