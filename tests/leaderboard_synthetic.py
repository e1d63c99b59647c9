"""Synthetic runs for the leaderboard's size and speed test: realistic record shapes, random outcomes."""

from __future__ import annotations

import json
import random
from pathlib import Path

CASES = [f"trial_{i}" for i in range(5)] + ["D1", "D2", "D3", "D4"]
WORDS = ("block thread tile warp smem acc row col stride offset lane vec load store fused scale bias "
         "input output weight grad norm mean var eps alpha beta gamma index mask").split()


def kernel_source(rng: random.Random, pid: int, sid: int) -> str:
    """About 4 kB of plausible kernel code; names and constants vary so it does not compress to nothing."""
    lines = ["import torch", "import torch.nn as nn", "from torch.utils.cpp_extension import load_inline", "",
             'cuda_source = r"""', "#include <torch/extension.h>", "#include <cuda_runtime.h>"]
    for block in range(6):
        names = [f"{rng.choice(WORDS)}_{rng.randrange(1000)}" for _ in range(6)]
        lines += [f"__global__ void kernel_{pid}_{sid}_{block}(const float* {names[0]}, float* {names[1]}, int n) {{",
                  f"    int {names[2]} = blockIdx.x * blockDim.x + threadIdx.x;",
                  f"    float {names[3]} = {rng.random():.6f}f * {names[0]}[{names[2]} % n];",
                  f"    for (int {names[4]} = 0; {names[4]} < {rng.randrange(2, 64)}; ++{names[4]}) "
                  f"{{ {names[3]} = fmaf({names[3]}, {rng.random():.5f}f, {rng.random():.5f}f); }}",
                  f"    if ({names[2]} < n) {names[1]}[{names[2]}] = {names[3]} + {rng.random():.4f}f;",
                  "}", ""]
    lines += ['"""', "", "class ModelNew(nn.Module):", "    def __init__(self, *args):",
              "        super().__init__()", "", "    def forward(self, *inputs):",
              f"        return inputs[0] * {rng.random():.4f}", ""]
    return "\n".join(lines)


def record(rng: random.Random, pid: int, sid: int, level: int, problem: str, baseline_ms: float,
           hidden: bool, outcome: str) -> dict:
    """One evaluation record; outcome is correct, fails_hidden, incorrect or compile_error."""
    compiled = outcome != "compile_error"
    correct = outcome == "correct" or (outcome == "fails_hidden" and not hidden)
    cases = []
    if compiled:
        for name in CASES if hidden else CASES[:5]:
            failing = not correct and (name == "trial_0" if outcome == "incorrect" else name == "D4")
            cases.append({"case": name, "seed": 42000, "scale": 1.0, "passed": not failing,
                          "max_abs_diff": rng.uniform(0.5, 4) if failing else rng.uniform(0, 9e-4),
                          "mean_abs_diff": rng.uniform(0, 1e-5), "mismatches": 0, "nonfinite": 0})
            if failing:
                break
    runtime = baseline_ms / rng.lognormvariate(0, 0.6) if correct else -1.0
    status = "correct" if correct else ("compile_error" if not compiled else "incorrect")
    failed = cases[-1]["case"] if cases and not correct else None
    return {"sample_id": sid, "problem_id": pid, "level": level, "problem": problem, "compiled": compiled,
            "correctness": correct, "eval_status": status,
            "metadata": {"cases": cases, "failed_case": failed, "hardware": "NVIDIA H200", "device": "cuda:0",
                         "precision": "fp32", "tf32_mode": "default", "atol": 1e-3, "rtol": 1e-3, "seed": 42},
            "runtime": runtime,
            "runtime_stats": {"mean": runtime, "median": runtime, "std": runtime / 50, "min": runtime * 0.97,
                              "max": runtime * 1.1, "num_trials": 100} if correct else {},
            "peak_memory": int(rng.uniform(0.5, 2.0) * 2**28) if correct else -1,
            "memory_stats": {}}


def write_synthetic(root: Path, models: int = 10, levels: dict | None = None, samples: int = 5,
                    seed: int = 0) -> dict:
    """runs/, timing/H200/{baseline_time_torch,baseline_time_torch_tf32}.json and a degenerate list."""
    levels = levels or {1: 100, 2: 100, 3: 50}
    rng = random.Random(seed)
    names = {level: {pid: f"{pid}_Problem{level}x{pid}.py" for pid in range(1, count + 1)}
             for level, count in levels.items()}
    baselines = {level: {pid: rng.uniform(0.01, 50.0) for pid in problems} for level, problems in names.items()}
    for name, factor in (("baseline_time_torch", 1.0), ("baseline_time_torch_tf32", 0.6)):
        content = {f"level{level}": {names[level][pid]: {"mean": ms * factor, "std": ms / 40, "min": ms * 0.98,
                                                          "max": ms * 1.05, "num_trials": 100, "hardware": "NVIDIA H200",
                                                          "device": "cuda:0", "peak_memory": 2**28}
                                     for pid, ms in problems.items()} for level, problems in baselines.items()}
        content["fingerprint"] = {"gpu": "NVIDIA H200", "torch": "2.13.0", "synthetic": True}
        path = root / "timing" / "H200" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content))
    (root / "degenerate.json").write_text(json.dumps({"level1": {"23": {"problem": names[1].get(23, "23_x.py"),
                                                                         "reason": "a constant passes"}}}))
    outcomes = ("correct", "correct", "fails_hidden", "incorrect", "compile_error")
    for model in range(models):
        for level, problems in names.items():
            run = root / "runs" / f"model{model}_level{level}_test"
            run.mkdir(parents=True, exist_ok=True)
            standard, hidden = {}, {}
            for pid, problem in problems.items():
                for sid in range(samples):
                    outcome = rng.choice(outcomes)
                    for store, is_hidden in ((standard, False), (hidden, True)):
                        store[f"{pid}_{sid}"] = record(rng, pid, sid, level, problem, baselines[level][pid],
                                                       is_hidden, outcome)
                    (run / f"level_{level}_problem_{pid}_sample_{sid}_kernel.py").write_text(
                        kernel_source(rng, pid, sid))
            (run / "eval_results.json").write_text(json.dumps(standard))
            (run / "eval_results_hidden.json").write_text(json.dumps(hidden))
    return {"runs_dir": root / "runs", "timing_dir": root / "timing", "degenerate_file": root / "degenerate.json"}
