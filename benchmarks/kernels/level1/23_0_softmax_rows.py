# Correct: one block per row; max, sum of exp, then normalise (three passes over the row).
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__device__ float block_reduce(float v, bool is_max) {
    __shared__ float shared[32];
    for (int o = 16; o > 0; o >>= 1) {
        float other = __shfl_xor_sync(0xffffffff, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = (threadIdx.x < blockDim.x / 32) ? shared[lane] : (is_max ? -INFINITY : 0.f);
    if (warp == 0)
        for (int o = 16; o > 0; o >>= 1) {
            float other = __shfl_xor_sync(0xffffffff, v, o);
            v = is_max ? fmaxf(v, other) : v + other;
        }
    if (threadIdx.x == 0) shared[0] = v;
    __syncthreads();
    float result = shared[0];
    __syncthreads();
    return result;
}

__global__ void softmax_rows(const float* x, float* y, long cols) {
    const float* row = x + blockIdx.x * cols;
    float* out = y + blockIdx.x * cols;
    float m = -INFINITY;
    for (long i = threadIdx.x; i < cols; i += blockDim.x) m = fmaxf(m, row[i]);
    m = block_reduce(m, true);
    float s = 0.f;
    for (long i = threadIdx.x; i < cols; i += blockDim.x) s += __expf(row[i] - m);
    s = block_reduce(s, false);
    float inv = 1.f / s;
    for (long i = threadIdx.x; i < cols; i += blockDim.x) out[i] = __expf(row[i] - m) * inv;
}

torch::Tensor softmax(torch::Tensor x) {
    x = x.contiguous();
    auto y = torch::empty_like(x);
    softmax_rows<<<x.size(0), 1024, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.size(1));
    return y;
}
"""

ext = load_inline(name="softmax_rows", cpp_sources="torch::Tensor softmax(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["softmax"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.softmax(x)
