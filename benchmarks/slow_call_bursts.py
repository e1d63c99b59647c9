"""How often a timed phase holds slow calls, and whether they come with a busy machine.

    python benchmarks/slow_call_bursts.py RESULTS.json[.gz] CPU_LOG [RESULTS CPU_LOG ...] [--over-ms 0.3]

Some honest samples are doubted by the judge's clock because a few timed calls in a row waited
0.2-2.5 ms longer than the rest (session 28). A call is slow here when its overhead (the judge's window
minus the reported time) exceeds the phase's median overhead by more than --over-ms. Each RESULTS file
is paired with the cpu_stat.log(.gz) that benchmarks/results/session12_call.sh wrote beside it. For each
pair it prints how many correct samples had slow calls, split by what the machine did during their
timed phase: the other CPUs' mean busy share (builds and spare sandboxes run there) and the hypervisor's
steal on the timed CPU (metadata.timed_cpu). If the slow calls follow neither, their cause lies outside
what this guest can see.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from clock_drift import correct_records, cpu_busy, cpu_shares, phases, read_cpu_log  # noqa: E402
from kernelbench_verified.results import read_json  # noqa: E402

BUSY_MACHINE = 0.5  # the other CPUs' mean busy share from which the machine counts as busy


def slow_calls(overhead: list[float], over_ms: float) -> int:
    """The calls of one phase whose overhead exceeds the phase's median by more than `over_ms`."""
    middle = statistics.median(overhead)
    return sum(1 for o in overhead if o - middle > over_ms)


def machine_during_timing(record: dict, log: list) -> tuple[float, float] | None:
    """(the other CPUs' mean busy share, the timed CPU's stolen share) during the timed calls."""
    metadata = record["metadata"]
    cpu, span = metadata.get("timed_cpu"), (metadata.get("trial_phases_at") or {}).get("timed")
    shares = cpu_shares(log, cpu, *span) if isinstance(cpu, int) and span else None
    if shares is None:
        return None
    busy = cpu_busy(log, *span)
    return statistics.mean(b for i, b in enumerate(busy) if i != cpu), shares[0]


def machine_state(during: tuple[float, float] | None) -> str:
    if during is None:
        return "no CPU log for the phase"
    other_cpus, stolen = during
    return ("other CPUs busy" if other_cpus >= BUSY_MACHINE else "other CPUs idle") + \
        (", timed CPU stolen from" if stolen > 0 else ", no steal")


def report(results: Path, cpu_log: Path, over_ms: float) -> None:
    log, records = read_cpu_log(cpu_log), read_json(results, "results file")
    groups: dict[str, list[int]] = {}
    for record, (_, timed) in zip(correct_records(records), phases(records)):  # both in sample order
        groups.setdefault(machine_state(machine_during_timing(record, log)), []).append(slow_calls(timed, over_ms))
    print(f"{results.name} (slow: over {over_ms} ms above the phase's median overhead)")
    for key, counts in sorted(groups.items()):
        hit = sum(1 for n in counts if n)
        print(f"  {key:42} {len(counts):4d} samples, {hit:3d} with slow calls ({sum(counts)} calls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", type=Path, nargs="+", help="RESULTS CPU_LOG, repeated")
    parser.add_argument("--over-ms", type=float, default=0.3)
    args = parser.parse_args()
    if len(args.pairs) % 2:
        parser.error("give each results file with its cpu_stat.log")
    for results, cpu_log in zip(args.pairs[::2], args.pairs[1::2]):
        report(results, cpu_log, args.over_ms)


if __name__ == "__main__":
    main()
