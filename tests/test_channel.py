"""The judge/sandbox channel: JSON lines, each optionally followed by its raw payload."""

import os
import threading

import pytest

from kernelbench_verified.evaluate.channel import Channel, ProtocolViolation


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
