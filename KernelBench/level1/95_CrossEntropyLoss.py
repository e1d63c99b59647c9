import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Cross-entropy loss of class logits against integer class targets, averaged over the
    batch (log-softmax over the class dimension, then negative log-likelihood)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        Args:
            predictions: (batch_size, num_classes) float32 logits.
            targets: (batch_size,) int64 class indices in [0, num_classes).

        Returns:
            0-dim float32 scalar tensor.
        """
        return F.cross_entropy(predictions, targets)


batch_size = 32768
num_classes = 4096


def get_inputs():
    predictions = torch.rand(batch_size, num_classes)
    targets = torch.randint(0, num_classes, (batch_size,))  # int64 class indices
    return [predictions, targets]


def get_init_inputs():
    return []
