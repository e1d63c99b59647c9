# Same parameters as the reference because it creates its Linear in the same order under the same seed.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = torch.addmm(self.linear.bias, x, self.linear.weight.t())
        return 0.5 * y * (1.0 + torch.erf(y / 2.0 ** 0.5))
