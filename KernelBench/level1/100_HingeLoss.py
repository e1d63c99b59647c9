import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean hinge loss: mean(clamp(1 - predictions * targets, min=0)).

    `targets` is a vector that broadcasts against the LAST dimension of `predictions`, so
    targets[j] multiplies every element of column j (not row j).
    """

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        Args:
            predictions: (batch_size, num_classes) float32 scores.
            targets: (batch_size,) float32 labels (nominally -1 or +1, but any float value must
                be handled). Broadcast along the last dimension of predictions, which requires
                num_classes == batch_size: element (i, j) uses targets[j].

        Returns:
            0-dim float32 scalar tensor, the mean over all batch_size * num_classes elements.
        """
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


batch_size = 32768
num_classes = 32768


def get_inputs():
    predictions = torch.rand(batch_size, num_classes)
    targets = torch.randint(0, 2, (batch_size,)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
