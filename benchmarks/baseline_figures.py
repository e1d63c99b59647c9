"""Figures of a baseline run: time spent per problem, what TF32 buys per level, and reproducibility.

    python benchmarks/baseline_figures.py --hardware H200 [--dir results/timing] \\
        [--repeat results/timing/H200/baseline_time_torch_tf32.json results/timing_repeat/H200/baseline_time_torch_tf32.json] \\
        [--out figures.json]

Reads {dir}/{hardware}/*.json as written by scripts/generate_baseline_time.py (old-format files too).
- time per problem: wall seconds the run spent timing each problem, per mode and level;
- per level, the geometric mean over problems of fp32_ieee / tf32 and of torch (PyTorch defaults) / tf32,
  and the ten problems where TF32 helps most (largest fp32_ieee / tf32);
- with --repeat A B (the same mode timed in two separate processes): per level, the median and max
  over problems of |A - B| / ((A + B) / 2).
"""

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from kernelbench_verified.measure.baseline_files import load_baseline
from kernelbench_verified.errors import UserError

TF32 = "baseline_time_torch_tf32"
RATIOS = {"fp32_ieee/tf32": "baseline_time_torch_fp32_ieee", "torch_default/tf32": "baseline_time_torch"}


def run_seconds(baselines: dict) -> dict:
    """{mode: {level: {count, total, median, max, slowest}}} of the recorded per-problem seconds."""
    figures = {}
    for mode, baseline in sorted(baselines.items()):
        for level, entries in baseline.levels.items():
            seconds = {name: e["seconds"] for name, e in entries.items() if "seconds" in e}
            if seconds:
                slowest = max(seconds, key=seconds.get)
                figures.setdefault(mode, {})[level] = {
                    "count": len(seconds), "total": sum(seconds.values()),
                    "median": statistics.median(seconds.values()), "max": seconds[slowest], "slowest": slowest}
    return figures


def ratios(numerator, denominator, stat: str) -> dict:
    """{level: {problem: numerator time / denominator time}} over problems timed in both."""
    out = {}
    for level, entries in denominator.levels.items():
        other = numerator.levels.get(level, {})
        values = {name: other[name][stat] / e[stat] for name, e in entries.items()
                  if name in other and e[stat] > 0 and other[name][stat] > 0}
        if values:
            out[level] = values
    return out


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def tf32_figures(baselines: dict, stat: str, top: int = 10) -> dict:
    if TF32 not in baselines:
        return {}
    figures = {}
    for label, mode in RATIOS.items():
        if mode not in baselines:
            continue
        for level, values in ratios(baselines[mode], baselines[TF32], stat).items():
            entry = figures.setdefault(level, {})
            entry[f"geomean {label}"] = geomean(values.values())
            entry["problems"] = len(values)
            if label == "fp32_ieee/tf32":
                entry["tf32 helps most (fp32_ieee/tf32)"] = dict(
                    sorted(values.items(), key=lambda kv: -kv[1])[:top])
    return figures


def reproducibility(first, second, stat: str) -> dict:
    """{level: {problems, median, max, worst}} of |A - B| / mean(A, B) per problem."""
    figures = {}
    for level, entries in first.levels.items():
        other = second.levels.get(level, {})
        deltas = {name: abs(e[stat] - other[name][stat]) / ((e[stat] + other[name][stat]) / 2)
                  for name, e in entries.items() if name in other and e[stat] + other[name][stat] > 0}
        if deltas:
            worst = max(deltas, key=deltas.get)
            figures[level] = {"problems": len(deltas), "median": statistics.median(deltas.values()),
                              "max": deltas[worst], "worst": worst}
    return figures


def print_figures(figures: dict) -> None:
    print("== time per problem of the run (wall seconds spent timing it)")
    for mode, levels in figures["seconds"].items():
        for level, f in levels.items():
            print(f"{mode} {level}: {f['count']} problems, total {f['total']:.1f} s, "
                  f"median {f['median']:.2f} s, max {f['max']:.2f} s ({f['slowest']})")
    print(f"== what TF32 buys ({figures['stat']} times; ratio > 1: TF32 is faster)")
    for level, f in figures["tf32"].items():
        means = ", ".join(f"{k} {v:.3f}" for k, v in f.items() if k.startswith("geomean"))
        print(f"{level} ({f['problems']} problems): {means}")
        for name, ratio in f.get("tf32 helps most (fp32_ieee/tf32)", {}).items():
            print(f"    {ratio:7.2f}x  {name}")
    if figures.get("reproducibility"):
        print("== run-to-run reproducibility, |A - B| / mean(A, B) per problem")
        for level, f in figures["reproducibility"].items():
            print(f"{level} ({f['problems']} problems): median {100 * f['median']:.2f} %, "
                  f"max {100 * f['max']:.2f} % ({f['worst']})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hardware", required=True, help="folder under --dir, e.g. H200")
    parser.add_argument("--dir", type=Path, default=Path("results/timing"))
    parser.add_argument("--repeat", type=Path, nargs=2, metavar=("A", "B"),
                        help="two files of the same mode from separate runs")
    parser.add_argument("--stat", default="mean", choices=("mean", "median", "min"))
    parser.add_argument("--out", type=Path, help="also write the figures as JSON")
    args = parser.parse_args()
    try:
        folder = args.dir / args.hardware
        paths = sorted(folder.glob("*.json"))
        if not paths:
            raise UserError(f"no baseline files in {folder} (run scripts/generate_baseline_time.py)")
        baselines = {path.stem: load_baseline(path) for path in paths}
        figures = {"stat": args.stat, "seconds": run_seconds(baselines),
                   "tf32": tf32_figures(baselines, args.stat)}
        if args.repeat:
            figures["reproducibility"] = reproducibility(*(load_baseline(p) for p in args.repeat), args.stat)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_figures(figures)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
