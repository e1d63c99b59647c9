"""How fast a CPU payload crosses the judge/sandbox channel (the CPU path sends inputs and outputs as
bytes after the JSON message):

    python benchmarks/channel_throughput.py [--mib 256]

Prints the seconds one message with a payload of that size takes from a writer thread to the reader.
"""

import argparse
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kernelbench_verified.evaluate.channel import Channel  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=256)
    size = parser.parse_args().mib << 20
    read_fd, write_fd = os.pipe()
    payload = os.urandom(1 << 20) * (size >> 20)
    writer = threading.Thread(target=lambda: Channel(-1, write_fd).send({"event": "output"}, payload))
    started = time.perf_counter()
    writer.start()
    message = Channel(read_fd, -1).receive(max_payload=size)
    seconds = time.perf_counter() - started
    writer.join()
    assert message["payload"] == payload
    print(f"{size >> 20} MiB payload received in {seconds:.2f} s ({(size >> 20) / seconds:.0f} MiB/s)")


if __name__ == "__main__":
    main()
