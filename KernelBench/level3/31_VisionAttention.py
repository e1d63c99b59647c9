import torch
import torch.nn as nn


class Model(nn.Module):
    """Self-attention over the pixels of a feature map: every pixel is a token whose
    embedding is its channel vector. Multi-head attention (q = k = v), residual add,
    LayerNorm, and reshape back to the input layout."""

    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(embed_dim, num_heads)  # batch_first=False: (L, B, E)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, embed_dim, image_height, image_width) float32.

        Returns:
            (batch_size, embed_dim, image_height, image_width) float32.
        """
        b, c, h, w = x.shape
        seq = x.view(b, c, h * w).permute(2, 0, 1)          # (H*W, B, C)
        out, _ = self.attn(seq, seq, seq)
        out = self.norm(out + seq)
        return out.permute(1, 2, 0).reshape(b, c, h, w)


batch_size = 2
embed_dim = 128
num_heads = 4
image_height = 128
image_width = 128


def get_inputs():
    return [torch.rand(batch_size, embed_dim, image_height, image_width)]


def get_init_inputs():
    return [embed_dim, num_heads]
