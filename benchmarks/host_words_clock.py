"""A judge's clock on the host, from words in shared host memory: how steady it is, measured.

    python benchmarks/host_words_clock.py [--runs 4] [--calls 100]

The judge's GPU clock (evaluate/timeline.py) waits on the kernel's `done` from a stream of its own, so
two CUDA contexts hold work during the window; on the H200 that window carries ~0.33 ms beyond the call,
and its honest gap drifts +-0.02 ms between a sample's calibration and its timed calls. Here the judge's
context is idle during the window: three int32 words lie in a page of shared memory (a memfd) that the
kernel's process registers with CUDA (cudaHostRegister), so its stream can wait on and write them.

    kernel: stream waits go >= n | ready | host: armed = n, spins on ready | timed call | copy | done = n
    judge:  inputs, flush, sync | spins until armed = n | T0, go = n | spins until done = n | T1 | copy

The judge's host starts the window once the kernel's host is spinning (armed), so neither side's
wake-up lies in it. `--gpu-wait`: the kernel's stream waits on `go` (as in timeline.py) instead of its
host spinning on it; `--idle-ms`: the judge's GPU idles that long before T0. Each run is a fresh kernel
process with one call (matmul of n x n, or many tiny launches): a calibration phase, then a timed
phase, like a sample. Prints per run the median gap (T1 - T0 minus the reported time) of both phases
and of the timed phase's two halves, and where the kernel's host was, per call, after T0.

On the H200 (session 19, benchmarks/results/h200_session_19/host_words_*.log) the window still held
0.19-0.32 ms beyond the call, whichever variant, and the timed-minus-calibration gap drifted 3-25 us sd
over runs, as with the GPU-side words: the kernel's start event runs ~0.13 ms after its host queued it
on an idle GPU, a latency outside the event time but inside any window the judge can draw.
"""

import argparse
import ctypes
import mmap
import os
import statistics
import struct
import sys
import time
from pathlib import Path

import torch
import torch.multiprocessing as mp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gpu_clock import make_call  # noqa: E402
from kernelbench_verified.measure.timing import l2_flusher, _stream_value_op  # noqa: E402

GO, DONE, ARMED = 0, 4, 8  # byte offsets of the words in the page
BREAKDOWN = []  # per call, ms after T0: go seen, start queued, call queued, synced, done queued, end seen, T1
CALLS = {"matmul_1024": ("matmul", 1024), "matmul_2560": ("matmul", 2560), "matmul_6144": ("matmul", 6144),
         "launches": ("launches", 0)}


def word(page: mmap.mmap, offset: int) -> int:
    return struct.unpack_from("i", page, offset)[0]


def device_pointer(address: int) -> int:
    driver = ctypes.CDLL("libcuda.so.1")
    pointer = ctypes.c_uint64()
    code = driver.cuMemHostGetDevicePointer_v2(ctypes.byref(pointer), ctypes.c_void_p(address), 0)
    if code != 0:
        raise RuntimeError(f"cuMemHostGetDevicePointer returned {code}")
    return pointer.value


def kernel_process(conn, page_path: str, kind: str, n: int, gpu_wait: bool) -> None:
    device = torch.device("cuda", 0)
    torch.cuda.init()
    x, y, call = make_call(kind, n, device)
    slot = torch.empty_like(y)
    fd = os.open(page_path, os.O_RDWR)
    page = mmap.mmap(fd, 4096)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    code = torch.cuda.cudart().cudaHostRegister(address, 4096, 2)  # cudaHostRegisterMapped
    if int(code) != 0:
        raise RuntimeError(f"cudaHostRegister returned {code}")
    base = device_pointer(address)
    wait, write = _stream_value_op("cuStreamWaitValue32"), _stream_value_op("cuStreamWriteValue32")
    conn.send((x, slot))
    ready = torch.cuda.Event()
    while (mark := conn.recv()) != "end":
        stream = torch.cuda.current_stream(device).cuda_stream
        if gpu_wait:
            wait(stream, base + GO, mark, 0)
            ready.record()
            struct.pack_into("i", page, ARMED, mark)
            while not ready.query():
                pass
        else:
            struct.pack_into("i", page, ARMED, mark)
            while word(page, GO) != mark:
                pass
        marks = [time.perf_counter()]
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        marks.append(time.perf_counter())
        call()
        marks.append(time.perf_counter())
        torch.cuda.synchronize(device)
        marks.append(time.perf_counter())
        end.record()
        slot.copy_(y)
        write(stream, base + DONE, mark, 0)
        marks.append(time.perf_counter())
        end.synchronize()
        marks.append(time.perf_counter())
        conn.send((start.elapsed_time(end), marks))


def spin_until(page: mmap.mmap, offset: int, mark: int, seconds: float = 10.0) -> float:
    deadline = time.perf_counter() + seconds
    while word(page, offset) != mark:
        if time.perf_counter() > deadline:
            raise TimeoutError(f"word {offset} never reached {mark}")
    return time.perf_counter()


def one_call(conn, page, x, slot, flush, mark: int, idle_ms: float) -> tuple[float, float]:
    x.copy_(torch.randn_like(x))
    flush()
    torch.cuda.synchronize()
    time.sleep(idle_ms / 1e3)  # the judge's context idle this long before T0
    conn.send(mark)
    spin_until(page, ARMED, mark)
    t0 = time.perf_counter()
    struct.pack_into("i", page, GO, mark)
    t1 = spin_until(page, DONE, mark)
    copy = slot.clone()
    reported, marks = conn.recv()
    torch.cuda.synchronize()
    del copy
    BREAKDOWN.append([(m - t0) * 1e3 for m in marks] + [(t1 - t0) * 1e3])
    return (t1 - t0) * 1e3, reported


def one_run(name: str, calls: int, flush, gpu_wait: bool, idle_ms: float) -> dict:
    kind, n = CALLS[name]
    fd = os.memfd_create("kbv_words")
    os.ftruncate(fd, 4096)
    page = mmap.mmap(fd, 4096)
    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    child = ctx.Process(target=kernel_process, args=(there, f"/proc/{os.getpid()}/fd/{fd}", kind, n, gpu_wait))
    child.start()
    x, slot = here.recv()
    mark, phases = 0, {}
    for phase, count in (("warm-up", 5), ("calibration", calls), ("timed", calls)):
        rows = []
        for _ in range(count):
            mark += 1
            rows.append(one_call(here, page, x, slot, flush, mark, idle_ms))
        gaps = [w - r for w, r in rows]
        phases[phase] = {"gap": statistics.median(gaps), "reported": statistics.median(r for _, r in rows),
                         "halves": statistics.median(gaps[: count // 2]) - statistics.median(gaps[count // 2:])}
    here.send("end")
    child.join()
    os.close(fd)
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--idle-ms", type=float, default=0.0, help="the judge's GPU idle this long before T0")
    parser.add_argument("--only", nargs="*", default=list(CALLS), choices=list(CALLS))
    parser.add_argument("--gpu-wait", action="store_true", help="the kernel's stream waits on go (else its host spins)")
    args = parser.parse_args()
    flush = l2_flusher(torch.device("cuda", 0))
    for name in args.only:
        diffs = []
        for run in range(args.runs):
            phases = one_run(name, args.calls, flush, args.gpu_wait, args.idle_ms)
            calibration, timed = phases["calibration"], phases["timed"]
            diffs.append(timed["gap"] - calibration["gap"])
            print(f"{name} run {run}: reported {timed['reported']:.3f} ms; gap calibration / timed "
                  f"{calibration['gap'] * 1e3:6.1f} / {timed['gap'] * 1e3:6.1f} us, timed halves differ "
                  f"{timed['halves'] * 1e3:+5.1f} us", flush=True)
        columns = list(zip(*BREAKDOWN))
        print("  median ms after T0 (go seen, start queued, call queued, synced, done queued, end seen, T1):",
              " ".join(f"{statistics.median(c):.4f}" for c in columns))
        BREAKDOWN.clear()
        print(f"{name}: timed minus calibration gap over {args.runs} runs: sd {statistics.pstdev(diffs) * 1e3:.1f} us, "
              f"min {min(diffs) * 1e3:+.1f}, max {max(diffs) * 1e3:+.1f} us", flush=True)


if __name__ == "__main__":
    main()
