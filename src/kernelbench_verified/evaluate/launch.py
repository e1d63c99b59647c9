"""Starting and stopping sandbox processes, without importing torch (see worker.py for why)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .channel import Channel

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])
# Sandboxes a GPU judge keeps started ahead of its next jobs, so that their torch import (about 4 s on
# the H200 host) overlaps the evaluations before theirs. One is not enough: a 2.5 s evaluation would
# then wait for the next sandbox.
SPARE_SANDBOXES = 2


@dataclass
class Sandbox:
    """A started sandbox process waiting for its job, with its private directory and channel."""

    process: subprocess.Popen
    channel: Channel
    workdir: Path

    def close(self) -> None:
        os.close(self.channel.read_fd)
        os.close(self.channel.write_fd)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def discard(self) -> None:
        """Kill an unused sandbox and remove its directory."""
        kill_group(self.process)
        self.close()


def start_sandbox(child_env: dict) -> Sandbox:
    """Start `python -m kernelbench_verified.evaluate.sandbox` in a new session and a private directory; it
    imports torch and then waits on its channel for one job."""
    workdir = Path(tempfile.mkdtemp(prefix="kbv_job_"))
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    env = dict(child_env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH")]))
    with open(workdir / "log.txt", "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "kernelbench_verified.evaluate.sandbox", str(to_child_r), str(from_child_w)],
            pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, env=env, cwd=workdir, start_new_session=True)
    os.close(to_child_r)
    os.close(from_child_w)
    return Sandbox(process, Channel(from_child_r, to_child_w), workdir)


def kill_group(process: subprocess.Popen) -> bool:
    """Kill the sandbox and everything it started; True if it was still running."""
    was_running = process.poll() is None
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
    return was_running
