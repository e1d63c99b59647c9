"""Generating a run's kernels: plan the samples, query the provider from worker threads, save.

This is what scripts/generate_samples.py calls. Per sample it writes the raw response (always, when one
came), the prompt (log_prompt=True) and, last, the extracted kernel: a sample whose kernel file exists
is done, so a re-run resumes where an interrupted one stopped. Every attempt adds one line to
generation_log.jsonl; a failed request or an answer without code is recorded there and the run goes on.
"""

from __future__ import annotations

import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from ..config import require_choice, require_int, safe_run_name
from ..errors import UserError, first_line
from ..evaluate.run import problems_for
from .extraction import extract_kernel
from ..problems.inputs import PRECISIONS
from ..problems.load import Problem
from .prompts import BACKENDS, PROMPT_OPTIONS, PromptOptions, build_prompt
from .providers import (ProviderError, ProviderSettings, Request, create_provider, default_base_url, preset_for,
                        resolve_api_key, server_extras)
from ..results import RUN_CONFIG_NAMES, write_text_atomic

LOG_NAME = "generation_log.jsonl"

MIN_THINKING_BUDGET = 1024  # Anthropic's lower bound for extended thinking


@dataclass(frozen=True)
class Sample:
    problem: Problem
    sid: int
    run_dir: Path
    turn: int | None = None  # a refinement's turn (num_turns > 1): its files are ..._turn_{t}_...

    def path(self, suffix: str) -> Path:
        turn = "" if self.turn is None else f"turn_{self.turn}_"
        return self.run_dir / f"level_{self.problem.level}_problem_{self.problem.pid}_sample_{self.sid}_{turn}{suffix}"

    def at_turn(self, turn: int) -> "Sample":
        return Sample(self.problem, self.sid, self.run_dir, turn)

    @property
    def kernel(self) -> Path:
        return self.path("kernel.py")


def _positive_number(cfg: DictConfig, key: str, allow_zero: bool = False) -> float:
    value = cfg[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (value == 0 and not allow_zero):
        raise UserError(f"{key}={value!r} must be a {'non-negative' if allow_zero else 'positive'} number")
    return float(value)


def provider_settings(cfg: DictConfig) -> ProviderSettings:
    """Check the provider keys and resolve the API key; raises UserError before any work."""
    preset_for(cfg.server_type)  # an unknown server_type stops here, before any other key is read
    require_choice(cfg, "api", ("chat", "responses"))
    max_tokens = require_int(cfg, "max_tokens", 1)
    if cfg.server_type != "replay" and not cfg.model_name:
        raise UserError(f"server_type={cfg.server_type} needs model_name=...")
    if cfg.temperature is not None and (isinstance(cfg.temperature, bool) or not isinstance(cfg.temperature, (int, float))):
        raise UserError(f"temperature={cfg.temperature!r} must be a number or null")
    budget = cfg.thinking_budget
    if budget is not None:
        require_int(cfg, "thinking_budget", MIN_THINKING_BUDGET)
        if budget >= max_tokens:
            raise UserError(f"thinking_budget={budget} must be below max_tokens={max_tokens} (thinking counts toward it)")
    return ProviderSettings(
        server_type=cfg.server_type, model_name=cfg.model_name,
        api_key=resolve_api_key(cfg.server_type, cfg.api_key_env),
        base_url=cfg.base_url or default_base_url(cfg.server_type), api=cfg.api, max_tokens=max_tokens,
        temperature=None if cfg.temperature is None else float(cfg.temperature),
        request_timeout=_positive_number(cfg, "request_timeout"), max_retries=require_int(cfg, "max_retries", 0),
        reasoning_effort=cfg.reasoning_effort, thinking_budget=budget, replay_dir=cfg.replay_dir,
        extra=server_extras(cfg.server_type))


def check_run_keys(cfg: DictConfig) -> None:
    require_choice(cfg, "precision", tuple(PRECISIONS))
    require_choice(cfg, "dataset_src", ("local", "huggingface"))
    require_choice(cfg, "store_type", ("local",))
    for key in ("level", "num_samples", "num_workers", "num_turns"):
        require_int(cfg, key, 1)
    if cfg.num_turns > 1:
        from .refine import check_turn_keys

        check_turn_keys(cfg)
    _positive_number(cfg, "api_query_interval", allow_zero=True)


class QueryPacer:
    """Spaces request starts by `interval` seconds across all workers."""

    def __init__(self, interval: float):
        self.interval = interval
        self.lock = threading.Lock()
        self.next_start = 0.0

    def wait(self) -> None:
        if self.interval <= 0:
            return
        with self.lock:
            now = time.monotonic()
            start = max(now, self.next_start)
            self.next_start = start + self.interval
        time.sleep(start - now)


class GenerationLog:
    """generation_log.jsonl: one line per attempted sample, appended and flushed as it finishes."""

    def __init__(self, path: Path):
        self.path = path
        self.lock = threading.Lock()

    def append(self, record: dict) -> None:
        with self.lock, open(self.path, "a") as handle:
            handle.write(json.dumps(record) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def generate_sample(provider, sample: Sample, prompt: str, log_prompt: bool, pacer: QueryPacer,
                    history: tuple = (), backend: str = "cuda") -> dict:
    """Query, save and extract one sample (one turn of it, after `history`); returns its log record
    (never raises ProviderError)."""
    problem = sample.problem
    record = {"level": problem.level, "problem": problem.pid, "problem_name": problem.name, "sample": sample.sid,
              "status": "request_failed", "tokens_in": 0, "tokens_out": 0, "latency_s": 0.0,
              "finish_reason": None, "error": None}
    if sample.turn is not None:
        record["turn"] = sample.turn
    if log_prompt or sample.turn is not None:  # a refinement keeps every turn's prompt
        write_text_atomic(sample.path("prompt.txt"), prompt)
    pacer.wait()
    started = time.perf_counter()
    try:
        answer = provider.complete(Request(prompt, problem.level, problem.pid, sample.sid, sample.turn or 0, history))
    except ProviderError as exc:
        record.update(latency_s=round(time.perf_counter() - started, 3), error=str(exc), fatal=exc.fatal,
                      unreachable=exc.unreachable)
        return record
    except Exception as exc:  # a provider bug must cost this sample, not the run
        record.update(latency_s=round(time.perf_counter() - started, 3), error=first_line(exc))
        return record
    record.update(latency_s=round(time.perf_counter() - started, 3), tokens_in=answer.tokens_in,
                  tokens_out=answer.tokens_out, finish_reason=answer.finish_reason)
    write_text_atomic(sample.path("raw_response.txt"), answer.text)
    extraction = extract_kernel(answer.text, backend)
    if extraction.ok:
        write_text_atomic(sample.kernel, extraction.code)
        record["status"] = "ok"
    else:
        record.update(status="no_code", error=extraction.error)
    return record


class Tally:
    """Counts for the progress bar and the closing line."""

    def __init__(self, skipped: int):
        self.counts = {"done": 0, "failed": 0, "skipped": skipped}
        self.tokens_in = self.tokens_out = 0
        self.failures: dict[str, int] = {}

    def add(self, record: dict) -> None:
        ok = record["status"] == "ok"
        self.counts["done" if ok else "failed"] += 1
        if not ok:
            self.failures[record["status"]] = self.failures.get(record["status"], 0) + 1
        self.tokens_in += record["tokens_in"]
        self.tokens_out += record["tokens_out"]

    def summary(self) -> str:
        detail = ", ".join(f"{k} {v}" for k, v in sorted(self.failures.items()))
        c = self.counts
        return (f"done {c['done']}, failed {c['failed']}" + (f" ({detail})" if detail else "")
                + f", skipped {c['skipped']}; tokens in {self.tokens_in}, out {self.tokens_out}")


def plan_samples(problems: list[Problem], num_samples: int, run_dir: Path) -> tuple[list[Sample], int]:
    """Samples still to generate (no kernel file yet) and the count of those already done."""
    samples = [Sample(p, sid, run_dir) for p in problems for sid in range(num_samples)]
    pending = [s for s in samples if not s.kernel.is_file()]
    return pending, len(samples) - len(pending)


def save_config(cfg: DictConfig, run_dir: Path) -> None:
    header = "# The resolved config of the last generate_samples.py call on this run (API keys are never stored).\n"
    for name in RUN_CONFIG_NAMES:  # ours and upstream's name
        write_text_atomic(run_dir / name, header + OmegaConf.to_yaml(cfg))


def generate_run(cfg: DictConfig) -> int:
    check_run_keys(cfg)
    settings = provider_settings(cfg)
    provider = create_provider(settings)
    problems = problems_for(cfg)
    options = PromptOptions(precision=cfg.precision, hardware_note=cfg.hardware_note,
                            prompt_option=require_choice(cfg, "prompt_option", tuple(PROMPT_OPTIONS)),
                            backend=require_choice(cfg, "backend", tuple(BACKENDS)))
    run_dir = Path(cfg.runs_dir) / safe_run_name(cfg.run_name)
    run_dir.mkdir(parents=True, exist_ok=True)
    save_config(cfg, run_dir)
    pending, skipped = plan_samples(problems, cfg.num_samples, run_dir)
    prompts = {p.pid: build_prompt(p.path.read_text(), p.input_blind, options)
               for p in {s.problem for s in pending}}
    model = f" model={cfg.model_name}" if cfg.model_name else ""
    print(f"{len(pending)} sample(s) to generate, {skipped} already have a kernel; "
          f"server_type={cfg.server_type}{model} -> {run_dir}")
    tally, log = Tally(skipped), GenerationLog(run_dir / LOG_NAME)
    if cfg.num_turns == 1:
        fatal = run_workers(provider, pending, lambda s: (prompts[s.problem.pid], ()), cfg, log, tally)
    else:
        fatal = refine(cfg, provider, pending, prompts, run_dir, log, tally)
    print(tally.summary() + f" (log: {run_dir / LOG_NAME})")
    if fatal:
        raise UserError(f"stopped: {fatal['error']} (problem {fatal['problem']} sample {fatal['sample']}); "
                        "fix it and re-run the same command to resume")
    if tally.failures.get("request_failed"):
        print("some requests failed after the SDK's retries; re-run the same command to retry them")
        return 1
    return 0


class Reachability:
    """Stops a run whose endpoint never answered: UNREACHABLE_IN_A_ROW connection failures in a row
    before any success (a dead or wrong base_url would otherwise retry every sample for half an hour)."""

    UNREACHABLE_IN_A_ROW = 3

    def __init__(self, cfg: DictConfig):
        self.endpoint = cfg.get("base_url") or f"the default endpoint of server_type={cfg.server_type}"
        self.in_a_row, self.answered = 0, False
        self.lock = threading.Lock()

    def after(self, record: dict) -> str | None:
        """The reason to stop, once the endpoint has failed too often without ever answering."""
        with self.lock:
            if not record.pop("unreachable", False):
                self.answered = self.answered or record["status"] != "request_failed"
                self.in_a_row = 0
                return None
            self.in_a_row += 1
            if self.answered or self.in_a_row < self.UNREACHABLE_IN_A_ROW:
                return None
            return f"{self.endpoint} could not be reached {self.in_a_row} times in a row ({record['error']})"


def refine(cfg: DictConfig, provider, pending: list[Sample], prompts: dict, run_dir: Path, log: GenerationLog,
           tally: Tally) -> dict | None:
    """num_turns > 1 (generate/refine.py): turns of generation, evaluation and feedback."""
    from .refine import refine_run

    outcome = refine_run(cfg, run_dir, pending, prompts,
                         lambda samples, ask: run_workers(provider, samples, ask, cfg, log, tally))
    finals = outcome["final_turns"]
    if finals:
        kept = [t for t in finals.values() if t is not None]
        print(f"refined {len(finals)} sample(s) over {cfg.num_turns} turns: {len(kept)} have a final kernel "
              f"(from turns {sorted(set(kept))}); the rest have none and are retried by a re-run")
    return outcome["fatal"]


def run_workers(provider, pending: list[Sample], ask, cfg: DictConfig, log: GenerationLog,
                tally: Tally) -> dict | None:
    """Generate `pending` on num_workers threads, `ask(sample)` giving each its (prompt, history);
    returns the first fatal failure, if any."""
    pacer = QueryPacer(float(cfg.api_query_interval))
    stop = threading.Event()
    fatal: list[dict] = []
    reach = Reachability(cfg)

    def work(sample: Sample) -> dict | None:
        if stop.is_set():
            return None
        prompt, history = ask(sample)
        record = generate_sample(provider, sample, prompt, bool(cfg.log_prompt), pacer, history, cfg.backend)
        given_up = reach.after(record)
        if record.pop("fatal", False) or given_up:
            stop.set()
            fatal.append(dict(record, error=given_up or record["error"]))
        return record

    bar = tqdm(total=len(pending), desc="generate", unit="sample", dynamic_ncols=True)
    pool = ThreadPoolExecutor(max_workers=cfg.num_workers)
    try:
        for future in as_completed([pool.submit(work, s) for s in pending]):
            record = future.result()
            if record is None:
                continue
            log.append(record)
            tally.add(record)
            bar.set_postfix(done=tally.counts["done"], failed=tally.counts["failed"])
            bar.update(1)
            if cfg.verbose and record["status"] != "ok":
                bar.write(f"problem {record['problem']} sample {record['sample']}: {record['status']} {record['error']}")
    finally:
        stop.set()  # after Ctrl-C, queued samples are not started; requests in flight still finish and save
        pool.shutdown(wait=False, cancel_futures=True)
        bar.close()
    return fatal[0] if fatal else None
