import torch
import torch.nn as nn


class Model(nn.Module):
    """Convolutional ViT-style classifier. A strided conv patchifies the image, ALL patch
    features are flattened and projected to a single embed_dim vector, which is stacked
    after a class token: the transformer therefore sees exactly 2 tokens. After
    num_layers independent post-norm encoder layers (batch_first), the class token is
    classified by a linear layer."""

    def __init__(self, num_classes, embed_dim, num_heads, num_layers=6,
                 mlp_ratio=4.0, patch_size=4, in_channels=3, image_size=32):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, embed_dim, kernel_size=patch_size, stride=patch_size)
        num_patches = (image_size // patch_size) ** 2
        self.linear_proj = nn.Linear(embed_dim * num_patches, embed_dim)
        self.transformer_layers = nn.ModuleList([
            nn.TransformerEncoderLayer(d_model=embed_dim, nhead=num_heads,
                                       dim_feedforward=int(embed_dim * mlp_ratio),
                                       dropout=0.0, batch_first=True)
            for _ in range(num_layers)
        ])
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.fc_out = nn.Linear(embed_dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_channels, image_size, image_size) float32.

        Returns:
            (batch_size, num_classes) float32 logits.
        """
        b = x.shape[0]
        x = self.conv1(x).flatten(1)                        # (B, embed_dim * num_patches)
        x = self.linear_proj(x)                             # (B, embed_dim)
        x = torch.cat((self.cls_token.expand(b, -1, -1), x.unsqueeze(1)), dim=1)  # (B, 2, E)
        for layer in self.transformer_layers:
            x = layer(x)
        return self.fc_out(x[:, 0])


batch_size = 10
in_channels = 3
image_size = 32
num_classes = 1000
embed_dim = 128
num_heads = 4


def get_inputs():
    return [torch.rand(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [num_classes, embed_dim, num_heads]
