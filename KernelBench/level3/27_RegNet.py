import torch
import torch.nn as nn


class Model(nn.Module):
    """RegNet-like CNN: `stages` blocks of (conv3x3 + BN + ReLU) x 2 followed by a 2x2 max
    pool, then a global spatial mean and a linear classifier."""

    def __init__(self, input_channels, stages, block_widths, output_classes):
        super().__init__()
        blocks = []
        in_ch = input_channels
        for i in range(stages):
            out_ch = block_widths[i]
            blocks.append(nn.Sequential(
                nn.Conv2d(in_ch, out_ch, kernel_size=3, padding=1),
                nn.BatchNorm2d(out_ch),
                nn.ReLU(),
                nn.Conv2d(out_ch, out_ch, kernel_size=3, padding=1),
                nn.BatchNorm2d(out_ch),
                nn.ReLU(),
                nn.MaxPool2d(kernel_size=2, stride=2),
            ))
            in_ch = out_ch
        self.feature_extractor = nn.Sequential(*blocks)
        self.fc = nn.Linear(block_widths[-1], output_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, input_channels, image_height, image_width) float32.

        Returns:
            (batch_size, output_classes) float32 logits.
        """
        x = self.feature_extractor(x)
        x = torch.mean(x, dim=[2, 3])
        return self.fc(x)


batch_size = 8
input_channels = 3
image_height = 224
image_width = 224
stages = 3
block_widths = [64, 128, 256]
output_classes = 10


def get_inputs():
    return [torch.rand(batch_size, input_channels, image_height, image_width)]


def get_init_inputs():
    return [input_channels, stages, block_widths, output_classes]
