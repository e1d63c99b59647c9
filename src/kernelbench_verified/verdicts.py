"""The words a record uses for its verdict: statuses and integrity flags, one enum each.

Both are string enums, so a record written with them is the same JSON as before (`"eval_status":
"correct"`, `"integrity": ["timing_below_judge_clock: ..."]`), old files load as they are, and a misspelt
name fails where it is written (`Status("corect")` raises) instead of reading as some other status.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """A sample's eval_status. Only the judge's own comparisons make a sample CORRECT."""

    CORRECT = "correct"
    INCORRECT = "incorrect"  # a case or an audit compared unequal (metadata.failed_case names it)
    COMPILE_ERROR = "compile_error"
    LOAD_ERROR = "load_error"
    RUNTIME_ERROR = "runtime_error"
    CUDA_ERROR = "cuda_error"
    OUT_OF_MEMORY = "out_of_memory"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    RESOURCE_LIMIT = "resource_limit"  # a jail limit ended the kernel's process
    PROTOCOL_VIOLATION = "protocol_violation"  # a message out of place or unreadable
    HARNESS_ERROR = "harness_error"  # the harness failed, not the kernel (never a pass)
    MISSING_KERNEL = "missing_kernel"
    REFUSED_KERNEL = "refused_kernel"  # a symlink, a file outside the run folder, too large
    NOT_RUN = "not_run"  # rejected by the static checks before running
    REJECTED_STATIC = "rejected_static"  # static_check=reject: an error finding failed the sample
    WARMED = "warmed"  # the Triton cache warm-up's own outcome, never a sample's
    ROBUSTNESS_DONE = "robustness_done"  # a robustness sandbox's own outcome, never a sample's


# A sample counts as compiled once its file built and ModelNew can be constructed from it.
NOT_COMPILED = (Status.COMPILE_ERROR, Status.LOAD_ERROR)
# The failing statuses a sandbox may report about itself (it can only make itself fail); any other
# status in a message is a protocol violation. CORRECT comes only from the judge's own comparisons.
REPORTABLE_FAILURES = (Status.COMPILE_ERROR, Status.LOAD_ERROR, Status.RUNTIME_ERROR, Status.CUDA_ERROR,
                       Status.OUT_OF_MEMORY)


class Flag(StrEnum):
    """The code of an integrity flag; a record's `integrity` holds "code: what was seen"."""

    # the judge's clock against the reported times
    TIMING_BELOW_EMPTY_CALL = "timing_below_empty_call"
    PERSISTING_L2_NOT_RESET = "persisting_l2_not_reset"
    TIMING_EXCEEDS_WALL_CLOCK = "timing_exceeds_wall_clock"
    TIMING_FAR_BELOW_WALL_CLOCK = "timing_far_below_wall_clock"
    TIMING_BELOW_JUDGE_CLOCK = "timing_below_judge_clock"
    TIMING_MEAN_BELOW_JUDGE_CLOCK = "timing_mean_below_judge_clock"
    # the judge's reading of the sandbox's goodbye
    EXTENSION_BUILD_FAILED = "extension_build_failed"

    def saying(self, detail: str) -> str:
        """The flag as a record stores it."""
        return f"{self.value}: {detail}"


# Flags that make a correct sample's measured time untrustworthy: its runtime is withheld.
UNTRUSTED_TIMING_FLAGS = (Flag.PERSISTING_L2_NOT_RESET, Flag.TIMING_EXCEEDS_WALL_CLOCK,
                          Flag.TIMING_FAR_BELOW_WALL_CLOCK, Flag.TIMING_BELOW_JUDGE_CLOCK,
                          Flag.TIMING_MEAN_BELOW_JUDGE_CLOCK, Flag.TIMING_BELOW_EMPTY_CALL)


def flag_codes(integrity) -> list[str]:
    """The codes of a record's integrity flags, in order (any flag, ours or the sandbox's)."""
    return [str(flag).split(":")[0] for flag in integrity or []]
