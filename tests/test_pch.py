"""The precompiled torch header: which builds use it, that a real build does, and that it changes no output."""

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import make_run
from kernelbench_verified.evaluate import jail, pch
from kernelbench_verified.evaluate.run import evaluate_run


def test_flag_sets_match_what_torch_compiles_with():
    assert pch.flag_set(None) == pch.flag_set([]) == pch.flag_set([""]) == pch.flag_set([" "]) == "default"
    assert pch.flag_set(["-O3"]) == pch.flag_set(" -O3") == pch.flag_set(["", "-O3 "]) == "O3"
    assert pch.flag_set(["-O3", "-march=native"]) is None  # other flags: no header, the build reads torch's
    assert pch.flag_set(["-O2"]) is None


def test_a_run_makes_the_header_only_when_it_pays_for_itself():
    cpp = "from torch.utils.cpp_extension import load_inline\n"
    assert not pch.worth_making([cpp] * (pch.MIN_BUILDS - 1) + ["import torch\n"] * 10)
    assert pch.worth_making([cpp] * pch.MIN_BUILDS)


def test_the_header_is_made_with_the_compiler_the_jailed_builds_find(tmp_path, monkeypatch):
    # The H200 image sets CXX; the jail drops it, so its builds run the c++ on PATH. A header made with
    # the host's CXX was refused there ("created by a different GCC executable").
    monkeypatch.setenv("CXX", "/opt/elsewhere/bin/g++")
    jailed = pch.Toolchain(tmp_path, jail.allowed_environment(dict(os.environ)))
    assert jailed.cxx == shutil.which("c++")
    assert os.environ["CXX"] == "/opt/elsewhere/bin/g++"  # the probe left this process's environment alone
    assert pch.main_cpp_command()[0] == "/opt/elsewhere/bin/g++"  # unjailed builds use CXX


def _ninja_compile(build: Path) -> tuple[str, list[str], Path]:
    """The compiler, flags and main.cpp of the one extension built under `build`."""
    ninja_file = next(build.rglob("build.ninja"))
    values = dict(line.split(" = ", 1) for line in ninja_file.read_text().splitlines() if " = " in line)
    return values["cxx"], shlex.split(values["cflags"]), ninja_file.parent / "main.cpp"


@pytest.mark.skipif(not pch.is_gcc("c++"), reason="the precompiled header needs GCC as c++")
def test_a_cpp_kernel_builds_with_the_header_and_is_correct(tmp_path, tiny_config, shared_torch_pch):
    # The session's header (conftest.shared_torch_pch), which tiny_config names to the run as
    # torch_pch_dir; ensure() waits for the session's maker if it is still at work. One flag set is
    # enough to show the header is used (each takes ~40 s of one core here).
    environment = jail.allowed_environment(dict(os.environ)) if jail.available() is None else None
    toolchain = pch.Toolchain(shared_torch_pch, environment)
    assert toolchain.ensure(("default",))["default"] == str(toolchain.folder / "default")
    header = toolchain.folder / "default" / pch.HEADER
    made = header.stat().st_mtime_ns
    make_run(tmp_path, "pch_run", {(1, 0): "relu_cpp"})
    evaluate_run(tiny_config(tmp_path, "pch_run", subset="[1,1]", num_samples=1, use_hidden_tests=False))
    record = json.loads((tmp_path / "pch_run" / "eval_results.json").read_text())["1_0"]
    assert record["eval_status"] == "correct", record["metadata"].get("error")
    cxx, flags, main_cpp = _ninja_compile(Path(record["metadata"]["build_dir"]))
    assert f"-I{toolchain.folder / 'default'}" in flags
    # GCC's -H marks the precompiled header it used with "!" (and one it found but rejected with "x").
    assert main_cpp.is_file(), "torch keeps a build's sources (keep_intermediates)"
    used = subprocess.run([cxx, "-H", "-fsyntax-only", *flags, str(main_cpp)], capture_output=True, text=True)
    assert f"! {header}" in used.stderr, used.stderr[-2000:]
    assert header.stat().st_mtime_ns == made, "the build wrote to the header"
    if jail.available() is None:
        assert record["metadata"]["sandbox"] == "jail"
