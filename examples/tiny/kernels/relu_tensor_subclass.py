# Returns a tensor subclass (the shape of a lazy-evaluation hack).
import torch
import torch.nn as nn


class LazyTensor(torch.Tensor):
    pass


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x).as_subclass(LazyTensor)
