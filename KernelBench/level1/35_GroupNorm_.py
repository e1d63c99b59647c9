import torch
import torch.nn as nn


class Model(nn.Module):
    """Group normalisation of the channels into num_groups groups (eps=1e-5, affine)."""

    def __init__(self, num_features: int, num_groups: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, features, dim1, dim2) float32.

        Returns:
            (batch_size, features, dim1, dim2) float32, x normalised per sample over
            each group of features // num_groups channels and all spatial positions,
            then scaled and shifted per channel.
        """
        return self.gn(x)


batch_size = 112
features = 64
num_groups = 8
dim1 = 512
dim2 = 512


def get_inputs():
    return [torch.rand(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features, num_groups]
