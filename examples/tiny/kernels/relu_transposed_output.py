import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Works on the transposed input and returns the result as a transposed view: the values are the
    reference's, the layout is not contiguous."""

    def forward(self, x):
        return torch.clamp_min(x.t().contiguous(), 0.0).t()
