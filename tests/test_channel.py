"""The judge/sandbox channel: JSON lines, each optionally followed by its raw payload."""

import os
import threading
import time

import pytest

from kernelbench_verified.evaluate.channel import Channel, ChannelTimeout, ProtocolViolation


def test_messages_and_payloads_arrive_in_order_and_intact():
    read_fd, write_fd = os.pipe()
    big = os.urandom(3 << 20)  # larger than a pipe's buffer: it arrives in many reads

    def write():
        sender = Channel(-1, write_fd)
        sender.send({"event": "a"})
        sender.send({"event": "b"}, big)
        sender.send({"event": "c"}, b"xy")
        sender.send({"event": "d"})

    writer = threading.Thread(target=write)
    writer.start()
    reader = Channel(read_fd, -1)
    got = [reader.receive(max_payload=len(big)) for _ in range(4)]
    writer.join()
    assert [m["event"] for m in got] == ["a", "b", "c", "d"]
    assert got[1]["payload"] == big and got[2]["payload"] == b"xy" and "payload" not in got[3]
    assert not reader.has_pending()


def test_a_payload_beyond_what_the_reader_allows_is_a_protocol_violation():
    read_fd, write_fd = os.pipe()
    Channel(-1, write_fd).send({"event": "output"}, b"z" * 10)
    with pytest.raises(ProtocolViolation, match="at most 4"):
        Channel(read_fd, -1).receive(max_payload=4)


def test_a_spinning_receive_gets_a_later_message_and_still_times_out():
    """The judge polls for a timed call's reply (no scheduler wake-up in its clock's window); polling
    must neither lose the message nor outlive the sample's deadline."""
    read_fd, write_fd = os.pipe()
    reader = Channel(read_fd, -1)
    sender = threading.Timer(0.05, lambda: Channel(-1, write_fd).send({"event": "trial", "ms": 1.5}))
    sender.start()
    assert reader.receive(time.monotonic() + 5, spin=True) == {"event": "trial", "ms": 1.5}
    sender.join()
    started = time.monotonic()
    with pytest.raises(ChannelTimeout):
        reader.receive(started + 0.1, spin=True)
    assert 0.1 <= time.monotonic() - started < 1.0


def test_the_trial_overhead_benchmark_times_a_round_trip_to_another_process():
    """benchmarks/trial_overhead.py talks to its peer over this channel; on the CPU it times the plain and
    the spinning round trip (no "arm": that needs CUDA) and a tiny problem's inputs."""
    import torch

    from conftest import load_benchmark

    benchmark = load_benchmark("trial_overhead")
    steps = benchmark.peer_steps("cpu", 5)
    assert set(steps) == {"message", "message_spin"}
    assert all(0 < s["median_us"] <= s["p90_us"] for s in steps.values())
    made = benchmark.input_steps(benchmark.CPU_PROBLEMS[0], torch.device("cpu"), 3)
    assert made["input_bytes"] > 0 and made["inputs"]["median_us"] > 0
