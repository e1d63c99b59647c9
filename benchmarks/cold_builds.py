"""A cold run of many distinct load_inline kernels of one problem: what a fresh build cache costs.

    python benchmarks/cold_builds.py [--kernels 18] [--passes nopch cold pch] [--placements module lazy]
                                     [--cpu-workers 16] [--out f.json]

With --family cpu the kernels are C++ ReLUs of the tiny example problem (a CPU-only check of the same
passes, and of --eval-mode ray against local). Otherwise they are tiled SGEMMs for level 1 problem 1 (4096x4096 matmul), each a distinct source (tile size,
unroll depth, shared-memory padding, C++ flags), all correct. Each pass empties the build cache and runs
scripts/eval_from_generations.py with build_cache=True (builds pipelined with evaluation):
  nopch  torch_pch=False: every main.cpp reads torch/extension.h;
  cold   torch_pch=True with no header made yet: the first run on a machine (the header is made beside
         the builds; builds that start before it is ready read the header);
  pch    torch_pch=True with the toolchain's header kept: every later cold run on this machine.
Per pass it prints the wall time, verdicts, the kernels' own timed GPU seconds, and from each build's
.ninja_log the seconds of its main.cpp (host C++) and cuda.cu (nvcc) compiles. With --placements module
lazy, the same sources build at module level and lazily in their first call: the build phase must find
the lazy builds too (the two wall times within 1.2x of each other; docs/evaluation.md).
"""

import argparse
import itertools
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TEMPLATE = r'''# Tiled SGEMM variant {index}: tile {tile}, unroll {unroll!r} (empty: all), padding {pad}, C++ flags {cflags}.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int TILE = {tile};

__global__ void sgemm(const float* A, const float* B, float* C, int M, int N, int K) {{
    __shared__ float As[TILE][TILE + {pad}];
    __shared__ float Bs[TILE][TILE + {pad}];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < K; t += TILE) {{
        As[threadIdx.y][threadIdx.x] = (row < M && t + threadIdx.x < K) ? A[(long)row * K + t + threadIdx.x] : 0.f;
        Bs[threadIdx.y][threadIdx.x] = (col < N && t + threadIdx.y < K) ? B[(long)(t + threadIdx.y) * N + col] : 0.f;
        __syncthreads();
        #pragma unroll {unroll}
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }}
    if (row < M && col < N) C[(long)row * N + col] = acc;
}}

torch::Tensor matmul(torch::Tensor A, torch::Tensor B) {{
    A = A.contiguous(); B = B.contiguous();
    int M = A.size(0), K = A.size(1), N = B.size(1);
    auto C = torch::empty({{M, N}}, A.options());
    dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    sgemm<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(A.data_ptr<float>(), B.data_ptr<float>(),
                                                               C.data_ptr<float>(), M, N, K);
    return C;
}}
"""

{placement}'''


BUILD_CALL = ('load_inline(name="sgemm_v{index}", cpp_sources="torch::Tensor matmul(torch::Tensor A, torch::Tensor B);", '
              'cuda_sources=cuda_source, functions=["matmul"], extra_cflags={cflags!r}, extra_cuda_cflags=["-O3"])')

# Where a kernel builds its extension, as models write it: the same source and build call each time.
PLACEMENTS = {
    "module": """ext = {build}


class ModelNew(nn.Module):
    def forward(self, A, B):
        return ext.matmul(A, B)
""",
    "init": """class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = {build}

    def forward(self, A, B):
        return self.ext.matmul(A, B)
""",
    "lazy": """_ext = None


def _extension():
    global _ext
    if _ext is None:
        try:
            _ext = {build}
        except Exception as error:  # fall back to PyTorch when the build fails
            print(f"sgemm build failed, using torch.matmul: {{error}}")
            _ext = False
    return _ext


class ModelNew(nn.Module):
    def forward(self, A, B):
        ext = _extension()
        return ext.matmul(A, B) if ext else torch.matmul(A, B)
""",
}


CPU_TEMPLATE = r'''# C++ ReLU variant {index}: {loop}, C++ flags {cflags}.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <algorithm>

torch::Tensor relu(torch::Tensor x) {{
    auto input = x.contiguous();
    auto out = torch::empty_like(input);
    const float* src = input.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    const int64_t n = input.numel();
    {body}
    return out;
}}
"""

ext = load_inline(name="relu_v{index}", cpp_sources=source, functions=["relu"], extra_cflags={cflags!r})


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
'''
CPU_LOOPS = {
    "a ternary loop": "for (int64_t i = 0; i < n; ++i) dst[i] = src[i] > 0.f ? src[i] : 0.f;",
    "std::max": "for (int64_t i = 0; i < n; ++i) dst[i] = std::max(src[i], 0.f);",
    "a loop unrolled by 4": "int64_t i = 0;\n    for (; i + 4 <= n; i += 4)\n        for (int j = 0; j < 4; ++j) "
                            "dst[i + j] = src[i + j] > 0.f ? src[i + j] : 0.f;\n    for (; i < n; ++i) "
                            "dst[i] = src[i] > 0.f ? src[i] : 0.f;",
    "std::transform": "std::transform(src, src + n, dst, [](float v) { return v > 0.f ? v : 0.f; });",
}


def kernel_sources(count: int, family: str = "cuda", placement: str = "module") -> list[str]:
    """`count` distinct sources: cuda, SGEMMs for level 1 problem 1 (at most 24: 2 tiles x 3 unroll
    depths x 2 paddings x 2 flag sets) whose extension is built where `placement` says; cpu, C++ ReLUs
    for the tiny example problem 1 (at most 8)."""
    if family == "cpu":
        variants = list(itertools.product(CPU_LOOPS, ([], ["-O3"])))
        render = lambda i, v: CPU_TEMPLATE.format(index=i, loop=v[0], body=CPU_LOOPS[v[0]], cflags=v[1])  # noqa: E731
    else:
        variants = list(itertools.product((32, 16), ("4", "8", ""), (1, 0), ([], ["-O3"])))
        def render(i, v):
            build = BUILD_CALL.format(index=i, cflags=v[3])
            return TEMPLATE.format(index=i, tile=v[0], unroll=v[1], pad=v[2], cflags=v[3],
                                   placement=PLACEMENTS[placement].format(build=build))
    if not 1 <= count <= len(variants):
        raise SystemExit(f"error: --kernels must be 1..{len(variants)} for the {family} family")
    return [render(i, v) for i, v in enumerate(variants[:count])]


def ninja_seconds(build_root: Path) -> dict:
    """Seconds of each compile step (main.o, cuda.cuda.o, the link) over every build's .ninja_log."""
    steps: dict = {}
    for log in build_root.rglob(".ninja_log"):
        for line in log.read_text().splitlines()[1:]:
            start, end, _, target, _ = line.split("\t")
            name = "main.cpp" if target == "main.o" else "cuda.cu" if target.endswith(".cuda.o") else "link"
            steps.setdefault(name, []).append((int(end) - int(start)) / 1000)
    return {name: {"count": len(v), "median": sorted(v)[len(v) // 2], "max": max(v)} for name, v in steps.items()}


def run_pass(name: str, args, sources: list[str], placement: str) -> dict:
    run_dir = args.runs_dir / "cold_builds"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    for sid, source in enumerate(sources):
        (run_dir / f"level_1_problem_1_sample_{sid}_kernel.py").write_text(source)
    keep_header = name == "pch"
    for entry in list(args.build_dir.iterdir()) if args.build_dir.is_dir() else []:
        if not (keep_header and entry.name == "pch"):
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    command = [sys.executable, str(ROOT / "scripts" / "eval_from_generations.py"), "run_name=cold_builds",
               f"runs_dir={args.runs_dir}", "level=1", f"num_samples={len(sources)}", "subset=[1,1]",
               "use_hidden_tests=True", "build_cache=True", "gpu_arch=[Hopper]", f"timeout={args.timeout}",
               f"kernel_eval_build_dir={args.build_dir}", f"num_cpu_workers={args.cpu_workers}",
               f"eval_mode={args.eval_mode}", f"torch_pch={name != 'nopch'}", f"device={args.device}"]
    if args.ray_address:
        command.append(f"ray_address={args.ray_address}")
    if args.family == "cpu":  # the tiny example problems, small enough for a CPU
        command += [f"problems_dir={ROOT / 'examples' / 'tiny' / 'KernelBench'}",
                    f"hidden_tests_dir={ROOT / 'examples' / 'tiny' / 'hidden_tests'}", "device=cpu"]
    started = time.monotonic()
    subprocess.run(command, check=True, stdout=sys.stderr)
    wall = time.monotonic() - started
    records = json.loads((run_dir / "eval_results_hidden.json").read_text())
    statuses: dict = {}
    for record in records.values():
        statuses[record["eval_status"]] = statuses.get(record["eval_status"], 0) + 1
    runtimes = sorted(r["runtime"] for r in records.values() if r["eval_status"] == "correct")
    eval_seconds = [r["metadata"].get("eval_seconds") or 0 for r in records.values()]
    return {"pass": name, "placement": placement, "kernels": len(sources), "wall_seconds": round(wall, 1), "statuses": statuses,
            "eval_seconds_sum": round(sum(eval_seconds), 1), "timed_gpu_seconds_sum": round(sum(
                sum(r["metadata"].get("judge_trials_ms", {}).get("reported") or []) for r in records.values()) / 1000, 2),
            "runtime_ms": {"min": runtimes[0], "max": runtimes[-1]} if runtimes else None,
            "compile_seconds": ninja_seconds(args.build_dir), "cpu_workers": args.cpu_workers,
            "eval_mode": args.eval_mode}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=18)
    parser.add_argument("--family", choices=("cuda", "cpu"), default="cuda",
                        help="cuda: SGEMMs of level 1 problem 1; cpu: C++ ReLUs of the tiny example problem")
    parser.add_argument("--passes", nargs="+", default=["nopch", "cold", "pch"], choices=("nopch", "cold", "pch"))
    parser.add_argument("--placements", nargs="+", default=["module"], choices=tuple(PLACEMENTS),
                        help="cuda family: where each kernel builds its extension (module level, __init__, "
                             "lazily in its first call inside try/except); one set of passes per placement")
    parser.add_argument("--cpu-workers", type=int, default=16)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--eval-mode", choices=("local", "ray"), default="local")
    parser.add_argument("--ray-address", default=None, help="eval_mode=ray: auto or host:port (default: a local Ray)")
    parser.add_argument("--device", default="auto", help="auto or cuda (the cpu family always runs on the CPU)")
    parser.add_argument("--runs-dir", type=Path, default=Path("/tmp/kbv_cold_runs"))
    parser.add_argument("--build-dir", type=Path, default=Path("/tmp/kbv_cold_builds"))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    results = []
    for placement, name in itertools.product(args.placements, args.passes):
        sources = kernel_sources(args.kernels, args.family, placement)
        results.append(run_pass(name, args, sources, placement))  # saved after each pass: a cut-short run keeps it
        print(json.dumps(results[-1]))
        sys.stdout.flush()
        if args.out:
            args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
