"""What a peak-memory figure means: the arithmetic of the call's peak, the name of the method that
produced a recorded figure, and whether two figures may be divided. Torch-free, so the leaderboard reads
records and baseline files with the names the measurement (timing.peak_memory) writes.

A process's allocator holds more than the call under test: cuBLAS keeps a workspace per handle and stream
once any matmul ran (32 MiB on Hopper), a plain baseline process keeps it from earlier problems, the
kernel's process keeps what its reference calibration left. Counting all of it made a 1 MiB Tanh's
baseline 35.7 MB in a plain process against 2.1 MB in the kernel's. So the figure is the call's peak
above what was allocated just before it, the same in every process whatever ran there before.
"""

from __future__ import annotations

# The figure the harness records now, on both timing paths: peak allocated during one call minus what was
# allocated when it started (inputs, parameters, workspaces already resident), but at least the bytes of
# the storages the call returned (a kernel that hands back a buffer it keeps still needs its output).
CALL_ABOVE_RESIDENT = "call_above_resident"
# Figures recorded before the method had a name: the peak of everything allocated in the process over the
# call, in the kernel's process (every run record, and baselines of timing_path=sandbox) or in a plain
# process that had timed other problems before (baselines of timing_path=process, and files without a
# fingerprint).
TOTAL_IN_EVALUATOR = "total_in_evaluator"
TOTAL_IN_PLAIN_PROCESS = "total_in_plain_process"

DESCRIPTIONS = {
    CALL_ABOVE_RESIDENT: "the call's peak above what was resident before it",
    TOTAL_IN_EVALUATOR: "everything the kernel's process held at the call's peak (records before the method was named)",
    TOTAL_IN_PLAIN_PROCESS: "everything a plain process held at the call's peak, cuBLAS workspace and earlier "
                            "problems' leftovers included (baselines before the method was named)",
}


def call_peak(allocated_before: int, peak_allocated: int, output_bytes: int) -> int:
    """Bytes one call needed beyond what was allocated when it started: its outputs, temporaries and any
    workspace it allocated, never less than its outputs' storages."""
    return max(peak_allocated - allocated_before, output_bytes, 0)


def record_method(record: dict) -> str:
    """How an evaluation record's peak_memory was measured (memory_stats.method; older records: the
    process total)."""
    stats = record.get("memory_stats") if isinstance(record, dict) else None
    method = stats.get("method") if isinstance(stats, dict) else None
    return method if isinstance(method, str) else TOTAL_IN_EVALUATOR


def baseline_method(entry: dict, fingerprint: dict | None) -> str:
    """How a baseline entry's peak_memory was measured (its peak_memory_method; older files: the process
    total, in the kernel's process for timing_path=sandbox, else in a plain one)."""
    method = entry.get("peak_memory_method") if isinstance(entry, dict) else None
    if isinstance(method, str):
        return method
    return TOTAL_IN_EVALUATOR if (fingerprint or {}).get("timing_path") == "sandbox" else TOTAL_IN_PLAIN_PROCESS


def describe(method: str) -> str:
    return f"{method} ({DESCRIPTIONS[method]})" if method in DESCRIPTIONS else method
