import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer, per-row normalisation done by InstanceNorm2d on a (B, 1, 1, F)
    view, then (x + y) * y with a second input y.

    The InstanceNorm2d is built with num_features=out_features but sees a single
    channel; without affine parameters this is allowed and normalises each row over
    its out_features values (eps 1e-5).
    """

    def __init__(self, in_features, out_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.bmm = nn.Linear(in_features, out_features)
        self.instance_norm = nn.InstanceNorm2d(out_features, eps=eps, momentum=momentum)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_features) float32.
            y: (batch_size, out_features) float32.

        Returns:
            (batch_size, out_features) float32.
        """
        x = self.bmm(x)
        x = self.instance_norm(x.unsqueeze(1).unsqueeze(1)).squeeze(1).squeeze(1)
        x = x + y
        return x * y


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features), torch.rand(batch_size, out_features)]


def get_init_inputs():
    return [in_features, out_features]
