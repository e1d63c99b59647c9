import torch
import torch.nn as nn


class Model(nn.Module):
    """A single strided 11x11 convolution from 3 to 96 channels (stride 4, padding 2, bias).

    num_classes is accepted and ignored.
    """

    def __init__(self, num_classes: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels=3, out_channels=96, kernel_size=11, stride=4, padding=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, 3, height, width) float32.

        Returns:
            (batch_size, 96, (height - 7) // 4 + 1, (width - 7) // 4 + 1) float32,
            the convolution output.
        """
        return self.conv1(x)


batch_size = 256
height = 224
width = 224
num_classes = 1000


def get_inputs():
    return [torch.rand(batch_size, 3, height, width)]


def get_init_inputs():
    return [num_classes]
