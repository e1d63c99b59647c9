# Leaves a thread running after the call (a place to hide work from the timer).
import threading
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        threading.Thread(target=time.sleep, args=(30,), name="hidden-worker", daemon=True).start()
        return torch.relu(x)
