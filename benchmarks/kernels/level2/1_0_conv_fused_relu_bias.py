# Correct: PyTorch's convolution, then one fused CUDA pass for ReLU + per-channel bias.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_bias(float* y, const float* bias, long n, long plane, int channels) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        int c = (int)((i / plane) % channels);
        y[i] = fmaxf(y[i], 0.f) + bias[c];
    }
}

torch::Tensor relu_bias_(torch::Tensor y, torch::Tensor bias) {
    long plane = y.size(2) * y.size(3);
    relu_bias<<<132 * 16, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        y.data_ptr<float>(), bias.data_ptr<float>(), y.numel(), plane, (int)y.size(1));
    return y;
}
"""

ext = load_inline(name="relu_bias", cpp_sources="torch::Tensor relu_bias_(torch::Tensor y, torch::Tensor bias);",
                  cuda_sources=cuda_source, functions=["relu_bias_"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return ext.relu_bias_(self.conv(x).contiguous(), self.bias.contiguous())
