"""What falls in the judge's clock window around one timed call, piece by piece, on this machine.

    python benchmarks/clock_window.py [--iterations 2000] [--numel 4194304] [--device cuda]

The judge's clock runs from its "trial" request to the sandbox's reply, so everything in that window
that is not the call adds to the gap the judge calibrates away, and its jitter sets the smallest timing
fake the judge can see (judge.timing_flags). Prints, in microseconds (median, p10, p90, p99):
- the message round trip between two processes over the channel's pipes, the receiver waking from an
  idle wait (as the judge does while a call runs), from a busy one, and polling (Channel.receive spin);
- a timed call of a call that does nothing (measure.timing.timed_call: two events and a sync);
- exporting one fresh output of `numel` floats (transport.export_values: a CUDA IPC handle).
"""

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kernelbench_verified.evaluate.channel import Channel  # noqa: E402


def quantiles_us(seconds: list[float]) -> str:
    cuts = statistics.quantiles([s * 1e6 for s in seconds], n=100)
    return (f"median {statistics.median(seconds) * 1e6:8.1f}   p10 {cuts[9]:8.1f}   p90 {cuts[89]:8.1f}"
            f"   p99 {cuts[98]:8.1f}")


def echo(read_fd: int, write_fd: int, spin: bool) -> None:
    channel = Channel(read_fd, write_fd)
    while channel.receive(spin=spin).get("op") != "end":
        channel.send({"event": "trial", "ms": 1.0, "outputs": [{"dtype": "float32", "shape": [1]}]})


def round_trips(iterations: int, idle_s: float, spin: bool = False) -> list[float]:
    from_parent, to_child = os.pipe()  # (read end, write end)
    from_child, to_parent = os.pipe()
    child = multiprocessing.Process(target=echo, args=(from_parent, to_parent, spin))
    child.start()
    channel, seconds = Channel(from_child, to_child), []
    for _ in range(iterations):
        if idle_s:
            time.sleep(idle_s)  # both processes idle, as while a call runs on the GPU
        started = time.perf_counter()
        channel.send({"op": "trial"})
        channel.receive(spin=spin)
        seconds.append(time.perf_counter() - started)
    channel.send({"op": "end"})
    child.join()
    return seconds


def cuda_pieces(iterations: int, numel: int, device: str) -> dict:
    import torch

    from kernelbench_verified.evaluate.transport import export_values, release_exports
    from kernelbench_verified.measure.timing import TrialTools, timed_call

    tools = TrialTools(torch.device(device), flush_l2=False)
    empty, export = [], []
    for _ in range(iterations):
        tools.prepare()
        started = time.perf_counter()
        timed_call(lambda: None, tools.device, tools)
        empty.append(time.perf_counter() - started)
        output = torch.empty(numel, device=device)
        started = time.perf_counter()
        export_values([output])
        export.append(time.perf_counter() - started)
        release_exports([])
    return {"timed_call of a call that does nothing": empty, f"export of a fresh {numel}-float output": export}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--numel", type=int, default=1 << 22)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    rows = {"round trip, receiver busy": round_trips(args.iterations, 0.0),
            "round trip after 1 ms idle": round_trips(args.iterations, 0.001),
            "round trip after 1 ms idle, both spinning": round_trips(args.iterations, 0.001, spin=True)}
    if args.device.startswith("cuda"):
        rows.update(cuda_pieces(args.iterations, args.numel, args.device))
    for name, seconds in rows.items():
        print(f"{name:45s} {quantiles_us(seconds)}  us")


if __name__ == "__main__":
    main()
