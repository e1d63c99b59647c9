import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Kullback-Leibler divergence KL(targets || predictions) between row-wise probability
    distributions: sum(targets * (log(targets) - log(predictions))) / batch_size."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        Args:
            predictions: (batch_size, dim) float32 probabilities (each row sums to 1).
            targets: (batch_size, dim) float32 probabilities (each row sums to 1).

        Returns:
            0-dim float32 scalar tensor (sum over all elements divided by batch_size).
        """
        return F.kl_div(torch.log(predictions), targets, reduction="batchmean")


batch_size = 16384
dim = 16384


def get_inputs():
    scale = torch.rand(())  # one shared random scale, drawn before the tensors
    predictions = (torch.rand(batch_size, dim) * scale).softmax(dim=-1)
    targets = torch.rand(batch_size, dim).softmax(dim=-1)
    return [predictions, targets]


def get_init_inputs():
    return []
