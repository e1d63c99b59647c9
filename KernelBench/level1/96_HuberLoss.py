import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Smooth-L1 (Huber) loss with beta = 1, averaged over all elements: per element
    0.5 * d^2 if |d| < 1 else |d| - 0.5, with d = predictions - targets."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        Args:
            predictions: (batch_size, dim) float32.
            targets: (batch_size, dim) float32.

        Returns:
            0-dim float32 scalar tensor.
        """
        return F.smooth_l1_loss(predictions, targets)


batch_size = 32768
dim = 32768


def get_inputs():
    scale = torch.rand(())  # one shared random scale, drawn before the tensors
    predictions = torch.rand(batch_size, dim) * scale
    targets = torch.rand(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return []
