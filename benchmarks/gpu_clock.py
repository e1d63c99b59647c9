"""A judge's clock on the GPU's own timeline: how small a timing fake it could see, measured.

    python benchmarks/gpu_clock.py [--mode queued|synced] [--call matmul|launches] [--runs 6] [--lead-us 400]

The prototype of the judge's GPU clock (evaluate/timeline.py), kept to compare its modes; the judge's
clock before it (host_trial) ran from its "trial" message to its copy of the outputs, so two messages,
two wake-ups, the outputs' export and their mapping sit in the window, and their drift between the
calibration and the timed calls (35-58 us sd per sample on the H200) is what the slack must cover. Here the window is two events of the judge's own stream, T0 and T1, and the judge
queues its whole part before it tells the kernel's process to go:

    judge  stream: sleep(lead) | T0 | write inputs | record J | wait for the flag | copy outputs | T1
    kernel process, mode `queued`: stream waits J | start | call | end | flag = n
    kernel process, mode `synced`: host waits J | start | call | device-wide sync | end | flag = n

J is an interprocess event; the flag is a word of the kernel's memory that the judge's stream waits on
(cuStreamWaitValue32), so the judge's copy starts as soon as the kernel writes it, with no message and
no wake-up of the judge in between. `queued` lets the kernel's launches queue while the GPU sleeps (so
host launch time drops out of the call's own time: a launch-bound call's time would change meaning);
`synced` keeps today's meaning (timed_call: the host launches after the GPU reached J, the end event
follows a device-wide synchronisation, so work on side streams counts), at the price of the host's
wake-up after J inside the window. `--call launches` is a launch-bound call (many tiny kernels).

Each run is a fresh kernel process: the call timed alone in it first (`alone`: the kernel's events as
timed_call records them, no judge), then a calibration phase and a timed phase, like a sample. Prints
per run the median gap (T1 - T0 minus the reported time) of both phases, and over runs the spread of
their difference: the smallest fake this clock could catch is a few times that spread. `reported` against
`alone` tells whether the judge's part (its sleep, its waiting stream) changes the call's own time.
"""

import argparse
import statistics
import sys
from pathlib import Path

import torch
import torch.multiprocessing as mp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kernelbench_verified.measure.timing import sleep_cycles_per_us, stream_wait_value  # noqa: E402

LAUNCHES = 400  # --call launches: this many tiny kernels, a few microseconds of GPU work each


def make_call(kind: str, n: int, device):
    """(inputs x, outputs y, the call): y from x, so a call on stale inputs gives stale outputs."""
    if kind == "matmul":
        x, y, w = (torch.empty(n, n, device=device) for _ in range(3))
        w.normal_()
        return x, y, lambda: torch.matmul(x, w, out=y)
    x, y = torch.empty(4096, device=device), torch.empty(4096, device=device)

    def launches():
        y.copy_(x)
        for _ in range(LAUNCHES - 1):
            y.add_(1.0)
    return x, y, launches


def kernel_process(conn, mode: str, kind: str, n: int) -> None:
    """The kernel's side: the buffers and the flag the judge uses, then one call per request."""
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device("cuda", 0)
    x, y, call = make_call(kind, n, device)
    flag = torch.zeros(1, dtype=torch.int32, device=device)
    x.normal_()
    conn.send((x, y, flag, alone(call, device)))
    go = torch.cuda.Event.from_ipc_handle(device, conn.recv())
    while (request := conn.recv()) != "end":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if mode == "queued":
            torch.cuda.current_stream().wait_event(go)
            start.record()
            call()
        else:
            go.synchronize()  # the host launches once the GPU has reached J, as it would on an idle GPU
            start.record()
            call()
            torch.cuda.synchronize(device)
        end.record()
        flag.fill_(request)
        end.synchronize()
        conn.send(start.elapsed_time(end))


def alone(call, device, calls: int = 50) -> float:
    """Median ms of the call timed as timed_call times it, with no judge."""
    times = []
    for _ in range(calls + 5):
        torch.cuda.synchronize(device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        torch.cuda.synchronize(device)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times[5:])


def one_call(conn, shared, go, number: int, lead_cycles: int) -> tuple[float, float]:
    """(GPU window ms, reported ms) of one call: the judge's part is queued before the kernel's."""
    x, y, flag = shared
    t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fresh = torch.randn_like(x)
    torch.cuda.synchronize()
    torch.cuda._sleep(lead_cycles)
    t0.record()
    x.copy_(fresh)
    go.record()
    stream_wait_value(flag, number)
    copy = y.clone()
    t1.record()
    conn.send(number)
    reported = conn.recv()
    t1.synchronize()
    del copy
    return t0.elapsed_time(t1), reported


def one_run(args, lead_cycles: int) -> dict:
    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    child = ctx.Process(target=kernel_process, args=(there, args.mode, args.call, args.n))
    child.start()
    x, y, flag, alone_ms = here.recv()
    go = torch.cuda.Event(interprocess=True)
    go.record()  # created on the GPU before its handle is taken
    here.send(go.ipc_handle())
    number, phases = 0, {}  # the flag this process made is 0; each call's number is one more
    for name, calls in (("warm-up", 5), ("calibration", args.calls), ("timed", args.calls)):
        rows = []
        for _ in range(calls):
            number += 1
            rows.append(one_call(here, (x, y, flag), go, number, lead_cycles))
        phases[name] = {"gap": statistics.median(w - r for w, r in rows), "reported": statistics.median(r for _, r in rows)}
    here.send("end")
    child.join()
    return {"alone": alone_ms, **phases}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("queued", "synced"), default="synced")
    parser.add_argument("--call", choices=("matmul", "launches"), default="matmul")
    parser.add_argument("--n", type=int, default=2560, help="--call matmul: n x n float32 (2560: about 0.7 ms)")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--lead-us", type=float, default=400, help="how long the GPU sleeps while the host queues")
    args = parser.parse_args()
    lead_cycles = int(args.lead_us * sleep_cycles_per_us(0))
    diffs = []
    print(f"mode {args.mode}, call {args.call}, lead {args.lead_us:.0f} us")
    for run in range(args.runs):
        result = one_run(args, lead_cycles)
        calibration, timed = result["calibration"], result["timed"]
        diffs.append(timed["gap"] - calibration["gap"])
        print(f"run {run}: alone {result['alone']:.3f} ms, reported {timed['reported']:.3f} ms; gap calibration / "
              f"timed {calibration['gap'] * 1e3:7.1f} / {timed['gap'] * 1e3:7.1f} us")
    print(f"timed minus calibration gap over {args.runs} runs: sd {statistics.pstdev(diffs) * 1e3:.1f} us, "
          f"min {min(diffs) * 1e3:+.1f}, max {max(diffs) * 1e3:+.1f} us; a 10 % fake of this call moves the gap by "
          f"{timed['reported'] * 100:.1f} us")


if __name__ == "__main__":
    main()
