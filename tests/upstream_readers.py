"""Our own re-implementations of how upstream's scripts read a run, for tests that hand them our files.

Written from the behaviour of facebookresearch/kernel_bench_verified's
scripts/benchmark_eval_analysis.py, scripts/generate_leaderboard.py and src/score.py, and of
ScalingIntelligence/KernelBench's scripts/benchmark_eval_analysis.py, not copied from them.
Each function reads files as the upstream script does, fails where it fails (a missing file, a key it
cannot split), and returns the figures it prints.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

P_VALUES = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)


def _load(path: Path):
    if not path.exists():
        raise FileNotFoundError(f"upstream asserts that {path} exists")
    return json.loads(path.read_text())


def baseline_means(baseline: dict, level: int) -> dict[int, float]:
    """pid -> mean ms, entries without a mean skipped (kernel_bench_verified's lookup by id prefix)."""
    return {int(name.split("_")[0]): entry["mean"] for name, entry in baseline[f"level{level}"].items()
            if entry is not None and entry.get("mean") is not None}


def split_keys(results: dict) -> tuple[dict, list[int]]:
    """{sid: {pid: entry}} and the sorted sample ids of a flat "{pid}_{sid}" file; a key without "_"
    raises ValueError as upstream's tuple unpacking does."""
    by_sample: dict[int, dict] = {}
    for key, entry in results.items():
        pid, sid = key.rsplit("_", 1)
        by_sample.setdefault(int(sid), {})[int(pid)] = entry
    return by_sample, sorted(by_sample)


def _speedups(correct, baseline, runtime):
    return np.array([b / r for c, b, r in zip(correct, baseline, runtime) if c], dtype=float)


def geomean_correct(correct, baseline, runtime) -> float:
    """src/score.py's correct-only geomean: the product's n-th root, 0 when nothing is correct (a correct
    runtime of -1.0 makes the product negative and the root NaN)."""
    speedups = _speedups(correct, baseline, runtime)
    n = int(np.sum(correct))
    return float(np.prod(speedups) ** (1 / n)) if n > 0 else 0.0


def average_speedup(correct, baseline, runtime) -> float:
    """The official metric: geomean over all problems of max(1, speedup), 1 for failed or untimed ones."""
    credited = [max(1.0, b / r) if c and r > 0 else 1.0 for c, b, r in zip(correct, baseline, runtime)]
    return float(np.prod(credited) ** (1 / len(credited))) if credited else 1.0


def fast_p(correct, baseline, runtime, p: float) -> float:
    speedups = _speedups(correct, baseline, runtime)
    return float(np.sum(speedups > p) / len(correct)) if len(correct) else 0.0


def merge_hidden(standard: dict, hidden: dict) -> dict:
    """kernel_bench_verified's analysis with use_hidden_eval: every key of the standard file, its
    correctness replaced by the hidden file's (False where the hidden file lacks the key)."""
    return {key: dict(entry, correctness=hidden[key].get("correctness", False) if key in hidden else False)
            for key, entry in standard.items()}


def best_of_n(by_sample: dict, sample_ids: list, pids: list, means: dict) -> dict:
    """Per problem the correct sample with the highest baseline/runtime among those timed (> 0)."""
    best = {}
    for pid in (pid for pid in pids if pid in means):  # a problem the baseline does not time stays unsolved
        for sid in sample_ids:
            entry = by_sample[sid].get(pid)
            if entry and entry.get("correctness") and entry.get("runtime", -1) > 0:
                speedup = means[pid] / entry["runtime"]
                if speedup > best.get(pid, (0.0, None))[0]:
                    best[pid] = (speedup, entry["runtime"], sid)
    correct = [pid in best for pid in pids]
    baseline = [means.get(pid, 1.0) for pid in pids]
    runtime = [best[pid][1] if pid in best else -1.0 for pid in pids]
    figures = {"correctness_rate": float(np.mean(correct)) if pids else float("nan"),
               "gmsr": geomean_correct(correct, baseline, runtime),
               "avg_speedup": average_speedup(correct, baseline, runtime),
               "best_sample": {pid: best[pid][2] for pid in best}}
    figures.update({f"fast_p_{p}": fast_p(correct, baseline, runtime, p) for p in P_VALUES})
    return figures


def verified_analysis(run_dir: Path, baseline: dict, level: int, num_problems: int,
                      use_hidden_eval: bool = False) -> dict:
    """kernel_bench_verified's scripts/benchmark_eval_analysis.py on runs/{run}: per-sample figures
    (mean over sample ids) and the best-of-N oracle, over the level's ids 1..num_problems that the baseline
    times, with no problem excluded."""
    results = _load(run_dir / "eval_results.json")
    if use_hidden_eval:
        results = merge_hidden(results, _load(run_dir / "eval_results_hidden.json"))
    means = baseline_means(baseline, level)
    by_sample, sample_ids = split_keys(results)
    pids = [pid for pid in range(1, num_problems + 1) if pid in means]
    filler = {"compiled": False, "correctness": False, "runtime": -1.0}
    per_sample = []
    for sid in sample_ids:
        entries = [by_sample[sid].get(pid, filler) for pid in pids]
        correct = [e["correctness"] for e in entries]
        baseline_ms, runtime = [means[pid] for pid in pids], [e["runtime"] for e in entries]
        per_sample.append({"compiled_rate": float(np.mean([e["compiled"] for e in entries])),
                           "correctness_rate": float(np.mean(correct)),
                           "gmsr": geomean_correct(correct, baseline_ms, runtime),
                           "avg_speedup": average_speedup(correct, baseline_ms, runtime),
                           **{f"fast_p_{p}": fast_p(correct, baseline_ms, runtime, p) for p in P_VALUES}})
    mean = {key: float(np.mean([m[key] for m in per_sample])) for key in per_sample[0]} if per_sample else {}
    return {"per_sample": per_sample, "mean": mean, "best": best_of_n(by_sample, sample_ids, pids, means),
            "problems": pids}


UPSTREAM_LEADERBOARD_EXCLUDED = {2: {23, 80, 83}}


def verified_leaderboard(run_dir: Path, baseline: dict, level: int, num_problems: int,
                         use_hidden_eval: bool = False, tolerance: float | None = None) -> dict | None:
    """kernel_bench_verified's scripts/generate_leaderboard.py for one run: None where it skips the run
    (no eval_results.json, or fewer entries than 90 % of five samples per problem); else the best-of-N
    figures of its table, after its hidden merge and tolerance rule."""
    pids = [pid for pid in range(1, num_problems + 1) if pid not in UPSTREAM_LEADERBOARD_EXCLUDED.get(level, set())]
    path = run_dir / "eval_results.json"
    if not path.exists():
        return None
    results = json.loads(path.read_text())
    if len(results) < int(len(pids) * 5 * 0.9):
        return None
    hidden_path = run_dir / "eval_results_hidden.json"
    if use_hidden_eval and hidden_path.exists():
        hidden = json.loads(hidden_path.read_text())
        for key, entry in hidden.items():
            if key in results:
                results[key] = dict(results[key], correctness=lifted(entry, tolerance))
        for key, entry in list(results.items()):
            if entry.get("compiled") and key not in hidden:
                results[key] = dict(entry, correctness=False)
    by_sample, sample_ids = split_keys(results)
    means = baseline_means(baseline, level)
    return best_of_n(by_sample, sample_ids, pids, means)


def lifted(hidden_entry: dict, tolerance: float | None) -> bool:
    """The leaderboard's tolerance rule: a hidden failure that failed only the standard trials (no
    hidden_failed_configs, hidden_runtime_error or runtime_error) counts correct when the largest of its
    recorded max_difference strings is below the tolerance."""
    correct = hidden_entry.get("correctness", False)
    metadata = hidden_entry.get("metadata", {})
    if correct or tolerance is None or any(metadata.get(k) for k in
                                           ("hidden_failed_configs", "hidden_runtime_error", "runtime_error")):
        return correct
    differences = metadata.get("max_difference", [])
    try:
        return bool(differences) and max(float(d) for d in differences if d) < tolerance
    except (ValueError, TypeError):
        return correct


def kernelbench_analysis(run_dir: Path, baseline: dict, level: int, problems: dict[int, str]) -> dict:
    """ScalingIntelligence/KernelBench's scripts/benchmark_eval_analysis.py: {pid: [samples]}, sample 0
    of each problem, problems without one filled in as failed, the baseline found by problem file name."""
    results = _load(run_dir / "eval_results.json")
    chosen = {}
    for key, samples in results.items():
        zero = [s for s in samples if s["sample_id"] == 0]   # a flat file's dict values fail here
        assert len(zero) <= 1
        if zero:
            chosen[key] = zero[0]
    for pid in problems:
        chosen.setdefault(str(pid), {"sample_id": 0, "compiled": False, "correctness": False, "runtime": -1.0})
    correct, baseline_ms, runtime = [], [], []
    for pid in sorted(problems):
        entry, name = chosen[str(pid)], problems[pid]
        if name in baseline[f"level{level}"]:
            correct.append(entry["correctness"])
            runtime.append(entry["runtime"])
            baseline_ms.append(baseline[f"level{level}"][name]["mean"])
    with np.errstate(invalid="ignore"):
        return {"compiled": sum(e["compiled"] is True for e in chosen.values()),
                "correct": sum(e["correctness"] is True for e in chosen.values()),
                "gmsr": geomean_correct(correct, baseline_ms, runtime),
                **{f"fast_p_{p}": fast_p(correct, baseline_ms, runtime, p) for p in P_VALUES}}
