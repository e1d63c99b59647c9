import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean cross-entropy of logits against integer class targets (a 0-dim result)."""

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        Args:
            predictions: (batch_size, num_classes) float32 logits.
            targets: (batch_size,) int64 class indices.

        Returns:
            () float32.
        """
        return torch.nn.functional.cross_entropy(predictions, targets)


batch_size = 64
num_classes = 10


def get_inputs():
    return [torch.rand(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []
