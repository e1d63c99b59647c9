import torch
import torch.nn as nn


class Model(nn.Module):
    """An "exclusive" cumulative sum along `dim`, kept exactly as this benchmark version
    defines it (including its off-by-one):

    1. prepend a zero slice to x along `dim` (length grows by one);
    2. drop the LAST ENTRY ALONG DIMENSION 0 (`[:-1]`), not the last entry along `dim`;
    3. take the inclusive cumulative sum along `dim`.

    For dim=1 this yields, for each of the first batch_size - 1 rows, the exclusive prefix
    sums followed by the row's full sum; the last row of x is discarded.
    """

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, length) float32.

        Returns:
            (batch_size - 1, length + 1) float32 (for dim=1); row r is
            [0, x[r, 0], x[r, 0] + x[r, 1], ..., sum(x[r, :])].
        """
        zeros = torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim))
        padded = torch.cat((zeros, x), dim=self.dim)[:-1]
        return torch.cumsum(padded, dim=self.dim)


batch_size = 32768
length = 32768
dim = 1


def get_inputs():
    return [torch.rand(batch_size, length)]


def get_init_inputs():
    return [dim]
