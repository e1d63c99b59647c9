import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D batch normalisation (eps=1e-5, momentum=0.1, affine).

    The module stays in training mode, so it normalises with the per-channel batch
    mean and biased batch variance over (N, H, W) and updates its running stats.
    """

    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, features, dim1, dim2) float32.

        Returns:
            (batch_size, features, dim1, dim2) float32, the batch-normalised x.
        """
        return self.bn(x)


batch_size = 64
features = 64
dim1 = 512
dim2 = 512


def get_inputs():
    return [torch.rand(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]
