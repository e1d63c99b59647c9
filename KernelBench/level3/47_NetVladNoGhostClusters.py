import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """NetVLAD pooling without ghost clusters (ghost_clusters = 0).

    Each of the N local features of a sample is soft-assigned to the clusters
    (x @ clusters -> BatchNorm1d -> softmax over clusters). The residual aggregation
    vlad[:, d, k] = sum_n a[n, k] x[n, d] - (sum_n a[n, k]) clusters2[d, k] is
    L2-normalised over the feature axis d (intra-normalisation), flattened in (d, k)
    order and L2-normalised again per sample.
    """

    def __init__(self, cluster_size, feature_size, ghost_clusters):
        super().__init__()
        self.feature_size = feature_size
        self.cluster_size = cluster_size
        self.ghost_clusters = ghost_clusters
        init_sc = 1 / math.sqrt(feature_size)
        total = cluster_size + ghost_clusters
        self.clusters = nn.Parameter(init_sc * torch.randn(feature_size, total))
        self.batch_norm = nn.BatchNorm1d(total)
        self.clusters2 = nn.Parameter(init_sc * torch.randn(1, feature_size, cluster_size))
        self.out_dim = cluster_size * feature_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, num_features, feature_size) float32: num_features local
               descriptors of size feature_size per sample.

        Returns:
            (batch_size, cluster_size * feature_size) float32, every row of unit L2 norm.
        """
        n = x.shape[1]
        x = x.reshape(-1, self.feature_size)                    # (B*N, D)
        assignment = torch.matmul(x, self.clusters)             # (B*N, K+G)
        assignment = self.batch_norm(assignment)
        assignment = F.softmax(assignment, dim=1)
        assignment = assignment[:, :self.cluster_size]          # drop ghost clusters
        assignment = assignment.view(-1, n, self.cluster_size)  # (B, N, K)
        a = assignment.sum(dim=1, keepdim=True) * self.clusters2  # (B, D, K)

        x = x.view(-1, n, self.feature_size)                    # (B, N, D)
        vlad = torch.matmul(assignment.transpose(1, 2), x)      # (B, K, D)
        vlad = vlad.transpose(1, 2) - a                         # (B, D, K)
        vlad = F.normalize(vlad, p=2, dim=1)                    # intra-normalisation
        vlad = vlad.reshape(-1, self.out_dim)                   # (B, D*K)
        return F.normalize(vlad, p=2, dim=1)


batch_size = 2048
num_features = 100
num_clusters = 16
feature_size = 512
ghost_clusters = 0


def get_inputs():
    return [torch.rand(batch_size, num_features, feature_size)]


def get_init_inputs():
    return [num_clusters, feature_size, ghost_clusters]
