"""Time of the static checker per kernel file, over the test fixtures and benchmarks/kernels.

    python benchmarks/static_check_benchmark.py [--repeat 20] [paths ...]

Prints one line per file (best-of-repeat milliseconds and its finding codes), then mean and max,
then how many honest files (the 270 references as their own candidates, the clean fixtures)
static_check=reject would refuse.
"""

import argparse
import statistics
import time
from pathlib import Path

from kernelbench_verified.problems.load import LEVELS, list_problems, self_candidate
from kernelbench_verified.static.check import check_source
from kernelbench_verified.static.policy import rejecting_codes

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FOLDERS = [ROOT / "tests" / "fixtures" / "exploits", ROOT / "tests" / "fixtures" / "clean",
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


def print_false_rejections() -> None:
    """Honest files that static_check=reject would refuse: every reference as its own candidate and
    the clean fixtures (a defence that rejects an honest kernel is a defect too)."""
    honest = {f"L{p.level}/{p.pid}": self_candidate(p.path.read_text()) for level in LEVELS
              for p in list_problems(level, None, (None, None))}
    honest.update({f.name: f.read_text() for f in sorted((ROOT / "tests" / "fixtures" / "clean").glob("*.py"))})
    refused = {name: codes for name, source in honest.items() if (codes := rejecting_codes(check_source(source), "reject"))}
    print(f"static_check=reject refuses {len(refused)} of {len(honest)} honest files "
          f"(the references as their own candidates and the clean fixtures){': ' if refused else ''}"
          + ", ".join(f"{name} {codes}" for name, codes in refused.items()))


if __name__ == "__main__":
    main()
