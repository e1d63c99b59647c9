import torch
import torch.nn as nn


class Model(nn.Module):
    """Vision Transformer classifier (post-norm encoder, class token, MLP head).

    Two quirks are part of the problem and must be kept:
    - patch tokens are made by unfolding the image into (C, H/p, W/p, p, p) and reshaping
      straight to (B, num_patches, C*p*p): each token is the next C*p*p contiguous values
      in (channel, patch-row, patch-col, py, px) order, not one RGB patch;
    - the encoder layers use the default batch_first=False on a (B, tokens, dim) tensor,
      so attention runs across the batch axis (tokens act as the batch).
    """

    def __init__(self, image_size, patch_size, num_classes, dim, depth, heads, mlp_dim,
                 channels=3, dropout=0.0, emb_dropout=0.0):
        super().__init__()
        assert image_size % patch_size == 0
        num_patches = (image_size // patch_size) ** 2
        patch_dim = channels * patch_size ** 2
        self.patch_size = patch_size
        self.pos_embedding = nn.Parameter(torch.randn(1, num_patches + 1, dim))
        self.patch_to_embedding = nn.Linear(patch_dim, dim)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.dropout = nn.Dropout(emb_dropout)
        layer = nn.TransformerEncoderLayer(d_model=dim, nhead=heads,
                                           dim_feedforward=mlp_dim, dropout=dropout)
        # nn.TransformerEncoder deep-copies `layer`: all layers start with the same weights.
        self.transformer = nn.TransformerEncoder(layer, num_layers=depth,
                                                 enable_nested_tensor=False)
        self.mlp_head = nn.Sequential(
            nn.Linear(dim, mlp_dim),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(mlp_dim, num_classes),
        )

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        """
        Args:
            img: (batch_size, channels, image_size, image_size) float32.

        Returns:
            (batch_size, num_classes) float32 logits.
        """
        p = self.patch_size
        b = img.shape[0]
        x = img.unfold(2, p, p).unfold(3, p, p)          # (B, C, H/p, W/p, p, p)
        x = x.reshape(b, -1, p * p * img.shape[1])       # raw chunks, no channel move
        x = self.patch_to_embedding(x)
        x = torch.cat((self.cls_token.expand(b, -1, -1), x), dim=1)
        x = x + self.pos_embedding
        x = self.dropout(x)
        x = self.transformer(x)                          # sequence axis = batch axis
        return self.mlp_head(x[:, 0])


batch_size = 2
image_size = 224
patch_size = 16
num_classes = 10
dim = 512
depth = 6
heads = 8
mlp_dim = 2048
channels = 3
dropout = 0.0
emb_dropout = 0.0


def get_inputs():
    return [torch.rand(batch_size, channels, image_size, image_size)]


def get_init_inputs():
    return [image_size, patch_size, num_classes, dim, depth, heads, mlp_dim,
            channels, dropout, emb_dropout]
