"""The messages between the evaluator's processes, typed, torch-free.

Between the judge and its sandbox (JSON lines over `channel`): the judge's requests carry an `op`, the
sandbox's replies an `event`; both are string enums, so the wire is unchanged and a misspelt name fails
where it is written. Between a judge process and the dispatcher (a `reports.ReportQueue`): one
dataclass per report.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class SandboxMode(StrEnum):
    """What a sandbox is started for (its job's `mode`)."""

    EVAL = "eval"  # calibrate on the reference, load the kernel, answer the judge's requests
    WARM = "warm"  # one unjudged call, so Triton compiles into the kernel's build directory
    COMPILE = "compile"  # build the kernel and probe its lazy builds, on a CPU build worker
    ROBUSTNESS = "robustness"  # D5 and the shape variants of a correct sample (robustness.py)


class Op(StrEnum):
    """The judge's requests, in the order the judge makes them."""

    PREPARE = "prepare"  # a spare, before its job: set up CUDA now, while nothing is timed
    TIMING = "timing"  # keep buffers (and on CUDA output slots and clock words) for timed calls
    ARM = "arm"  # finish the last call's work; give back any persisting L2
    TRIAL = "trial"  # one timed call
    LOAD = "load"  # the calibration is done: time calls of no work, then load the kernel
    ALLOC = "alloc"  # sandbox-owned buffers for a request's inputs (CUDA)
    CALL = "call"  # one correctness call
    MEMORY = "memory"  # one call with the GPU's memory measured
    FRESH = "fresh"  # robustness: a new ModelNew from the judge's arguments and construction seed
    PERTURB = "perturb"  # robustness: D5's values set into that model before its first call
    END = "end"


class Event(StrEnum):
    """The sandbox's replies."""

    IDLE = "idle"  # a new sandbox's imports are done: it waits for its job (or "prepare")
    PREPARED = "prepared"
    READY = "ready"
    ARMED = "armed"
    TRIAL = "trial"
    EMPTY_CALLS = "empty_calls"
    COMPILED = "compiled"
    BUFFERS = "buffers"
    OUTPUT = "output"
    MEMORY = "memory"
    FRESH = "fresh"
    PERTURBED = "perturbed"
    BYE = "bye"
    ERROR = "error"  # a failure the sandbox reports about itself (verdicts.REPORTABLE_FAILURES)


@dataclass(frozen=True)
class JudgeFingerprint:
    """A judge process started: where and how its device times (measure.environment.fingerprint_for)."""

    worker_id: int
    fingerprint: dict


@dataclass(frozen=True)
class JobStarted:
    """A judge process took the job `key`: if the process dies now, this job is the one to blame."""

    worker_id: int
    key: str


@dataclass(frozen=True)
class JobDone:
    """A judge process finished the job `key` with `record` (a record.JudgedRecord)."""

    worker_id: int
    key: str
    record: dict
