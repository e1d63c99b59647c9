# ReLU through torch.compile's CUDA-graph mode: on a GPU its outputs live in the graphs' private
# memory pool, which cannot be handed to the judge by CUDA IPC as is (the harness copies them).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._relu = torch.compile(torch.relu, mode="reduce-overhead")

    def forward(self, x):
        return self._relu(x)
