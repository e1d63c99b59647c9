"""What one timed call costs beyond the call itself, step by step, on this device.

    python benchmarks/trial_overhead.py [--problems PATH ...] [--repeats 200] [--out figures.json]

Per timed call the judge (evaluate/timed.py, TrialPhase.run) makes fresh inputs, asks the sandbox to
"arm" (finish the last call, give back persisting L2), writes the inputs into the sandbox's buffers,
flushes L2 and sends "trial"; the record's `judge_trials_ms` shows a few milliseconds a call pass outside
the call's own time. This prints the median and 90th percentile microseconds of each step alone, so the
largest is known before any of it is changed:

  sync          torch.cuda.synchronize with nothing queued
  l2_reset      the sandbox's persisting-L2 reset (measure.timing.reset_persisting_l2) after a sync
  l2_flush      the judge's L2 flush (a buffer twice L2's size written) and a sync
  message       one message to another process and its reply over the judge's Channel, the reply
                awaited asleep as the judge awaits it ("message_spin": polling)
  arm           the same, the other process doing what the sandbox does on "arm" (TrialTools.prepare:
                synchronise, reset persisting L2) before it replies
  inputs        a problem's fresh inputs (problems.inputs.case_inputs, as the judge makes them) and a sync
  write_inputs  those inputs copied into buffers of their shape (TrialPhase.write_inputs) and a sync

Without a GPU the CUDA steps are skipped and the rest runs on the CPU, on the tiny example's ReLU unless
--problems names others.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A level-2 problem with 512 MiB of inputs and a launch-bound level-3 one; on the CPU (where making a
# benchmark problem's inputs takes seconds) the tiny example's ReLU.
GPU_PROBLEMS = [ROOT / "KernelBench" / "level2" / "1_Conv2D_ReLU_BiasAdd.py",
                ROOT / "KernelBench" / "level3" / "36_LSTMHn.py"]
CPU_PROBLEMS = [ROOT / "examples" / "tiny" / "KernelBench" / "level1" / "1_ReLU.py"]

# The other process: answers each message at once ("echo"), or after what the sandbox does on "arm".
PEER = """
import sys
from kernelbench_verified.evaluate.channel import Channel, ChannelClosed
channel = Channel(int(sys.argv[1]), int(sys.argv[2]))
cuda = sys.argv[3] == "cuda"
if cuda:
    import torch
    from kernelbench_verified.measure.timing import TrialTools
    tools = TrialTools(torch.device("cuda"), flush_l2=False)  # as the sandbox makes them
channel.send({"ready": True})
while True:
    try:
        message = channel.receive()
    except ChannelClosed:
        break
    if message.get("op") == "arm" and cuda:
        tools.prepare()  # what the sandbox does on "arm"
    channel.send({"done": True})
"""


def percentiles(samples_us: list[float]) -> dict:
    ordered = sorted(samples_us)
    return {"median_us": round(statistics.median(ordered), 1),
            "p90_us": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 1)}


def timed(step, repeats: int, before=lambda: None) -> dict:
    """`step()` timed `repeats` times on the host clock (it synchronises itself), after `before()`."""
    samples = []
    for _ in range(repeats):
        before()
        started = time.perf_counter()
        step()
        samples.append((time.perf_counter() - started) * 1e6)
    return percentiles(samples)


def peer_steps(device_type: str, repeats: int) -> dict:
    """Round trips to another process over the judge's Channel: plain, spinning, and "arm"."""
    from kernelbench_verified.evaluate.channel import Channel

    to_peer, from_judge = os.pipe()
    to_judge, from_peer = os.pipe()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    peer = subprocess.Popen([sys.executable, "-c", PEER, str(to_peer), str(from_peer), device_type],
                            pass_fds=(to_peer, from_peer), env=env)
    os.close(to_peer)
    os.close(from_peer)
    channel = Channel(to_judge, from_judge)
    try:
        channel.receive(time.monotonic() + 120)
        figures = {}
        for name, op, spin in (("message", "echo", False), ("message_spin", "echo", True), ("arm", "arm", False)):
            if op == "arm" and device_type != "cuda":
                continue
            figures[name] = timed(lambda: (channel.send({"op": op}), channel.receive(spin=spin)), repeats)
        return figures
    finally:
        os.close(from_judge)
        peer.wait(timeout=60)
        os.close(to_judge)


def device_steps(device, repeats: int) -> dict:
    import torch

    from kernelbench_verified.measure.timing import l2_flusher, reset_persisting_l2

    if device.type != "cuda":
        return {}
    sync, flush = (lambda: torch.cuda.synchronize(device)), l2_flusher(device)
    return {"sync": timed(sync, repeats),
            "l2_reset": timed(reset_persisting_l2, repeats, before=sync),
            "l2_flush": timed(lambda: (flush(), sync()), repeats, before=sync)}


def input_steps(problem_path: Path, device, repeats: int) -> dict:
    """A problem's fresh inputs and their copy into buffers, as the judge makes and writes them."""
    import torch

    from kernelbench_verified.problems.inputs import Case, case_inputs
    from kernelbench_verified.problems.load import load_module

    problem = load_module(problem_path)
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    made = lambda index: case_inputs(Case(f"timed_{index}", index), problem, None, device, torch.float32)  # noqa: E731
    buffers = [torch.empty_like(x) if isinstance(x, torch.Tensor) else None for x in made(0)]
    fresh = made(1)
    counter = iter(range(2, 2 + repeats))

    def write():
        for buffer, value in zip(buffers, fresh):
            if buffer is not None:
                buffer.copy_(value)
        sync()

    size = sum(x.nbytes for x in fresh if isinstance(x, torch.Tensor))
    return {"input_bytes": size, "inputs": timed(lambda: (made(next(counter)), sync()), repeats, before=sync),
            "write_inputs": timed(write, repeats, before=sync)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="*", type=Path, help="problem files (default: GPU_PROBLEMS, "
                        "or CPU_PROBLEMS without a GPU)")
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--out")
    args = parser.parse_args()
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    problems = args.problems or (GPU_PROBLEMS if device.type == "cuda" else CPU_PROBLEMS)
    missing = [str(p) for p in problems if not p.is_file()]
    if missing:
        print(f"error: no problem file {', '.join(missing)} (pass --problems PATH ...)", file=sys.stderr)
        return 2
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    figures = {"device": name, "repeats": args.repeats, "steps": {**peer_steps(device.type, args.repeats),
                                                                  **device_steps(device, args.repeats)}}
    figures["problems"] = {p.name: input_steps(p, device, args.repeats) for p in problems}
    print(f"{name}: microseconds per step, median / 90th percentile, over {args.repeats} repeats")
    for step, values in figures["steps"].items():
        print(f"  {step:14} {values['median_us']:10.1f} {values['p90_us']:10.1f}")
    for problem, steps in figures["problems"].items():
        print(f"  {problem} ({steps['input_bytes'] / 2**20:.1f} MiB of inputs)")
        for step in ("inputs", "write_inputs"):
            print(f"    {step:12} {steps[step]['median_us']:10.1f} {steps[step]['p90_us']:10.1f}")
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
