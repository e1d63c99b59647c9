"""One self-contained HTML file: the template, the data as JSON, gzipped kernel sources, plotly.js.

Everything is inlined so the page works offline, opened straight from disk. Kernel sources are the
bulk of the data, so they travel as one gzip+base64 blob that the page unpacks (DecompressionStream)
only when a source is first asked for.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import tempfile
from importlib import resources
from pathlib import Path

from ..errors import UserError
from .report import clean_json

SLOT = re.compile(r"<!--slot:(\w+)-->")


def plotly_js() -> str:
    """The plotly.min.js bundled with the installed plotly package."""
    try:
        return (resources.files("plotly") / "package_data" / "plotly.min.js").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        raise UserError("plotly is not installed (pip install plotly): the page embeds its plotly.min.js") from None


def _json_in_script(text: str) -> str:
    """JSON that cannot close or comment out its <script> element ("<\\/" means "</" inside a string)."""
    return text.replace("</", "<\\/").replace("<!--", "<\\u0021--")


def _code_in_script(code: str) -> str:
    """JavaScript that cannot close its <script> element (plotly.min.js holds no such text today)."""
    return re.sub(r"</(script)", r"<\\/\1", code, flags=re.IGNORECASE)


def render_page(data: dict, sources: dict[str, str]) -> str:
    template = (resources.files(__package__) / "template.html").read_text(encoding="utf-8")
    packed = gzip.compress(json.dumps(sources, separators=(",", ":")).encode(), compresslevel=6, mtime=0)
    slots = {
        "data": _json_in_script(json.dumps(clean_json(data), separators=(",", ":"), allow_nan=False)),
        "sources": base64.b64encode(packed).decode("ascii"),
        "plotly": _code_in_script(plotly_js()),
    }
    return SLOT.sub(lambda match: slots[match[1]], template)


def write_page(path: str | Path, html: str) -> Path:
    """Write atomically (temporary file in the same folder, then rename), so a reader never sees half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(html)
        os.chmod(tmp, 0o644)   # mkstemp makes it private; the page is meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def generate_leaderboard(options, out: str | Path) -> tuple[Path, list[str]]:
    """Score the runs of `options` (report.Options) and write the page to `out`; returns (path, warnings)."""
    from .report import build_report

    data, sources, warnings = build_report(options)
    return write_page(out, render_page(data, sources)), warnings
