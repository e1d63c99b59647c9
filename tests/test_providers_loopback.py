"""The real openai and anthropic clients against a loopback server: answers, rate limits, server
errors, broken bodies, timeouts, a rejected key, and resuming a run that was killed."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, TINY
from kernelbench_verified.config import load_config
from kernelbench_verified.errors import UserError
from kernelbench_verified.generate.run import generate_run
from loopback_llm import LoopbackLLM

# (server_type, api, path the request must reach, model)
PROVIDERS = {
    "openai-chat": ("openai", "chat", "/v1/chat/completions", "gpt-5.5"),
    "openai-responses": ("openai", "responses", "/v1/responses", "gpt-5.5"),
    "anthropic": ("anthropic", "chat", "/v1/messages", "claude-test"),
    "compatible": ("compatible", "chat", "/v1/chat/completions", "local-model"),
}


@pytest.fixture
def llm():
    server = LoopbackLLM(slow_seconds=2.0).start()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")


def overrides(runs_dir, llm, provider, **extra):
    server_type, api, _, model = PROVIDERS[provider]
    base_url = llm.base_url if server_type == "anthropic" else llm.base_url + "/v1"
    values = {"run_name": "r", "runs_dir": str(runs_dir), "level": 1, "problems_dir": str(TINY / "KernelBench"),
              "subset": "[1,1]", "num_samples": 1, "num_workers": 1, "server_type": server_type, "api": api,
              "model_name": model, "base_url": base_url, "request_timeout": 1.0, "max_retries": 1, **extra}
    return [f"{k}={v}" for k, v in values.items()]


def generate(tmp_path, llm, provider, **extra):
    code = generate_run(load_config("generate", overrides(tmp_path, llm, provider, **extra)))
    log = [json.loads(line) for line in (tmp_path / "r" / "generation_log.jsonl").read_text().splitlines()]
    return code, log


def sample_file(tmp_path, sid, suffix):
    return tmp_path / "r" / f"level_1_problem_1_sample_{sid}_{suffix}"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_normal_answer_becomes_a_kernel_with_usage_logged(tmp_path, llm, provider):
    code, log = generate(tmp_path, llm, provider)
    assert code == 0
    assert [entry["status"] for entry in log] == ["ok"]
    assert (log[0]["tokens_in"], log[0]["tokens_out"]) == (120, 45)
    assert log[0]["finish_reason"] in {"stop", "completed", "end_turn"} and log[0]["latency_s"] > 0
    assert "class ModelNew" in sample_file(tmp_path, 0, "kernel.py").read_text()
    assert sample_file(tmp_path, 0, "raw_response.txt").read_text() == llm.answer
    path, body = llm.requests[0]
    assert path == PROVIDERS[provider][2]
    assert "class Model(nn.Module)" in json.dumps(body)  # the problem's source went out in the prompt


def test_request_arguments_follow_the_model_kind(tmp_path, llm):
    generate(tmp_path, llm, "openai-chat", model_name="gpt-5.5", reasoning_effort="high", max_tokens=3000)
    reasoning = llm.requests[-1][1]
    assert reasoning["max_completion_tokens"] == 3000 and reasoning["reasoning_effort"] == "high"
    assert "temperature" not in reasoning and "max_tokens" not in reasoning
    generate(tmp_path / "b", llm, "openai-chat", model_name="gpt-4o", max_tokens=3000, temperature=0.5)
    classic = llm.requests[-1][1]
    assert classic["max_tokens"] == 3000 and classic["temperature"] == 0.5
    generate(tmp_path / "c", llm, "anthropic", thinking_budget=2048, max_tokens=3000)
    thinking = llm.requests[-1][1]
    assert thinking["thinking"] == {"type": "enabled", "budget_tokens": 2048} and "temperature" not in thinking


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rate_limit_is_retried_by_the_sdk(tmp_path, llm, provider):
    llm.queue = ["429_then_ok"]
    code, log = generate(tmp_path, llm, provider)
    assert code == 0 and log[0]["status"] == "ok"
    assert len(llm.requests) == 2


# The compatible provider shares the openai client code, so the failure matrix leaves it out.
@pytest.mark.parametrize("provider", ["openai-chat", "openai-responses", "anthropic"])
@pytest.mark.parametrize("behaviour, message", [
    ("500", "HTTP 500"),
    ("empty", "malformed response"),
    ("malformed", "malformed response"),
    ("slow", "timed out"),
])
def test_failed_request_is_recorded_and_the_run_goes_on(tmp_path, llm, provider, behaviour, message):
    retried = behaviour in ("500", "slow")  # the SDK retries these; a body it cannot read, never
    llm.queue = [behaviour] * (2 if retried else 1)  # so the first sample fails even after its retry
    # Only "slow" needs the short timeout; on a loaded CI machine 0.5 s also cut off a reply that was only
    # late, and the SDK's retry then got the next, good one.
    timeout = 0.5 if behaviour == "slow" else 5
    started = time.monotonic()
    code, log = generate(tmp_path, llm, provider, num_samples=2, max_retries=1, request_timeout=timeout)
    assert time.monotonic() - started < 20
    assert code == 1  # a request failed: the exit status says so, a re-run retries it
    by_sample = {entry["sample"]: entry for entry in log}
    assert by_sample[0]["status"] == "request_failed" and message in by_sample[0]["error"]
    assert not sample_file(tmp_path, 0, "kernel.py").exists()
    assert by_sample[1]["status"] == "ok" and sample_file(tmp_path, 1, "kernel.py").is_file()
    assert len(llm.requests) == (3 if retried else 2)


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic"])
def test_rejected_key_stops_the_run(tmp_path, llm, provider):
    llm.default = "401"
    with pytest.raises(UserError, match="HTTP 401 .the API key was rejected"):
        generate(tmp_path, llm, provider, num_samples=3)
    assert len(llm.requests) == 1  # not retried, and no further sample was started


def test_resume_after_the_process_is_killed(tmp_path, llm):
    llm.queue = ["ok", "ok", "ok"]
    llm.default = "hang"
    args = overrides(tmp_path, llm, "openai-chat", subset="[null,null]", num_samples=2, request_timeout=60)
    env = dict(os.environ, OPENAI_API_KEY="test-openai-key")
    script = str(ROOT / "scripts" / "generate_samples.py")
    process = subprocess.Popen([sys.executable, script, *args], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run_dir = tmp_path / "r"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(list(run_dir.glob("*_kernel.py"))) < 3:
        time.sleep(0.1)
    while time.monotonic() < deadline and len(llm.requests) < 4:  # the 4th request is hanging
        time.sleep(0.1)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    first = {p.name for p in run_dir.glob("*_kernel.py")}
    assert len(first) == 3 and len(llm.requests) == 4

    llm.default = "ok"
    result = subprocess.run([sys.executable, script, *args], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "5 sample(s) to generate, 3 already have a kernel" in result.stdout
    assert "done 5, failed 0, skipped 3" in result.stdout
    assert len(llm.requests) == 4 + 5
    assert len(list(run_dir.glob("*_kernel.py"))) == 8


def test_a_dead_endpoint_stops_the_run_with_one_line(tmp_path, llm):
    """A wrong base_url must not retry every sample: after a few connection failures in a row, and no
    answer ever, the run stops and names the endpoint."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    args = overrides(tmp_path, llm, "openai-chat", base_url=dead, num_samples=8, max_retries=0)
    with pytest.raises(UserError, match=r"could not be reached 3 times in a row") as raised:
        generate_run(load_config("generate", args))
    assert dead in str(raised.value) and len(str(raised.value).splitlines()) == 1
    log = (tmp_path / "r" / "generation_log.jsonl").read_text().splitlines()
    assert len(log) == 3 and all(json.loads(line)["status"] == "request_failed" for line in log)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_second_turn_sends_the_whole_conversation(tmp_path, llm, provider):
    """num_turns=2 through the real SDK: the second request carries the first prompt, the model's answer
    and the judge's feedback, in the provider's own message format."""
    code, log = generate(tmp_path, llm, provider, num_turns=2,
                         turn_eval_overrides='["device=cpu","num_perf_trials=3","num_warmup=1"]')
    assert code == 0 and [entry.get("turn") for entry in log] == [0, 1]
    body = llm.requests[-1][1]
    conversation = body.get("messages") or body.get("input")
    assert [m["role"] for m in conversation] == ["user", "assistant", "user"]
    assert "class Model(nn.Module)" in json.dumps(conversation[0]) and json.dumps(llm.answer)[1:-1] in \
        json.dumps(conversation[1])
    assert json.dumps(conversation[2]).count("Your kernel") == 1  # the judge's feedback on turn 0
