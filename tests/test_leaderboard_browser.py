"""The leaderboard page in a real browser: headless Chromium opens the file from disk, the plots render,
a kernel source unpacks, no console error or network request happens, and a screenshot is written.

Chromium is driven through the DevTools protocol over --remote-debugging-pipe (fd 3 in, fd 4 out,
NUL-separated JSON), so no websocket client or port is needed.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from kernelbench_verified.leaderboard.page import generate_leaderboard
from kernelbench_verified.leaderboard.report import Options

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "leaderboard"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--remote-debugging-pipe", "--window-size=1400,1000"]


def chromium_binary() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path:
        return path
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed: .ci/run installs Debian's chromium package before the tests")
    pytest.skip("chromium is not installed (apt-get install -y chromium); CI installs it and runs this test")


class DevTools:
    """A minimal Chrome DevTools protocol client over the browser's debugging pipe."""

    def __init__(self, binary: str, profile: Path):
        to_browser, self._writer = os.pipe()
        self._reader, from_browser = os.pipe()
        # The browser expects the pipe on fds 3 and 4; the shell puts it there.
        command = f'exec "$0" "$@" 3<&{to_browser} 4>&{from_browser}'
        self.process = subprocess.Popen(["bash", "-c", command, binary, *CHROMIUM_FLAGS,
                                         f"--user-data-dir={profile}", "about:blank"],
                                        pass_fds=(to_browser, from_browser),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._writer, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._reader], [], [], remaining)[0]:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._reader, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the debugging pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._writer)
        os.close(self._reader)


def evaluate(tools: DevTools, session: str, expression: str, await_promise: bool = False):
    result = tools.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                             "awaitPromise": await_promise}, session)
    if "exceptionDetails" in result:
        raise AssertionError(f"{expression!r} raised: {result['exceptionDetails']}")
    return result["result"].get("value")


def open_page(tools: DevTools, url: str) -> str:
    target = tools.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = tools.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Runtime", "Log", "Page", "Network"):
        tools.call(f"{domain}.enable", session=session)
    tools.call("Page.navigate", {"url": url}, session)
    deadline = time.monotonic() + 60
    while evaluate(tools, session, "document.body && document.body.dataset.rendered") != "true":
        if time.monotonic() > deadline:
            raise AssertionError("the page did not finish rendering its plots within 60 s")
        time.sleep(0.2)
    return session


def problems_of(events: list[dict]) -> list[str]:
    """Console errors, uncaught exceptions and requests leaving the local file."""
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            found.append(f"exception: {params['exceptionDetails'].get('text')} "
                         f"{params['exceptionDetails'].get('exception', {}).get('description', '')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            found.append(f"console.{params['type']}: {[a.get('value') for a in params.get('args', [])]}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            found.append(f"log error: {params['entry'].get('text')}")
        elif method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            if not url.startswith(("file:", "data:", "blob:", "about:")):
                found.append(f"network request: {url}")
    return found


def test_page_renders_offline_in_chromium(tmp_path):
    binary = chromium_binary()
    options = Options(runs_dir=str(FIXTURES / "runs"), timing_dir=str(FIXTURES / "timing"),
                      degenerate_file=str(FIXTURES / "degenerate.json"), use_hidden_eval=True,
                      bootstrap_resamples=200)
    page, _ = generate_leaderboard(options, tmp_path / "leaderboard.html")
    tools = DevTools(binary, tmp_path / "profile")
    try:
        session = open_page(tools, page.resolve().as_uri())
        plots = evaluate(tools, session, """JSON.stringify([...document.querySelectorAll('div.plot')].map(d => ({
            id: d.id, svg: d.querySelectorAll('svg.main-svg').length,
            heatmap: d.querySelectorAll('g.hm image').length,
            points: d.querySelectorAll('.scatterlayer .point').length,
            bars: d.querySelectorAll('.barlayer .point').length})))""")
        plots = {p["id"]: p for p in json.loads(plots)}
        rows = evaluate(tools, session, "document.querySelectorAll('table.sortable tbody tr').length")
        notes = evaluate(tools, session, "[...document.querySelectorAll('p.note')].map(p => p.textContent).join('|')")
        width = evaluate(tools, session, "document.documentElement.scrollWidth")
        key = "fp32|alpha|1|1"
        source = evaluate(tools, session, f"showSource({key!r}).then(() => "
                                          "document.getElementById('source-text').textContent)", await_promise=True)
        screenshot = tools.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session)
        errors = problems_of(tools.events)
    finally:
        tools.close()

    assert not errors, errors
    # fp32: a scatter and heatmaps of levels 1 and 2; bf16: a heatmap of level 1 and no scatter, since
    # with no hidden evaluation it has no point to draw (an empty plot is not drawn; a note says why).
    assert set(plots) == {"scatter-0", "heatmap-0-1", "heatmap-0-2", "heatmap-1-1", "deflation-plot"}
    assert "No point to plot" in notes
    assert width <= 1400  # the page fits the 1400 px window: nothing scrolls sideways
    assert all(p["svg"] > 0 for p in plots.values()), plots
    # the bf16 run has no hidden evaluation, so its heatmap is all grey (no image of values)
    assert plots["heatmap-0-1"]["heatmap"] == 1 and plots["heatmap-0-2"]["heatmap"] == 1, plots
    assert plots["scatter-0"]["points"] >= 3 and plots["deflation-plot"]["bars"] == 8, plots
    # fp32: alpha 1, 2, all, beta 1, all; bf16: alpha 1, all; solved against tolerance: fp32 alpha 1, 2,
    # beta 1, bf16 alpha 1; deflation: 2 x 4
    assert rows == 5 + 2 + 4 + 8
    assert "re-judged at atol = rtol" in notes
    # sample 0 is alpha's fastest hidden-correct kernel of problem 1 (sample 1 fails D4)
    assert source.startswith("# alpha_level1_test problem 1 sample 0") and "</script> stays text" in source
    png = tmp_path / "leaderboard.png"
    png.write_bytes(base64.b64decode(screenshot["data"]))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
