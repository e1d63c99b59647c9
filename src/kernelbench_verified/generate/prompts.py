"""The prompt a model gets for one problem: a pure function of the problem's source and the config.

Parts, in order: the task, the worked examples of `prompt_option` in the language of `backend`
(zero_shot: none; one_shot: a small Model and a ModelNew built with load_inline, or with a Triton kernel;
few_shot adds a row softmax; cot asks for reasoning first), the problem's source (for input-blind problems only the Model class and imports), a precision note
for fp16/bf16, an optional hardware note, and the answer format. Snapshot tests pin the text.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..problems.load import stripped_source

TASK_TEMPLATE = """\
You are optimising a PyTorch model for a GPU. Below is a reference module `Model`. Write a module
`ModelNew` that computes the same outputs as `Model` for every valid input, faster. Replace the
operators you choose with {kernels}; you may fuse operators, change algorithms
(for example an online softmax) and keep the rest in PyTorch.

Rules:
- `ModelNew` takes the same constructor arguments and forward arguments as `Model`, and creates its
  parameters in the same order with the same shapes, so that it gets the same initial weights.
- Correctness is checked on inputs you do not see: several seeded random draws, scaled copies and
  sign-flipped copies. Code that relies on the values of the example inputs (their sign, range or
  contents) fails.
- Time is measured with all GPU work included (every stream), against PyTorch with TF32 enabled."""

ADD_REFERENCE = '''\
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

'''

EXAMPLE = ADD_REFERENCE + '''An answer with a CUDA kernel compiled inline:

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

SOFTMAX_REFERENCE = '''\
A second example. The reference is a softmax over the last dimension of a (4096, 8192) tensor:

```python
class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)
```

'''

SOFTMAX_EXAMPLE = SOFTMAX_REFERENCE + '''An answer with one block per row: the row's maximum and sum of exponentials are reduced in shared
memory, and the output is written in one more pass:

```python
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

__global__ void softmax_rows(const float* x, float* out, int64_t cols) {
    extern __shared__ float scratch[];
    const float* row = x + blockIdx.x * cols;
    float* dst = out + blockIdx.x * cols;
    float local_max = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) local_max = fmaxf(local_max, row[c]);
    scratch[threadIdx.x] = local_max;
    __syncthreads();
    for (int step = blockDim.x / 2; step > 0; step /= 2) {
        if (threadIdx.x < step) scratch[threadIdx.x] = fmaxf(scratch[threadIdx.x], scratch[threadIdx.x + step]);
        __syncthreads();
    }
    float row_max = scratch[0];
    __syncthreads();
    float local_sum = 0.f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) local_sum += __expf(row[c] - row_max);
    scratch[threadIdx.x] = local_sum;
    __syncthreads();
    for (int step = blockDim.x / 2; step > 0; step /= 2) {
        if (threadIdx.x < step) scratch[threadIdx.x] += scratch[threadIdx.x + step];
        __syncthreads();
    }
    float inverse = 1.f / scratch[0];
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) dst[c] = __expf(row[c] - row_max) * inverse;
}

torch::Tensor softmax(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2, "a 2-D CUDA tensor is expected");
    auto x_c = x.contiguous();
    auto out = torch::empty_like(x_c);
    int threads = 256;  // a power of two, for the tree reductions
    softmax_rows<<<x_c.size(0), threads, threads * sizeof(float)>>>(x_c.data_ptr<float>(), out.data_ptr<float>(),
                                                                   x_c.size(1));
    return out;
}
"""

softmax_extension = load_inline(
    name="softmax_extension",
    cpp_sources="torch::Tensor softmax(torch::Tensor x);",
    cuda_sources=cuda_source,
    functions=["softmax"],
)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax_extension.softmax(x)
```'''

COT_TEMPLATE = """\
Before the code, reason step by step, briefly, in this order:
1. Which operations dominate the time, and is each bound by memory traffic or by arithmetic?
2. Which of them can be fused so that intermediate results never go to global memory?
3. How the work maps onto {mapping}.
4. What could make the result differ from the reference (accumulation order and precision, edge
   sizes, large or negative values), and how the kernel avoids it.
For the example above the reasoning would be: one elementwise add over 16.8 million floats moves
3 x 64 MiB and does one addition per 12 bytes, so it is memory-bound; there is nothing to fuse; {example_mapping}; the
result is exact in float32, so it matches for every input."""

TRITON_EXAMPLE = ADD_REFERENCE + '''An answer with a Triton kernel:

```python
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, a + b, mask=mask)


def add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a, b = a.contiguous(), b.contiguous()
    out = torch.empty_like(a)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return add(a, b)
```'''

TRITON_SOFTMAX_EXAMPLE = SOFTMAX_REFERENCE + '''An answer with one program per row, the whole row in registers (a block of the next power of two of
the row length, masked), so the row is read once and written once:

```python
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * cols + offsets, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    numerator = tl.exp(x)
    tl.store(out_ptr + row * cols + offsets, numerator / tl.sum(numerator, axis=0), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    rows, cols = x.shape
    softmax_rows[(rows,)](x, out, cols, BLOCK=triton.next_power_of_2(cols), num_warps=8)
    return out


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax(x)
```'''


@dataclass(frozen=True)
class Backend:
    """What a backend changes in the prompt: the kernels asked for, the worked examples and how the
    reasoning guide speaks of mapping work onto the GPU."""

    kernels: str
    example: str
    softmax_example: str
    mapping: str
    example_mapping: str

    def task(self) -> str:
        return TASK_TEMPLATE.format(kernels=self.kernels)

    def cot_guide(self) -> str:
        return COT_TEMPLATE.format(mapping=self.mapping, example_mapping=self.example_mapping)


BACKENDS = {
    "cuda": Backend(
        kernels="custom GPU kernels (CUDA C++ compiled with\n`torch.utils.cpp_extension.load_inline`, or Triton)",
        example=EXAMPLE, softmax_example=SOFTMAX_EXAMPLE,
        mapping="threads and blocks (coalesced accesses, reductions, tiling, occupancy)",
        example_mapping="one\nthread per element with consecutive threads on consecutive elements gives coalesced loads"),
    "triton": Backend(
        kernels="custom GPU kernels written in Triton\n(`@triton.jit` functions that `ModelNew` launches)",
        example=TRITON_EXAMPLE, softmax_example=TRITON_SOFTMAX_EXAMPLE,
        mapping="program instances and blocks (block sizes, masks, reductions, num_warps)",
        example_mapping="one\nprogram per block of 1024 consecutive elements gives contiguous, coalesced loads"),
}

# prompt_option: the worked examples a prompt shows and any reasoning it asks for.
PROMPT_OPTIONS = {
    "zero_shot": lambda backend: (),  # upstream KernelBench's: the task and the problem alone
    "one_shot": lambda backend: (backend.example,),
    "few_shot": lambda backend: (backend.example, backend.softmax_example),
    "cot": lambda backend: (backend.example, backend.cot_guide()),
}

PRECISION_NOTES = {
    "fp16": "float16",
    "bf16": "bfloat16",
}

PRECISION_NOTE = """\
Precision: the floating-point inputs and weights are cast to {dtype} before your module runs, and
outputs are compared with a tolerance of 1e-2 (absolute and relative). Accumulate reductions and dot
products in float32, and make your kernels accept {dtype} tensors."""

# Common GPUs: a one-line name and a spec table from NVIDIA's data sheets (SXM parts; peak tensor
# throughput dense, without sparsity). Any other hardware_note value is used verbatim.
KNOWN_GPUS = {
    "H200": ("NVIDIA H200 (Hopper, compute capability 9.0)",
             {"SMs": "132", "memory": "141 GB HBM3e, 4.8 TB/s", "L2 cache": "50 MB",
              "shared memory per SM": "up to 228 KB", "peak FP32 (CUDA cores)": "67 TFLOPS",
              "peak TF32 / BF16 tensor cores": "495 / 989 TFLOPS"}),
    "H100": ("NVIDIA H100 (Hopper, compute capability 9.0)",
             {"SMs": "132", "memory": "80 GB HBM3, 3.35 TB/s", "L2 cache": "50 MB",
              "shared memory per SM": "up to 228 KB", "peak FP32 (CUDA cores)": "67 TFLOPS",
              "peak TF32 / BF16 tensor cores": "495 / 989 TFLOPS"}),
    "A100": ("NVIDIA A100 (Ampere, compute capability 8.0)",
             {"SMs": "108", "memory": "80 GB HBM2e, 2.0 TB/s", "L2 cache": "40 MB",
              "shared memory per SM": "up to 164 KB", "peak FP32 (CUDA cores)": "19.5 TFLOPS",
              "peak TF32 / BF16 tensor cores": "156 / 312 TFLOPS"}),
    "L40S": ("NVIDIA L40S (Ada Lovelace, compute capability 8.9)",
             {"SMs": "142", "memory": "48 GB GDDR6, 864 GB/s", "L2 cache": "96 MB",
              "shared memory per SM": "up to 100 KB", "peak FP32 (CUDA cores)": "91.6 TFLOPS",
              "peak TF32 / BF16 tensor cores": "183 / 362 TFLOPS"}),
    "B200": ("NVIDIA B200 (Blackwell, compute capability 10.0)", {"memory": "180 GB HBM3e"}),
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
    prompt_option: str = "one_shot"  # a key of PROMPT_OPTIONS
    backend: str = "cuda"  # a key of BACKENDS


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
    if hardware_note.upper() not in KNOWN_GPUS:
        return HARDWARE_NOTE.format(gpu=hardware_note)
    name, specs = KNOWN_GPUS[hardware_note.upper()]
    rows = "\n".join(f"| {key} | {value} |" for key, value in specs.items())
    return HARDWARE_NOTE.format(gpu=name) + "\n\n| | |\n| --- | --- |\n" + rows


def build_prompt(source: str, input_blind: bool, options: PromptOptions) -> str:
    backend = BACKENDS[options.backend]
    sections = [backend.task(), *PROMPT_OPTIONS[options.prompt_option](backend), problem_section(source, input_blind),
                precision_section(options.precision), hardware_section(options.hardware_note), ANSWER_FORMAT]
    return "\n\n".join(s for s in sections if s) + "\n"
