"""The judge's record of one sample: every field it may hold, what each means, and the goodbye's figures.

A `JudgedRecord` is a dict (so it pickles, travels through Ray and is written as the same JSON as ever)
that accepts only the fields named in FIELDS, and only a `Status` as its eval_status: a misspelt key or
status raises where it is written. results.new_record turns it into the stored record, where every field
but eval_status, runtime_stats and memory_stats lands in `metadata` under the same name.
"""

from __future__ import annotations

import json
import platform
import time

from ..verdicts import Flag, Status

FIELDS = {
    # the verdict
    "eval_status": "the sample's Status",
    "compiled": "the file built and ModelNew could be constructed",
    "error": "why the sample failed, as a person can act on it",
    "phase": "the sandbox's request that raised (a reported failure)",
    "compiler_output": "the build's error lines",
    "failed_case": "the first case or audit that failed (or the policy that failed it)",
    "cases": "the judge's verdict on each correctness case, in order",
    "all_cases_recorded": "every case was compared, even after one failed (the leaderboard may re-judge)",
    "timed_checks": "the audits of timed calls, chosen after the timed phase",
    "integrity": "flags ('code: detail') that never change the verdict; some withhold the time",
    # the timed phase and the judge's clock
    "runtime_stats": "the reported times' statistics",
    "memory_stats": "the kernel's GPU memory, as its process measured it",
    "judge_wall_stats": "the judge's clock's statistics over the same calls",
    "judge_clock_overhead_ms": "what the judge's clock added to the reference's calibration trials",
    "judge_clock": "which clock timed the calls (clock.SLACKS' key)",
    "judge_trials_ms": "the raw per-call figures, to microseconds",
    "judge_clock_gap_ms": "median gap of the judge's clock over the reported time, less the calibration's",
    "judge_clock_mean_gap_ms": "the same gap's mean, less the calls waited longest for",
    "judge_clock_catches_from": "the share of the runtime a fake must exceed to be caught",
    "judge_clock_slack": "the slack the sample was judged with, and how many calibrations fitted it",
    "trial_phases_at": "when each trial phase ran (Unix seconds)",
    "trial_loop_seconds": "each trial phase's host seconds by step: inputs, arm, trial, rest",
    "reference_ms": "the reference's median time in this sandbox (refinement feedback)",
    "reference_peak_bytes": "the GPU memory the reference's calibration took in the sandbox",
    # beyond the hidden distributions, after a correct verdict (robustness.py); they never change it
    "perturbed_parameters": "D5: the case with the reference's constant-initialised tensors perturbed",
    "unmatched_parameters": "D5: the reference's perturbed tensors the kernel's model has no counterpart for",
    "shape_variants": "S1, S2: the kernel on other shapes, each passed, failed or not_applicable",
    "robustness_seconds": "the seconds D5 and the shape variants took",
    "robustness_builds": "the builds their sandboxes say they ran: [name, seconds, succeeded]",
    "clock_retry": "the first attempt's figures of a sample the clock doubted and judged again",
    "phase_seconds": "where the evaluation's seconds went",
    "sandbox_setup_seconds": "what setting up CUDA took the sandbox, ahead of its job (spares.Spares.prepare)",
    "eval_seconds": "the evaluation's seconds, start to end",
    # what the sandbox said of itself (informational only)
    "extension_builds": "the builds the sandbox says it ran: [name, seconds, succeeded]",
    "precision_flags": "the precision flags in force in the sandbox at its end",
    "sandbox_reports": "what the kernel's process reported about itself",
    "triton_cache": "the Triton cache warm-up's outcome",
    # where and how the sandbox ended
    "jail_survivors": "processes of the sandbox still alive after it was killed (then killed)",
    "host_memory_peak_bytes": "the sandbox's host-memory peak, by its cgroup",
    "log_tail": "the end of the sandbox's output, for a sample that did not finish",
    "judge_tensors": "the judge's largest live tensors when its own memory ran out",
    # where it ran
    "hardware": "the device's name",
    "timed_cpu": "the CPU the sandbox was timed on",
    "gpu_pci_address": "which physical GPU judged it",
    "build_dir": "the kernel's build directory",
    "build_shipped_bytes": "eval_mode=ray with shipped builds: the packed build's size",
    "ray_attempt": "eval_mode=ray: which attempt this record is",
}


class JudgedRecord(dict):
    """The judge's record: a dict of FIELDS only, with a Status for eval_status."""

    def __init__(self, *args, **fields):
        super().__init__()
        self.update(*args, **fields)

    def __setitem__(self, key: str, value) -> None:
        if key not in FIELDS:
            raise KeyError(f"{key!r} is no field of a judged record (evaluate.record.FIELDS)")
        if key == "eval_status" and value is not None:
            value = Status(value)
        super().__setitem__(key, value)

    def update(self, *args, **fields) -> None:
        for key, value in dict(*args, **fields).items():
            self[key] = value

    def setdefault(self, key: str, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def __reduce__(self):  # pickled as its items, rebuilt through the checks
        return (type(self), (dict(self),))

    def copy(self) -> JudgedRecord:
        return JudgedRecord(self)

    @property
    def status(self) -> Status | None:
        return self.get("eval_status")


def failure(status: Status, error: str, **fields) -> JudgedRecord:
    """The record of a sample that ended before or without a judge (missing, refused, not built)."""
    return JudgedRecord(eval_status=status, error=error, **fields)


def note_goodbye(record: JudgedRecord, bye: dict) -> None:
    """What the sandbox's "bye" says of itself, bounded: its precision flags, its extension builds (a
    guarded build that failed means the verdict and time are of the kernel's PyTorch path) and its reports."""
    record["precision_flags"] = bounded_json(bye.get("precision_flags"))
    record["extension_builds"] = reported_builds(bye.get("builds"))
    failed = [name for name, _, built in record["extension_builds"] if not built]
    if failed:
        record["integrity"] = [*record.get("integrity", []),
                               Flag.EXTENSION_BUILD_FAILED.saying(", ".join(failed)[:200])]
    reports = bye.get("reports")
    record["sandbox_reports"] = [str(r)[:300] for r in reports][:20] if isinstance(reports, list) else []


def reported_builds(reported) -> list:
    """The extension builds a sandbox says it ran, [name, seconds, succeeded], bounded: informational
    only (the kernel's own process reports them), to show builds that ran while a GPU waited."""
    if not isinstance(reported, list):
        return []
    return [[str(b[0])[:120], float(b[1]) if isinstance(b[1], (int, float)) else -1.0, b[2] is True]
            for b in reported[:20] if isinstance(b, list) and len(b) == 3]


def bounded_json(value, limit: int = 4000):
    """A small JSON value from the sandbox, or None: the judge stores nothing large or odd."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        return None
    return value if len(text) <= limit else None


class PhaseClock:
    """Adds the seconds since the previous lap to phases[name]: where a job's seconds go, for benchmarks."""

    def __init__(self, phases: dict):
        self.phases, self.last = phases, time.monotonic()

    def __call__(self, name: str) -> None:
        now = time.monotonic()
        self.phases[name] = round(self.phases.get(name, 0.0) + now - self.last, 4)
        self.last = now


def note_place(record: JudgedRecord, device, timed_cpu: int | None) -> None:
    """Where the sample was judged: the device's name, the timed CPU, the physical GPU."""
    record["hardware"] = hardware_name(device)
    if timed_cpu is not None:
        record["timed_cpu"] = timed_cpu
    if device.type == "cuda":  # which physical GPU judged it (CUDA_VISIBLE_DEVICES renumbers)
        record["gpu_pci_address"] = pci_address(device)


def pci_address(device) -> str:
    """domain:bus:device of a GPU, as nvidia-smi prints it (00000000:00:07.0 -> 0000:00:07)."""
    import torch

    props = torch.cuda.get_device_properties(device)
    fields = [getattr(props, f"pci_{name}_id", None) for name in ("domain", "bus", "device")]
    if None in fields:
        return "?"
    domain, bus, slot = fields
    return f"{domain:04x}:{bus:02x}:{slot:02x}"


def hardware_name(device) -> str:
    if device.type == "cuda":
        import torch

        return torch.cuda.get_device_name(device)
    return f"cpu ({platform.machine()})"
