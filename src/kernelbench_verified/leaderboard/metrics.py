"""Leaderboard metrics over a table of samples: pure functions of numpy arrays.

A `SampleTable` holds, for P problems and N samples each, whether each sample compiled and was correct,
its speedup (baseline ms / kernel ms; NaN unless correct and timed) and its memory ratio (baseline peak
bytes / kernel peak bytes; NaN when either is unknown). Best-of-N reduces it to one outcome per problem:
solved if any sample is correct, with the speed and memory of the fastest correct sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

FAST_P_THRESHOLDS = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)
PASS_AT_K = (1, 5, 10)  # those up to the number of samples are reported


@dataclass(frozen=True)
class SampleTable:
    correct: np.ndarray        # (P, N) bool
    compiled: np.ndarray       # (P, N) bool
    speedup: np.ndarray        # (P, N) float, NaN unless correct and timed
    memory_ratio: np.ndarray   # (P, N) float, NaN when unknown
    # (P,) float: the speedup identical code reached on each problem (leaderboard.identical_code), NaN
    # when not measured; None: none measured
    noise_bound: np.ndarray | None = None

    @property
    def num_problems(self) -> int:
        return self.correct.shape[0]

    @property
    def num_samples(self) -> int:
        return self.correct.shape[1]


@dataclass(frozen=True)
class ProblemOutcomes:
    """Best-of-N per problem; `best_sample` is -1 where no sample is correct."""
    solved: np.ndarray         # (P,) bool
    compiled: np.ndarray       # (P,) bool
    speedup: np.ndarray        # (P,) float
    memory_ratio: np.ndarray   # (P,) float
    best_sample: np.ndarray    # (P,) int


def sample_table(correct, compiled, speedup, memory_ratio) -> SampleTable:
    """A SampleTable from nested lists; speedups of incorrect samples are dropped (set to NaN)."""
    correct = np.asarray(correct, dtype=bool)
    correct = correct[:, None] if correct.ndim == 1 else correct
    speedup = np.asarray(speedup, dtype=float).reshape(correct.shape)
    return SampleTable(correct=correct,
                       compiled=np.asarray(compiled, dtype=bool).reshape(correct.shape) | correct,
                       speedup=np.where(correct & (speedup > 0), speedup, np.nan),
                       memory_ratio=np.asarray(memory_ratio, dtype=float).reshape(correct.shape))


def pool(tables: list[SampleTable]) -> SampleTable:
    """Problems of several tables in one, padding shorter sample axes with failed samples."""
    width = max((t.num_samples for t in tables), default=0)

    def stacked(field: str, fill):
        parts = [np.pad(getattr(t, field), ((0, 0), (0, width - t.num_samples)), constant_values=fill)
                 for t in tables]
        return np.concatenate(parts) if parts else np.zeros((0, width), dtype=type(fill))

    bounds = [t.noise_bound if t.noise_bound is not None else np.full(t.num_problems, np.nan) for t in tables]
    return SampleTable(stacked("correct", False), stacked("compiled", False),
                       stacked("speedup", np.nan), stacked("memory_ratio", np.nan),
                       np.concatenate(bounds) if any(t.noise_bound is not None for t in tables) else None)


def best_of_n(table: SampleTable) -> ProblemOutcomes:
    """The fastest correct sample of each problem (the first correct one when none was timed)."""
    ranked = np.where(table.correct, np.nan_to_num(table.speedup, nan=0.0), -1.0)
    best = ranked.argmax(axis=1) if table.num_samples else np.zeros(table.num_problems, dtype=int)
    solved = table.correct.any(axis=1)
    rows = np.arange(table.num_problems)
    pick = lambda values: np.where(solved, values[rows, best], np.nan) if table.num_samples else \
        np.full(table.num_problems, np.nan)
    return ProblemOutcomes(solved=solved, compiled=table.compiled.any(axis=1), speedup=pick(table.speedup),
                           memory_ratio=pick(table.memory_ratio), best_sample=np.where(solved, best, -1))


def geomean(values) -> float:
    """Geometric mean of the finite positive values; NaN when there are none."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    return float(np.exp(np.log(values).mean())) if values.size else float("nan")


def share(mask) -> float:
    mask = np.asarray(mask, dtype=bool)
    return float(mask.mean()) if mask.size else float("nan")


def fast_p(outcomes: ProblemOutcomes, p: float) -> float:
    """Share of all problems solved with a speedup strictly above p (Fast@0: solved and timed)."""
    return share(outcomes.solved & (np.nan_to_num(outcomes.speedup, nan=-1.0) > p))


def fast_beyond_noise(outcomes: ProblemOutcomes, noise_bound: np.ndarray | None) -> float:
    """Fast@1 counting only speedups beyond what identical code reached on the problem (a problem with
    no such measurement needs only > 1); NaN when no problem has one."""
    if noise_bound is None or not np.isfinite(noise_bound).any():
        return float("nan")
    needed = np.fmax(np.nan_to_num(noise_bound, nan=1.0), 1.0)
    return share(outcomes.solved & (np.nan_to_num(outcomes.speedup, nan=-1.0) > needed))


def kernelbench_average_speedup(outcomes: ProblemOutcomes) -> float:
    """Upstream KernelBench's average speedup: the geometric mean over all problems of max(1, speedup),
    counting 1 for unsolved or untimed problems."""
    credited = np.where(outcomes.solved, np.fmax(np.nan_to_num(outcomes.speedup, nan=1.0), 1.0), 1.0)
    return float(np.exp(np.log(credited).mean())) if credited.size else float("nan")


def less_memory_share(outcomes: ProblemOutcomes) -> float:
    """Among solved problems with a memory measurement, the share whose kernel used less than baseline."""
    known = outcomes.solved & np.isfinite(outcomes.memory_ratio)
    return share(outcomes.memory_ratio[known] > 1.0)


def pass_at_k(correct: np.ndarray, k: int) -> float:
    """The unbiased pass@k over problems: for n samples of which c are correct, the chance that k
    of them drawn without replacement include a correct one, 1 - C(n-c, k) / C(n, k), averaged."""
    n = correct.shape[1]
    if not correct.size or not 1 <= k <= n:
        return float("nan")
    wrong = n - correct.sum(axis=1)
    return float(np.mean([1.0 - math.comb(int(w), k) / math.comb(n, k) for w in wrong]))


def summarize(table: SampleTable, pass_at_k_values: tuple = PASS_AT_K) -> dict:
    """Best-of-N metrics of one table (a level, or several levels pooled), with pass@k for those k of
    `pass_at_k_values` up to the number of samples."""
    outcomes = best_of_n(table)
    return {
        "num_problems": table.num_problems,
        "num_samples": table.num_samples,
        "num_correct": int(outcomes.solved.sum()),
        "correct": share(outcomes.solved),
        "compiled": share(outcomes.compiled),
        "fast_p": {f"{p:g}": fast_p(outcomes, p) for p in FAST_P_THRESHOLDS},
        "fast_1_beyond_noise": fast_beyond_noise(outcomes, table.noise_bound),
        "correct_speedup": geomean(outcomes.speedup[outcomes.solved]),
        "kernelbench_speedup": kernelbench_average_speedup(outcomes),
        "memory_efficiency": geomean(outcomes.memory_ratio[outcomes.solved]),
        "less_memory": less_memory_share(outcomes),
        "pass_at_k": {str(k): pass_at_k(table.correct, k) for k in pass_at_k_values if k <= table.num_samples},
    }


def per_sample(table: SampleTable) -> dict:
    """Mean and standard deviation (ddof=1) over sample indices of each sample's own metrics."""
    columns = [sample_table(table.correct[:, [j]], table.compiled[:, [j]], table.speedup[:, [j]],
                            table.memory_ratio[:, [j]]) for j in range(table.num_samples)]
    values = {
        "correct": [share(c.correct[:, 0]) for c in columns],
        "compiled": [share(c.compiled[:, 0]) for c in columns],
        "fast_1": [fast_p(best_of_n(c), 1.0) for c in columns],
        "correct_speedup": [geomean(c.speedup[c.correct]) for c in columns],
    }
    return {name: _mean_std(series) for name, series in values.items()}


def _mean_std(series: list[float]) -> dict:
    values = np.asarray([v for v in series if np.isfinite(v)], dtype=float)
    if not values.size:
        return {"mean": float("nan"), "std": float("nan")}
    return {"mean": float(values.mean()), "std": float(values.std(ddof=1)) if values.size > 1 else 0.0}


def bootstrap_intervals(table: SampleTable, num_resamples: int = 2000, seed: int = 0,
                        level: float = 0.95) -> dict:
    """Percentile bootstrap intervals, resampling problems with replacement.

    The geomeans are conditional on being solved, so they resample the solved problems; Fast@1 resamples
    all problems. Returns {metric: [low, high]} (NaN bounds when there is nothing to resample).
    """
    outcomes = best_of_n(table)
    rng = np.random.default_rng(seed)
    tails = (100 * (1 - level) / 2, 100 * (1 + level) / 2)
    solved = outcomes.solved
    fast_1 = (solved & (np.nan_to_num(outcomes.speedup, nan=-1.0) > 1.0)).astype(float)
    return {
        "correct_speedup": _bootstrap_geomean(outcomes.speedup[solved], rng, num_resamples, tails),
        "memory_efficiency": _bootstrap_geomean(outcomes.memory_ratio[solved], rng, num_resamples, tails),
        "fast_1": _bootstrap_mean(fast_1, rng, num_resamples, tails),
    }


def _bootstrap_mean(values: np.ndarray, rng, num_resamples: int, tails) -> list[float]:
    if not values.size:
        return [float("nan"), float("nan")]
    draws = values[rng.integers(0, values.size, size=(num_resamples, values.size))].mean(axis=1)
    return [float(v) for v in np.percentile(draws, tails)]


def _bootstrap_geomean(values: np.ndarray, rng, num_resamples: int, tails) -> list[float]:
    values = values[np.isfinite(values) & (values > 0)]
    low, high = _bootstrap_mean(np.log(values), rng, num_resamples, tails)
    return [float(np.exp(low)), float(np.exp(high))]
