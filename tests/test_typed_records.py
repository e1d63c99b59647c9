"""Jobs, messages, records and statuses are typed, and the files they are written to are the same JSON
as ever: a misspelt field or status fails where it is written, and committed result files load and
round-trip unchanged."""

import json
import pickle
from pathlib import Path

import pytest

from conftest import ROOT
from kernelbench_verified.evaluate.job import Job
from kernelbench_verified.evaluate.messages import Event, JobDone, Op, SandboxMode
from kernelbench_verified.evaluate.record import FIELDS, JudgedRecord
from kernelbench_verified.results import ResultStore, is_derived, new_record
from kernelbench_verified.verdicts import Flag, Status

COMMITTED = sorted((ROOT / "tests" / "fixtures").rglob("eval_results*.json"))
# Records the evaluator wrote on the CPU (the exploit suite's clean, honest and attack fixtures).
EVALUATED = ROOT / "tests" / "fixtures" / "records" / "eval_results_hidden.json"


def test_a_judged_record_refuses_a_field_or_a_status_it_does_not_know():
    record = JudgedRecord(eval_status="incorrect", cases=[])
    assert record["eval_status"] is Status.INCORRECT
    with pytest.raises(KeyError, match="'evel_status' is no field"):
        record["evel_status"] = Status.CORRECT
    with pytest.raises(KeyError):
        record.update(faild_case="D4")
    with pytest.raises(KeyError):
        record.setdefault("timed_check", [])
    with pytest.raises(ValueError):
        record["eval_status"] = "corect"
    record.update(failed_case="D4", integrity=[Flag.EXTENSION_BUILD_FAILED.saying("relu")])
    again = pickle.loads(pickle.dumps(record))  # as it travels from a judge process or a Ray actor
    assert type(again) is JudgedRecord and again == record


def test_statuses_flags_and_messages_are_written_as_the_strings_they_always_were():
    text = json.dumps({"eval_status": Status.TIMEOUT, "op": Op.TRIAL, "event": Event.BYE, "mode": SandboxMode.EVAL,
                       "integrity": [Flag.TIMING_FAR_BELOW_WALL_CLOCK.saying("1.000 s reported, 9.000 s waited")]})
    assert json.loads(text) == {"eval_status": "timeout", "op": "trial", "event": "bye", "mode": "eval",
                                "integrity": ["timing_far_below_wall_clock: 1.000 s reported, 9.000 s waited"]}
    with pytest.raises(TypeError):
        JobDone(worker_id=0, key="1_0", record={}, status="done")


def test_a_job_takes_only_its_own_fields():
    fields = dict(key="1_0", kernel_source="", problem_path="p.py", hidden_path=None, cases=(), device="cpu",
                  build_key="k", build_dir="/b/k", warm_triton=False, precision="fp32", tf32_mode="default", seed=42,
                  input_salt="s", timeout=10.0, compile_timeout=10.0, num_perf_trials=5, num_warmup=1,
                  measure_performance=True, flush_l2=True)
    job = Job(**fields)
    assert pickle.loads(pickle.dumps(job)) == job and job.moved_to("/mine/k").build_dir == "/mine/k"
    with pytest.raises(TypeError):
        Job(**fields, num_perf_trails=5)
    with pytest.raises(AttributeError):
        job.timeout = 99.0  # a job is made once and sent as it is


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(ROOT / "tests" / "fixtures")))
def test_committed_result_files_load_and_round_trip_unchanged(path, tmp_path):
    original = json.loads(path.read_text())
    store = ResultStore(path)
    for record in store.records.values():
        if "eval_status" in record:  # upstream's records carry none
            assert Status(record["eval_status"]) == record["eval_status"]
    copy = ResultStore(tmp_path / path.name)
    for key, record in store.records.items():
        copy.put(key, record)
    assert json.loads(copy.path.read_text()) == original


def rebuilt(record: dict) -> dict:
    """The stored record made again from the judge's record its metadata holds (record.FIELDS) and the
    run's context (everything else there)."""
    metadata = dict(record["metadata"])
    stats = metadata.pop("untrusted_runtime_stats", None) or record["runtime_stats"]
    metadata.pop("runtime_withheld", None)  # new_record writes both again from the flags
    judged = JudgedRecord({k: v for k, v in metadata.items() if k in FIELDS}, eval_status=record["eval_status"],
                          runtime_stats=stats, memory_stats=record["memory_stats"])
    context = {k: v for k, v in metadata.items() if k not in FIELDS}
    return new_record(record["level"], record["problem_id"], record["sample_id"], record["problem"], judged, context)


def test_records_the_evaluator_wrote_are_made_again_from_their_fields():
    records = json.loads(EVALUATED.read_text())
    assert {r["eval_status"] for r in records.values()} >= {"correct", "incorrect", "compile_error"}
    for key, record in records.items():
        if is_derived(record):
            continue
        assert rebuilt(record) == record, key
