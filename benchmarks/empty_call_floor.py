"""The empty-call floor replayed on recorded samples: which correct records it withholds, and how close
the honest ones come to it.

    python benchmarks/empty_call_floor.py RESULTS.json[.gz] [RESULTS.json ...]

Each correct record with `metadata.judge_trials_ms.empty_calls` (calls of no work the sandbox timed
before the kernel loaded) is checked with the judge's own rule (judge.timing_flags, EMPTY_CALL_FLOOR):
its median reported call against the fastest empty call. Prints per file the records checked, those
the floor withholds (by key), and the three lowest ratios of median call to fastest empty call; then
the empty calls' spread over every record.
"""

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kernelbench_verified.evaluate.judge import EMPTY_CALL_FLOOR, timing_flags  # noqa: E402
from kernelbench_verified.results import read_json  # noqa: E402


def floor_rows(records: dict) -> list[tuple[float, str, bool]]:
    """(median call / fastest empty call, key, withheld by the floor) of each correct record."""
    rows = []
    for key, record in records.items():
        raw = record.get("metadata", {}).get("judge_trials_ms") or {}
        if record.get("eval_status") != "correct" or not raw.get("empty_calls") or not raw.get("reported"):
            continue
        flags = timing_flags({"num_trials": len(raw["reported"])}, raw["reported"], raw["waited"], [], None,
                             raw["empty_calls"])
        ratio = statistics.median(raw["reported"]) / max(min(raw["empty_calls"]), 1e-9)
        rows.append((ratio, key, any(f.startswith("timing_below_empty_call") for f in flags)))
    return sorted(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path)
    args = parser.parse_args()
    print(f"floor: a median call under {EMPTY_CALL_FLOOR:g} of the fastest empty call")
    empties = []
    for path in args.results:
        records = read_json(path, "results file")
        rows = floor_rows(records)
        withheld = [key for _, key, hit in rows if hit]
        lowest = ", ".join(f"{key} {ratio:.2f}" for ratio, key, _ in [r for r in rows if not r[2]][:3])
        print(f"{path.name}: {len(rows)} correct, floor withholds {len(withheld)} {withheld}; lowest kept: {lowest}")
        empties += [statistics.median(r["metadata"]["judge_trials_ms"]["empty_calls"]) for r in records.values()
                    if (r.get("metadata", {}).get("judge_trials_ms") or {}).get("empty_calls")]
    if empties:
        twentieths = statistics.quantiles(empties, n=20)
        print(f"median empty call over {len(empties)} records: {min(empties):.4f} / {twentieths[0]:.4f} / "
              f"{statistics.median(empties):.4f} / {twentieths[-1]:.4f} / {max(empties):.4f} ms (min / 5 % / "
              "median / 95 % / max)")


if __name__ == "__main__":
    main()
