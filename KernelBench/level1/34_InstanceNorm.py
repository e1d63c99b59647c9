import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D instance normalisation (eps=1e-5, no affine, no running stats).

    Each (sample, channel) plane is normalised over its H*W values with biased variance.
    """

    def __init__(self, num_features: int):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, features, dim1, dim2) float32.

        Returns:
            (batch_size, features, dim1, dim2) float32, the instance-normalised x.
        """
        return self.inorm(x)


batch_size = 112
features = 64
dim1 = 512
dim2 = 512


def get_inputs():
    return [torch.rand(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]
