"""The prompt a model gets for one problem: a pure function of the problem's source and the config.

Parts, in order: the task, a worked example (a small Model and a ModelNew built with load_inline),
the problem's source (for input-blind problems only the Model class and imports), a precision note
for fp16/bf16, an optional hardware note, and the answer format. Snapshot tests pin the text.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..problems.load import stripped_source

TASK = """\
You are optimising a PyTorch model for a GPU. Below is a reference module `Model`. Write a module
`ModelNew` that computes the same outputs as `Model` for every valid input, faster. Replace the
operators you choose with custom GPU kernels (CUDA C++ compiled with
`torch.utils.cpp_extension.load_inline`, or Triton); you may fuse operators, change algorithms
(for example an online softmax) and keep the rest in PyTorch.

Rules:
- `ModelNew` takes the same constructor arguments and forward arguments as `Model`, and creates its
  parameters in the same order with the same shapes, so that it gets the same initial weights.
- Correctness is checked on inputs you do not see: several seeded random draws, scaled copies and
  sign-flipped copies. Code that relies on the values of the example inputs (their sign, range or
  contents) fails.
- Time is measured with all GPU work included (every stream), against PyTorch with TF32 enabled."""

EXAMPLE = '''\
Here is an example. The reference adds two tensors:

```python
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


def get_inputs():
    return [torch.randn(4096, 4096).cuda(), torch.randn(4096, 4096).cuda()]


def get_init_inputs():
    return []
```

An answer with a CUDA kernel compiled inline:

```python
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

__global__ void add_kernel(const float* a, const float* b, float* out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

torch::Tensor add(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "inputs must be CUDA tensors");
    auto a_c = a.contiguous();
    auto b_c = b.contiguous();
    auto out = torch::empty_like(a_c);
    int64_t n = a_c.numel();
    int threads = 256;
    int blocks = (int)((n + threads - 1) / threads);
    add_kernel<<<blocks, threads>>>(a_c.data_ptr<float>(), b_c.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

cpp_declaration = "torch::Tensor add(torch::Tensor a, torch::Tensor b);"

add_extension = load_inline(
    name="add_extension",
    cpp_sources=cpp_declaration,
    cuda_sources=cuda_source,
    functions=["add"],
)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return add_extension.add(a, b)
```'''

PRECISION_NOTES = {
    "fp16": "float16",
    "bf16": "bfloat16",
}

PRECISION_NOTE = """\
Precision: the floating-point inputs and weights are cast to {dtype} before your module runs, and
outputs are compared with a tolerance of 1e-2 (absolute and relative). Accumulate reductions and dot
products in float32, and make your kernels accept {dtype} tensors."""

# Short descriptions of common GPUs; any other hardware_note value is used verbatim.
KNOWN_GPUS = {
    "H200": "NVIDIA H200 (Hopper, compute capability 9.0, 141 GB HBM3e, 50 MB L2)",
    "H100": "NVIDIA H100 (Hopper, compute capability 9.0, 80 GB HBM3, 50 MB L2)",
    "A100": "NVIDIA A100 (Ampere, compute capability 8.0, 40 or 80 GB HBM2e, 40 MB L2)",
    "L40S": "NVIDIA L40S (Ada Lovelace, compute capability 8.9, 48 GB GDDR6, 96 MB L2)",
    "B200": "NVIDIA B200 (Blackwell, compute capability 10.0, 180 GB HBM3e)",
}

HARDWARE_NOTE = "Hardware: the kernels run on {gpu}; you may use features of this architecture."

ANSWER_FORMAT = """\
Answer with the complete Python file of `ModelNew` in a single ```python code block: imports, kernel
sources and the class, runnable as is. You may explain your approach before the block; do not add
test code, get_inputs or get_init_inputs to it."""


@dataclass(frozen=True)
class PromptOptions:
    precision: str = "fp32"
    hardware_note: str | None = None


def problem_section(source: str, input_blind: bool) -> str:
    if input_blind:
        return ("The reference (how it is called and its input shapes are described in the docstrings; "
                "the inputs it is tested with are not shown):\n\n"
                f"```python\n{stripped_source(source).strip()}\n```")
    return f"The reference to optimise:\n\n```python\n{source.strip()}\n```"


def precision_section(precision: str) -> str | None:
    dtype = PRECISION_NOTES.get(precision)
    return PRECISION_NOTE.format(dtype=dtype) if dtype else None


def hardware_section(hardware_note: str | None) -> str | None:
    if not hardware_note:
        return None
    return HARDWARE_NOTE.format(gpu=KNOWN_GPUS.get(hardware_note.upper(), hardware_note))


def build_prompt(source: str, input_blind: bool, options: PromptOptions) -> str:
    sections = [TASK, EXAMPLE, problem_section(source, input_blind),
                precision_section(options.precision), hardware_section(options.hardware_note), ANSWER_FORMAT]
    return "\n\n".join(s for s in sections if s) + "\n"
