"""The one peak-memory measurement (measure.timing.peak_memory) of kernels and baselines, driven by a fake
allocator: the CPU has no CUDA caching allocator, and the fake lets a test set what a process holds."""

import torch

from kernelbench_verified.measure import memory
from kernelbench_verified.measure.timing import peak_memory, storage_bytes

MiB = 1 << 20
CUBLAS_WORKSPACE = 32 * MiB  # what PyTorch keeps per cuBLAS handle and stream on Hopper


class FakeAllocator:
    """An allocator's readings: `resident` bytes held before the call; the call allocates through alloc()."""

    def __init__(self, resident: int):
        self.current = self.peak = resident
        self.synced = 0

    def alloc(self, nbytes: int) -> None:
        self.current += nbytes
        self.peak = max(self.peak, self.current)

    def free(self, nbytes: int) -> None:
        self.current -= nbytes

    def synchronize(self) -> None:
        self.synced += 1

    def reset_peak(self) -> None:
        self.peak = self.current

    def allocated(self) -> int:
        return self.current

    def max_allocated(self) -> int:
        return self.peak

    def max_reserved(self) -> int:
        return self.peak


def tanh_call(allocator: FakeAllocator, numel: int):
    """A Tanh of `numel` floats as the allocator sees it: a fresh output of the input's size."""
    def call():
        allocator.alloc(4 * numel)
        return torch.zeros(numel)
    return call


def two_step_call(allocator: FakeAllocator, numel: int):
    """An unfused model: an intermediate as large as the output, freed before the call returns."""
    def call():
        allocator.alloc(4 * numel)
        allocator.alloc(4 * numel)
        allocator.free(4 * numel)
        return torch.zeros(numel)
    return call


def test_identical_code_measures_the_same_in_any_process():
    numel = MiB // 4  # a 1 MiB input
    inputs = MiB
    # The kernel's process: its input only. A plain baseline process: the same input plus the cuBLAS
    # workspace an earlier problem left, plus some other leftover.
    sandbox, plain = FakeAllocator(inputs), FakeAllocator(inputs + CUBLAS_WORKSPACE + 3 * 512)
    kernel = peak_memory(tanh_call(sandbox, numel), torch.device("cpu"), sandbox)
    baseline = peak_memory(tanh_call(plain, numel), torch.device("cpu"), plain)
    assert kernel["call_peak"] == baseline["call_peak"] == MiB
    assert baseline["peak_allocated"] - kernel["peak_allocated"] == CUBLAS_WORKSPACE + 3 * 512  # the old figure's gap
    assert kernel["method"] == baseline["method"] == memory.CALL_ABOVE_RESIDENT
    assert baseline["call_peak"] / kernel["call_peak"] == 1.0
    assert sandbox.synced == 2  # before the reading and after the call's work


def test_call_peak_counts_temporaries_and_what_a_fused_kernel_saves():
    numel = MiB // 4
    unfused, fused = FakeAllocator(MiB), FakeAllocator(MiB)
    reference = peak_memory(two_step_call(unfused, numel), torch.device("cpu"), unfused)
    kernel = peak_memory(tanh_call(fused, numel), torch.device("cpu"), fused)
    assert reference["call_peak"] == 2 * MiB and kernel["call_peak"] == MiB
    assert reference["call_peak"] / kernel["call_peak"] == 2.0


def test_a_kept_output_buffer_still_counts_its_bytes():
    kept = torch.zeros(1024)
    allocator = FakeAllocator(MiB + kept.nbytes)  # the buffer is resident before the call: nothing allocated in it
    stats = peak_memory(lambda: kept, torch.device("cpu"), allocator)
    assert stats["peak_allocated"] == stats["allocated_before"]
    assert stats["call_peak"] == stats["output_bytes"] == 4096


def test_storage_bytes_counts_each_storage_once():
    base = torch.zeros(256)
    assert storage_bytes((base, base[:10], [base.view(16, 16)], torch.ones(8, dtype=torch.float64), 3)) == 1024 + 64
    assert storage_bytes(None) == 0


def test_call_peak_is_never_below_the_outputs_or_zero():
    assert memory.call_peak(100, 150, 0) == 50
    assert memory.call_peak(100, 150, 80) == 80
    assert memory.call_peak(100, 90, 0) == 0


def test_cpu_without_an_allocator_records_no_figure():
    stats = peak_memory(lambda: torch.zeros(4), torch.device("cpu"))
    assert stats["call_peak"] == -1 and stats["method"] == memory.CALL_ABOVE_RESIDENT


def test_methods_of_older_records_and_baseline_files():
    assert memory.record_method({"peak_memory": 5, "memory_stats": {"peak_allocated": 5}}) == memory.TOTAL_IN_EVALUATOR
    assert memory.record_method({"memory_stats": {"method": memory.CALL_ABOVE_RESIDENT}}) == memory.CALL_ABOVE_RESIDENT
    assert memory.baseline_method({"mean": 1.0}, None) == memory.TOTAL_IN_PLAIN_PROCESS
    assert memory.baseline_method({"mean": 1.0}, {"timing_path": "process"}) == memory.TOTAL_IN_PLAIN_PROCESS
    assert memory.baseline_method({"mean": 1.0}, {"timing_path": "sandbox"}) == memory.TOTAL_IN_EVALUATOR
    entry = {"mean": 1.0, "peak_memory_method": memory.CALL_ABOVE_RESIDENT}
    assert memory.baseline_method(entry, {"timing_path": "process"}) == memory.CALL_ABOVE_RESIDENT


def test_a_record_takes_the_call_peak_and_only_a_byte_count():
    from kernelbench_verified.results import new_record

    stats = {"call_peak": MiB, "peak_allocated": MiB + CUBLAS_WORKSPACE, "method": memory.CALL_ABOVE_RESIDENT}
    record = new_record(1, 22, 0, "22_Tanh.py", {"eval_status": "correct", "compiled": True,
                                                 "runtime_stats": {"mean": 1.0}, "memory_stats": stats}, {})
    assert record["peak_memory"] == MiB and memory.record_method(record) == memory.CALL_ABOVE_RESIDENT
    for reported in ("1048576", -5, True, None):  # the kernel's process reports it: anything else is no figure
        odd = new_record(1, 22, 0, "22_Tanh.py", {"eval_status": "correct", "compiled": True,
                                                  "memory_stats": dict(stats, call_peak=reported)}, {})
        assert odd["peak_memory"] == -1
