import torch
import torch.nn as nn


class Model(nn.Module):
    """Triplet margin loss averaged over the batch:
    mean(max(||a - p + eps||_2 - ||a - n + eps||_2 + margin, 0)) with eps = 1e-6."""

    def __init__(self, margin: float = 1.0):
        super().__init__()
        self.loss_fn = nn.TripletMarginLoss(margin=margin)

    def forward(
        self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor
    ) -> torch.Tensor:
        """
        Args:
            anchor: (batch_size, dim) float32.
            positive: (batch_size, dim) float32.
            negative: (batch_size, dim) float32.

        Returns:
            0-dim float32 scalar tensor.
        """
        return self.loss_fn(anchor, positive, negative)


batch_size = 32768
dim = 8192
margin = 1.0


def get_inputs():
    scale = torch.rand(())  # one shared random scale, drawn before the tensors
    anchor = torch.rand(batch_size, dim) * scale
    positive = torch.rand(batch_size, dim)
    negative = torch.rand(batch_size, dim)
    return [anchor, positive, negative]


def get_init_inputs():
    return [margin]
