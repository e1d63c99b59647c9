import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        assert targets.dtype == torch.int64, "class targets must stay int64"
        log_probs = predictions - predictions.logsumexp(dim=1, keepdim=True)
        return -log_probs.gather(1, targets.unsqueeze(1)).mean()
