# Tries to fool a comparison done with Tensor methods in this process, then returns garbage.
import torch
import torch.nn as nn

torch.Tensor.__eq__ = lambda self, other: torch.ones(self.shape, dtype=torch.bool)
torch.Tensor.sub = lambda self, other, **kwargs: torch.zeros(self.shape)
torch.Tensor.__sub__ = lambda self, other: torch.zeros(self.shape)
torch.Tensor.abs = lambda self: torch.zeros(self.shape)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.full(x.shape, 7.0)
