import torch
import torch.nn as nn
import torch.nn.functional as F


def segsum(x):
    """Segment sums along the last axis: out[..., i, j] = sum(x[..., j+1 : i+1]) for j <= i,
    -inf above the diagonal. Shape (..., T) -> (..., T, T)."""
    t = x.shape[-1]
    cs = torch.cumsum(x, dim=-1)
    out = cs[..., :, None] - cs[..., None, :]
    keep = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))
    return out.masked_fill(~keep, float("-inf"))


class Model(nn.Module):
    """Mamba-2 structured state-space duality (SSD) scan, chunked form, returning the output sequence Y.

    Per head h the recurrence is state_t = exp(A_t) * state_{t-1} + B_t x_t^T and
    y_t = state_t C_t. The sequence is cut into chunks of block_len: within a chunk the
    output is computed as masked attention with decay weights exp(segsum(A)); chunk-end
    states are then propagated across chunks (starting from a zero state) with decays
    exp(segsum(chunk totals of A)).

    A, B and C are parameters drawn from randn with full, batch-dependent shapes
    (A is not constrained to be negative).
    """

    def __init__(self, batch_size, seq_length, n_heads, d_head, d_state, block_len):
        super().__init__()
        assert seq_length % block_len == 0
        self.batch_size = batch_size
        self.seq_length = seq_length
        self.n_heads = n_heads
        self.d_head = d_head
        self.d_state = d_state
        self.block_len = block_len
        self.A = nn.Parameter(torch.randn(batch_size, seq_length, n_heads))
        self.B = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))
        self.C = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))

    def forward(self, X: torch.Tensor, initial_states: torch.Tensor = None) -> torch.Tensor:
        """
        Args:
            X: (batch_size, seq_length, n_heads, d_head) float32.
            initial_states: optional (batch_size, 1, n_heads, d_head, d_state) state before
                the first chunk; zeros when omitted.

        Returns:
            (batch_size, seq_length, n_heads, d_head) float32: Y.
        """
        bsz, length = X.shape[0], X.shape[1]
        nc, l = length // self.block_len, self.block_len
        # Split the sequence axis into (chunk, position-in-chunk).
        x = X.reshape(bsz, nc, l, *X.shape[2:])                       # (b, c, l, h, p)
        a = self.A.reshape(bsz, nc, l, -1).permute(0, 3, 1, 2)        # (b, h, c, l)
        b = self.B.reshape(bsz, nc, l, *self.B.shape[2:])             # (b, c, l, h, n)
        c = self.C.reshape(bsz, nc, l, *self.C.shape[2:])             # (b, c, l, h, n)
        a_cumsum = torch.cumsum(a, dim=-1)

        # Intra-chunk (diagonal-block) output.
        decay = torch.exp(segsum(a))                                  # (b, h, c, l, l)
        y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", c, b, decay, x)

        # State at the end of each chunk, from that chunk's inputs only.
        decay_states = torch.exp(a_cumsum[..., -1:] - a_cumsum)       # (b, h, c, l)
        states = torch.einsum("bclhn,bhcl,bclhp->bchpn", b, decay_states, x)

        # Carry states across chunks.
        if initial_states is None:
            initial_states = torch.zeros_like(states[:, :1])
        states = torch.cat([initial_states, states], dim=1)          # (b, c+1, h, p, n)
        decay_chunk = torch.exp(segsum(F.pad(a_cumsum[..., -1], (1, 0))))  # (b, h, c+1, c+1)
        states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)   # state after chunk z-1
        # Inter-chunk part: contribution of the carried state to each position.
        y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", c, states[:, :-1], torch.exp(a_cumsum))
        y = y_diag + y_off
        return y.reshape(bsz, nc * self.block_len, y.shape[3], y.shape[4])


batch_size = 2048
seq_length = 128
n_heads = 8
d_head = 64
d_state = 16
block_len = 64


def get_inputs():
    return [torch.rand(batch_size, seq_length, n_heads, d_head)]


def get_init_inputs():
    return [batch_size, seq_length, n_heads, d_head, d_state, block_len]
