"""A judge's clock on the GPU's own timeline: how small a timing fake it could see, measured.

    python benchmarks/gpu_clock.py [--n 2560] [--calls 100] [--runs 6] [--lead-us 400]

The judge's clock today (judge.run_trials) is the host's: from its "trial" message to its copy of the
outputs, so two messages, two wake-ups and the mapping of the outputs sit in the window, and their
drift between the calibration and the timed calls (about 0.05 ms sd per sample on the H200) is what
the slack must cover. Here the window is two events of the judge's own stream instead, and every
host step is queued before the GPU reaches it:

    judge  stream: sleep(lead) | T0 | write inputs | record J |              ... wait S | copy outputs | T1
    kernel stream:                                  wait J | call (its own events s, e) | record S

J and S are interprocess events (ordering only). The judge queues its part up to "record J", then asks
the kernel's process to queue its part, then queues "wait S, copy, T1", all while the GPU still
sleeps, so T1 - T0 holds the inputs' write, the call, the context switches and the copy, and no host
latency (a call whose host steps outlast the lead is counted `late`). The inputs exist only after T0,
so no work on them can fall before the window; a kernel that records S before its work is done
leaves outputs that the judge's audits of copied calls find wrong, as today.

Each run is a fresh kernel process: a calibration phase (the same call) and a timed phase, like a
sample. Prints per run the median gap (T1 - T0 minus the reported time) of both phases and their
difference, and over runs the difference's spread: the smallest fake this clock could catch is a few
times that spread. Then the same for the host's clock on the same calls (from queuing the sleep to
the end of the copy, so the lead is in it as a constant), for comparison.
"""

import argparse
import statistics
import time

import torch
import torch.multiprocessing as mp


def kernel_process(conn, n: int) -> None:
    """The kernel's side: buffers the judge writes and reads, and the call queued on request."""
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device("cuda", 0)
    x = torch.empty(n, n, device=device)
    y = torch.empty(n, n, device=device)
    w = torch.randn(n, n, device=device)
    ready = torch.cuda.Event(interprocess=True)
    conn.send((x, y, ready.ipc_handle()))
    judge_handle = conn.recv()
    go = torch.cuda.Event.from_ipc_handle(device, judge_handle)
    while True:
        while not conn.poll():
            pass
        if conn.recv() == "end":
            return
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.current_stream().wait_event(go)
        start.record()
        torch.matmul(x, w, out=y)
        end.record()
        ready.record()
        conn.send("queued")
        end.synchronize()
        conn.send(start.elapsed_time(end))


def sleep_cycles_per_us() -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)  # first use
    start.record()
    torch.cuda._sleep(2_000_000)
    end.record()
    end.synchronize()
    return 2_000_000 / (start.elapsed_time(end) * 1e3)


def wait(conn):
    while not conn.poll():
        pass
    return conn.recv()


def one_call(conn, x, y, go, ready, lead: tuple[int, float]) -> tuple[float, float, float, bool]:
    """(GPU window ms, host window ms, reported ms, late) of one call; `lead`: (sleep cycles, seconds)."""
    t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fresh = torch.rand_like(x)
    torch.cuda.synchronize()
    queued_at = time.perf_counter()
    torch.cuda._sleep(lead[0])
    t0.record()
    x.copy_(fresh)
    go.record()
    conn.send("call")
    wait(conn)  # "queued"
    torch.cuda.current_stream().wait_event(ready)
    copy = y.clone()
    t1.record()
    host_queued = time.perf_counter() - queued_at
    t1.synchronize()
    host_ms = (time.perf_counter() - queued_at) * 1e3
    reported = wait(conn)
    del copy
    return t0.elapsed_time(t1), host_ms, reported, host_queued > 0.8 * lead[1]


def phase(conn, x, y, go, ready, calls: int, lead: tuple[int, float]) -> dict:
    rows = [one_call(conn, x, y, go, ready, lead) for _ in range(calls)]
    return {"gpu_gap": statistics.median(g - r for g, _, r, _ in rows),
            "host_gap": statistics.median(h - r for _, h, r, _ in rows),
            "reported": statistics.median(r for _, _, r, _ in rows), "late": sum(late for *_, late in rows)}


def one_run(n: int, calls: int, lead: tuple[int, float]) -> tuple[dict, dict]:
    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    child = ctx.Process(target=kernel_process, args=(there, n))
    child.start()
    x, y, ready_handle = here.recv()
    go = torch.cuda.Event(interprocess=True)
    here.send(go.ipc_handle())
    ready = torch.cuda.Event.from_ipc_handle(torch.device("cuda", 0), ready_handle)
    for _ in range(5):
        one_call(here, x, y, go, ready, lead)  # warm-up
    calibration = phase(here, x, y, go, ready, calls, lead)
    timed = phase(here, x, y, go, ready, calls, lead)
    here.send("end")
    child.join()
    return calibration, timed


def spread(values: list[float]) -> str:
    return (f"sd {statistics.pstdev(values) * 1e3:7.1f} us, min {min(values) * 1e3:+7.1f}, "
            f"max {max(values) * 1e3:+7.1f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2560, help="the call: an n x n float32 matmul (2560: about 0.5 ms)")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--lead-us", type=float, default=400, help="how long the GPU sleeps while the host queues")
    args = parser.parse_args()
    lead = (int(args.lead_us * sleep_cycles_per_us()), args.lead_us / 1e6)
    gpu_diffs, host_diffs = [], []
    for run in range(args.runs):
        calibration, timed = one_run(args.n, args.calls, lead)
        gpu_diffs.append(timed["gpu_gap"] - calibration["gpu_gap"])
        host_diffs.append(timed["host_gap"] - calibration["host_gap"])
        print(f"run {run}: call {timed['reported']:.3f} ms; gap calibration / timed, GPU clock "
              f"{calibration['gpu_gap'] * 1e3:6.1f} / {timed['gpu_gap'] * 1e3:6.1f} us, host clock "
              f"{calibration['host_gap'] * 1e3:6.1f} / {timed['host_gap'] * 1e3:6.1f} us; "
              f"late calls {calibration['late']} + {timed['late']}")
    print(f"timed minus calibration gap over {args.runs} runs: GPU clock {spread(gpu_diffs)}; "
          f"host clock {spread(host_diffs)}")
    print(f"a 10 % fake of this call moves the gap by {timed['reported'] * 100:.1f} us")


if __name__ == "__main__":
    main()
