"""Time of the static checker per kernel file, over the test fixtures and benchmarks/kernels.

    python benchmarks/static_check_benchmark.py [--repeat 20] [paths ...]

Prints one line per file (best-of-repeat milliseconds and its finding codes), then mean and max,
then, per honest set (the 270 references as their own candidates, the clean and honest fixtures, the
honest benchmark kernels) and per error code, the honest files static_check=reject would refuse.
"""

import argparse
import statistics
import time
from pathlib import Path

from kernelbench_verified.problems.load import LEVELS, list_problems, self_candidate
from kernelbench_verified.static.check import check_source
from kernelbench_verified.static.policy import rejecting_codes
from kernelbench_verified.static.rules import RULES

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FOLDERS = [ROOT / "tests" / "fixtures" / "exploits", ROOT / "tests" / "fixtures" / "clean",
                   ROOT / "tests" / "fixtures" / "honest",
                   ROOT / "benchmarks" / "kernels", ROOT / "examples" / "tiny" / "kernels"]


def best_time_ms(source: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        check_source(source)
        times.append((time.perf_counter() - start) * 1e3)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=DEFAULT_FOLDERS)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    files = sorted(f for p in args.paths for f in ([p] if p.is_file() else p.rglob("*.py")))
    timings = []
    for path in files:
        source = path.read_text()
        milliseconds = best_time_ms(source, args.repeat)
        timings.append(milliseconds)
        codes = sorted({f"{f.code}:{f.severity}" for f in check_source(source)})
        print(f"{milliseconds:7.2f} ms  {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}  {' '.join(codes) or '-'}")
    if timings:
        print(f"{len(timings)} files: mean {statistics.mean(timings):.2f} ms, max {max(timings):.2f} ms per file")
    print_false_rejections()


# Benchmark kernels that are honest (the others are a shortcut, a side stream, a compile error, a hang).
HONEST_BENCHMARK_KERNELS = ("19_0_relu_vec4", "1_0_sgemm_tiled", "23_0_softmax_rows", "19_4_illegal_memory_access",
                            "19_6_relu_triton", "23_1_softmax_triton", "1_0_conv_fused_relu_bias")


def honest_files() -> dict[str, dict[str, str]]:
    """Every honest kernel file the repository has, by set: the references as their own candidates, the
    clean fixtures, the honest fixtures (written as models write kernels) and the honest benchmark kernels."""
    fixtures = ROOT / "tests" / "fixtures"
    return {
        "references": {f"L{p.level}/{p.pid}": self_candidate(p.path.read_text()) for level in LEVELS
                       for p in list_problems(level, None, (None, None))},
        "clean fixtures": {f.stem: f.read_text() for f in sorted((fixtures / "clean").glob("*.py"))},
        "honest fixtures": {f.stem: f.read_text() for f in sorted((fixtures / "honest").glob("*.py"))},
        "benchmark kernels": {f.stem: f.read_text() for f in sorted((ROOT / "benchmarks" / "kernels").rglob("*.py"))
                              if f.stem in HONEST_BENCHMARK_KERNELS},
    }


def print_false_rejections() -> None:
    """Per honest set and per error code, the honest files the code accuses: what static_check=reject
    would refuse (a defence that rejects an honest kernel is a defect too)."""
    total, accused = 0, {}
    for name, files in honest_files().items():
        refused = {key: codes for key, source in files.items() if (codes := rejecting_codes(check_source(source), "reject"))}
        total += len(files)
        for key, codes in refused.items():
            for code in codes:
                accused.setdefault(code, []).append(f"{name}: {key}")
        print(f"{name}: static_check=reject refuses {len(refused)} of {len(files)}"
              + "".join(f"\n  {key} {codes}" for key, codes in refused.items()))
    codes = sorted(rule.code for rule in RULES if rule.severity == "error")
    print(f"error codes over all {total} honest files: "
          + ", ".join(f"{code} {len(accused.get(code, []))}" for code in codes))


if __name__ == "__main__":
    main()
