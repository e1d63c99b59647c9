# Correct: a Triton row softmax for rows longer than a block (393216 columns): one program per row,
# an online max and sum over blocks of the row, then a second pass that writes exp(x - max) / sum.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row_start = tl.program_id(0).to(tl.int64) * cols
    offsets = tl.arange(0, BLOCK)
    running_max = tl.full([BLOCK], -float("inf"), tl.float32)
    running_sum = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        mask = start + offsets < cols
        x = tl.load(x_ptr + row_start + start + offsets, mask=mask, other=-float("inf"))
        new_max = tl.maximum(running_max, x)
        # Lanes that have seen only padding keep max -inf; exp(-inf - -inf) would be NaN there.
        rescale = tl.where(new_max == -float("inf"), 0.0, tl.exp(running_max - new_max))
        running_sum = running_sum * rescale + tl.where(mask, tl.exp(x - new_max), 0.0)
        running_max = new_max
    row_max = tl.max(running_max, axis=0)
    total = tl.sum(running_sum * tl.where(running_max == -float("inf"), 0.0, tl.exp(running_max - row_max)), axis=0)
    inverse = 1.0 / total
    for start in range(0, cols, BLOCK):
        mask = start + offsets < cols
        x = tl.load(x_ptr + row_start + start + offsets, mask=mask, other=-float("inf"))
        tl.store(out_ptr + row_start + start + offsets, tl.exp(x - row_max) * inverse, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        rows, cols = x.shape
        softmax_rows[(rows,)](x, out, cols, BLOCK=4096, num_warps=8)
        return out
