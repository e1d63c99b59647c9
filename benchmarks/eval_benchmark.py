"""Evaluate the benchmark kernels on the GPU, cold (empty build cache) then warm, and print figures.

    python benchmarks/eval_benchmark.py --passes cold:1 warm:1 repeat:1 warm:2 [--out results.json]

Kernels live in benchmarks/kernels/level{L}/{pid}_{sid}_{label}.py. Each pass runs
scripts/eval_from_generations.py with build_cache=True and hidden tests, as a user would, and reports
its wall time; per-kernel verdicts, judge-side seconds and where they went come from the result files.
A repeat pass evaluates one kernel (--repeat-kernel) as --repeat-samples samples of its problem, warm:
the first sample pays for the judge's first sandbox start, the others show the steady state.
"""

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "benchmarks" / "kernels"


def level_kernels(level: int) -> list[tuple[Path, int, int, str]]:
    """(file, problem id, sample id, label) of every benchmark kernel of a level."""
    found = []
    for path in sorted((KERNELS / f"level{level}").glob("*.py")):
        pid, sid, label = path.stem.split("_", 2)
        found.append((path, int(pid), int(sid), label))
    return found


def repeated_kernel(spec: str, copies: int) -> tuple[int, list]:
    """The level of LEVEL/FILE_STEM and `copies` samples (ids 0..copies-1) of that one kernel."""
    level, _, stem = spec.partition("/")
    matches = [k for k in level_kernels(int(level)) if k[0].stem == stem] if level.isdigit() else []
    if not matches:
        raise SystemExit(f"error: --repeat-kernel {spec!r} names no kernel; use LEVEL/FILE_STEM, "
                         f"e.g. 1/1_0_sgemm_tiled")
    path, pid, _, label = matches[0]
    return int(level), [(path, pid, copy, label) for copy in range(copies)]


def prepare_run(runs_dir: Path, level: int, files: list) -> tuple[str, list, int]:
    run = f"bench_level{level}"
    run_dir = runs_dir / run
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    for path, pid, sid, _ in files:
        shutil.copy(path, run_dir / f"level_{level}_problem_{pid}_sample_{sid}_kernel.py")
    entries = [(pid, sid, label) for _, pid, sid, label in files]
    return run, entries, max(sid for _, sid, _ in entries) + 1


def run_pass(spec: str, args, build_dir: Path) -> dict:
    name, gpus = spec.split(":")
    if name == "cold":
        shutil.rmtree(build_dir, ignore_errors=True)
    if name == "repeat":
        plan = [repeated_kernel(args.repeat_kernel, args.repeat_samples)]
    else:
        plan = [(level, level_kernels(level)) for level in (1, 2)]
    rows, total_wall = [], 0.0
    for level, files in plan:
        run, entries, num_samples = prepare_run(args.runs_dir, level, files)
        pids = sorted({pid for pid, _, _ in entries})
        command = [sys.executable, str(ROOT / "scripts" / "eval_from_generations.py"), f"run_name={run}",
                   f"runs_dir={args.runs_dir}", f"level={level}", f"num_samples={num_samples}",
                   f"subset=[{pids[0]},{pids[-1]}]", "use_hidden_tests=True", "build_cache=True",
                   "gpu_arch=[Hopper]", f"num_gpu_devices={gpus}", f"timeout={args.timeout}",
                   f"kernel_eval_build_dir={build_dir}", f"num_cpu_workers={args.cpu_workers}",
                   f"sandbox={args.sandbox}"]
        started = time.monotonic()
        subprocess.run(command, check=True, stdout=sys.stderr)
        wall = time.monotonic() - started
        total_wall += wall
        results = json.loads((args.runs_dir / run / "eval_results_hidden.json").read_text())
        for pid, sid, label in entries:
            record = results[f"{pid}_{sid}"]
            meta = record["metadata"]
            rows.append({"level": level, "problem": pid, "sample": sid, "kernel": label,
                         "status": record["eval_status"], "failed_case": meta.get("failed_case"),
                         "eval_seconds": meta.get("eval_seconds"), "runtime_ms": record["runtime"],
                         "peak_memory": record["peak_memory"], "error": (meta.get("error") or "")[:160],
                         "load_seconds": meta.get("load_seconds"), "phase_seconds": meta.get("phase_seconds"),
                         "device": meta.get("device"), "integrity": meta.get("integrity"),
                         "judge_wall_ms": (meta.get("judge_wall_stats") or {}).get("median"),
                         "null_overhead_ms": (meta.get("judge_clock_overhead_ms") or {}).get("median"),
                         "gpu_pci_address": meta.get("gpu_pci_address"), "log_tail": meta.get("log_tail", "")[-1500:]})
        rows.append({"level": level, "kernel": f"(level {level} wall)", "wall_seconds": wall})
    return {"pass": name, "gpus": int(gpus), "wall_seconds": total_wall, "rows": rows}


def print_pass(result: dict) -> None:
    print(f"\n== {result['pass']} pass, {result['gpus']} GPU(s): {result['wall_seconds']:.1f} s wall")
    print(f"{'kernel (problem/sample)':38} {'status':15} {'failed':7} {'eval s':>7} {'ms':>9} "
          f"{'start/check/time/after s':25} gpu (pci address)")
    for row in result["rows"]:
        if "status" not in row:
            print(f"{row['kernel']:38} {'':15} {'':7} {row['wall_seconds']:7.1f}")
            continue
        name = f"L{row['level']}/{row['problem']}/{row['sample']} {row['kernel']}"
        secs = f"{row['eval_seconds']:.1f}" if row["eval_seconds"] is not None else "-"
        phases = "/".join(f"{v:.1f}" for v in (row["phase_seconds"] or {}).values())
        print(f"{name[:38]:38} {row['status']:15} {str(row['failed_case'] or ''):7} {secs:>7} "
              f"{row['runtime_ms']:9.3f} {phases:25} {row['device']} ({row['gpu_pci_address']})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passes", nargs="+", default=["cold:1", "warm:1"],
                        help="cold:N (empty build cache), warm:N (cache kept) or repeat:N, on N GPUs")
    parser.add_argument("--repeat-kernel", default="1/1_0_sgemm_tiled", help="LEVEL/FILE_STEM for repeat passes")
    parser.add_argument("--repeat-samples", type=int, default=5)
    parser.add_argument("--timeout", type=int, default=60)
    parser.add_argument("--cpu-workers", type=int, default=8)
    parser.add_argument("--runs-dir", type=Path, default=Path("/tmp/kbv_bench_runs"))
    parser.add_argument("--build-dir", type=Path, default=Path("/tmp/kbv_bench_builds"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--sandbox", choices=("jail", "none"), default="jail",
                        help="jail (default) or none, to measure what the jail costs")
    args = parser.parse_args()
    for spec in args.passes:
        name, _, gpus = spec.partition(":")
        if name not in ("cold", "warm", "repeat") or not gpus.isdigit() or int(gpus) < 1:
            parser.error(f"pass {spec!r} must be cold:N, warm:N or repeat:N with N >= 1 GPUs")
        if name == "repeat":
            repeated_kernel(args.repeat_kernel, 1)  # a bad name stops here, before any pass has run
    results = []
    for spec in args.passes:  # print and save after each pass, so a cut-short run keeps what it did
        results.append(run_pass(spec, args, args.build_dir))
        print_pass(results[-1])
        sys.stdout.flush()
        if args.out:
            args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
