"""Cases beyond the hidden distributions, judged after a sample is found correct: D5, perturbed parameters
(problems/perturbation.py), and the shape variants S1, S2 (problems/shape_variants.py).

They run in a sandbox of their own (a new one after a case ends one), after the sample's own
conversation has ended, so nothing they do (a fresh model, a compilation for another shape, a kernel
that crashes on a shape it was not written for) touches the sample's verdict, its time or its audits;
each is recorded beside the cases as passed, failed or not applicable, and the leaderboard decides
whether any of them gates correctness. Each case builds a fresh ModelNew in the sandbox (`fresh`), so
the model's first call comes after the perturbation and caches a kernel builds lazily are built from the
values it is judged on. A sandbox that a case ends (an error, a crash) fails that case.

A robustness sandbox starts from the build folder of the sample's last judged sandbox (Judge.kept_build),
so an extension that sandbox built lazily, or a graph Inductor compiled there, is not built again while
the GPU waits. That folder was written after the kernel saw its judged inputs; the robustness cases run on
other inputs (another seed, other shapes, perturbed parameters) and are not timed, so nothing it holds
can help them, and it goes to no other sample or evaluation.
"""

from __future__ import annotations

import time
from functools import lru_cache
from pathlib import Path

from .channel import ProtocolViolation
from .messages import Event, Op, SandboxMode
from .record import reported_builds
from .transport import export_values, payload_bound
from ..verdicts import Status
from ..measure.correctness import ReferenceError, compare_outputs, reference_outputs
from ..problems import perturbation
from ..problems.inputs import PRECISIONS, Case, call_seed, case_inputs, construct_model, derived_seed, init_arguments
from ..problems.load import load_module, source_sha256
from ..problems.shape_variants import derive_variants, variant_module

# Cases of one sample: D5 and at most two shape variants. A sandbox a case ended is replaced at most
# this often, so a kernel that crashes on every case costs as many sandboxes as it has cases.
MAX_SANDBOXES = 3


@lru_cache(maxsize=64)
def _variants(path: str, digest: str) -> tuple[list, list]:
    """A problem's shape variants, derived once per problem file's content in this judge."""
    kept, dropped = derive_variants(path)
    return [v.to_dict() for v in kept], dropped


def planned_cases(job) -> tuple[list[dict], list[dict]]:
    """(cases to run, shape variants dropped when they were derived) for the job's settings."""
    cases = [{"case": perturbation.CASE_NAME}] if job.perturb_parameters else []
    dropped = []
    if job.shape_variants:
        kept, dropped = _variants(job.problem_path, source_sha256(Path(job.problem_path)))
        cases += [{"case": v["name"], "overrides": v["overrides"], "description": v["description"]} for v in kept]
    return cases, dropped


def evaluate(judge, job) -> dict:
    """The robustness cases of a correct sample, as fields of its record."""
    started = time.monotonic()
    cases, dropped = planned_cases(job)
    done: list[dict] = []
    builds: list = []
    for _ in range(MAX_SANDBOXES):
        pending = cases[len(done):]
        if not pending:
            break
        record = judge.in_sandbox(job, SandboxMode.ROBUSTNESS, lambda conv: run(conv, pending))
        done += record["cases"]
        builds += record.get("extension_builds", [])
        if record["eval_status"] != Status.ROBUSTNESS_DONE and len(done) < len(cases):  # the case in progress ended the sandbox
            done.append(dict(cases[len(done)], status="failed", eval_status=record["eval_status"],
                             reason=str(record.get("error", ""))[:1000]))
    done += [dict(case, status="not_run", reason="the sandboxes ran out") for case in cases[len(done):]]
    return recorded(done, dropped, time.monotonic() - started, builds)


def recorded(done: list[dict], dropped: list[dict], seconds: float, builds: list | None = None) -> dict:
    """The record's fields: perturbed_parameters (D5), unmatched_parameters, shape_variants, and the
    extension builds the robustness sandboxes ran (robustness_builds)."""
    fields = {"robustness_seconds": round(seconds, 3), "robustness_builds": builds or []}
    variants = [d for d in done if d["case"] != perturbation.CASE_NAME]
    variants += [{"case": d["name"], "overrides": d["overrides"], "status": "not_applicable",
                  "reason": f"dropped when derived: {d['reason']}"} for d in dropped]
    fields["shape_variants"] = sorted(variants, key=lambda v: v["case"])
    for case in done:
        if case["case"] == perturbation.CASE_NAME:
            fields["perturbed_parameters"] = case
            fields["unmatched_parameters"] = case.get("unmatched_parameters", [])
    return fields


def run(conv, cases: list[dict]) -> None:
    """One sandbox's share of the robustness cases, as the steps of a judge.Conversation `conv`: load
    the kernel, then per case a fresh model, its inputs and one judged call."""
    job = conv.job
    conv.problem = load_module(job.problem_path, "judge_problem")
    conv.dtype = PRECISIONS[job.precision]
    init_descs, payload = export_values(init_arguments(conv.problem, job.seed, conv.device))
    if payload:  # such a sample was never correct (judge.Conversation.run refuses it)
        raise ProtocolViolation("get_init_inputs() returns CPU tensors, which cannot be sent")
    build_dir = conv.sandbox.seed_build(conv.judge.kept_build or Path(job.build_dir))
    conv.talk.post({"job": job.for_sandbox(SandboxMode.ROBUSTNESS, build_dir, init_descs, conv.judge.timed_cpu)})
    conv.judge.spares.prepare()  # nothing is timed here
    conv.talk.expect(Event.COMPILED)
    conv.record["compiled"] = True
    for case in cases:
        started = time.monotonic()  # each case's seconds; the rest of robustness_seconds is the sandboxes'
        judged = perturbed_case(conv) if case["case"] == perturbation.CASE_NAME else variant_case(conv, case)
        conv.record["cases"].append(dict(case, **judged, seconds=round(time.monotonic() - started, 4)))
    conv.talk.post({"op": Op.END})
    conv.record["extension_builds"] = reported_builds(conv.talk.expect(Event.BYE).get("builds"))
    conv.record["eval_status"] = Status.ROBUSTNESS_DONE


def perturbed_case(conv) -> dict:
    salt, name = conv.job.input_salt, perturbation.CASE_NAME
    seed = perturbation.construction_seed(salt)
    init_args = init_arguments(conv.problem, seed, conv.device)
    reference = construct_model(conv.problem.Model, init_args, seed, conv.device, conv.dtype)
    if not perturbation.floating_tensors(reference):
        return {"status": "not_applicable", "reason": "the reference has no floating-point parameters or buffers"}
    kernel_shapes = fresh_model(conv, init_args, seed)
    plan = perturbation.plan_for(reference, kernel_shapes)
    values = perturbation.drawn_values(reference, plan, salt)
    perturbation.apply_values(reference, values)
    inputs = case_inputs(Case(name, derived_seed(salt, name)), conv.problem, None, conv.device, conv.dtype)
    try:
        expected = reference_outputs(reference, inputs, call_seed(salt, name))
    except ReferenceError as exc:
        return {"status": "not_applicable", "reason": f"with its parameters perturbed {exc}"}
    if values:
        conv.talk.request(Op.PERTURB, list(values.values()), names=list(values))
        conv.talk.expect(Event.PERTURBED)
    verdict = judged_call(conv, name, inputs, expected)
    status = "failed" if not verdict["passed"] else "unchecked" if plan.unmatched else "passed"
    return dict(verdict, status=status, perturbed=sorted(values), unmatched_parameters=plan.unmatched)


def variant_case(conv, case: dict) -> dict:
    job, name = conv.job, case["case"]
    module = variant_module(job.problem_path, case["overrides"])
    try:
        init_args = init_arguments(module, job.seed, conv.device)
        reference = construct_model(module.Model, init_args, job.seed, conv.device, conv.dtype)
        inputs = case_inputs(Case(name, derived_seed(job.input_salt, name)), module, None, conv.device, conv.dtype)
        expected = reference_outputs(reference, inputs, call_seed(job.input_salt, name))
    except ReferenceError as exc:
        return {"status": "not_applicable", "reason": str(exc)}
    except Exception as exc:  # noqa: BLE001 - the reference's own construction or inputs at this shape
        return {"status": "not_applicable", "reason": f"the reference raised {type(exc).__name__}: {exc}"[:500]}
    fresh_model(conv, init_args, job.seed)
    verdict = judged_call(conv, name, inputs, expected)
    return dict(verdict, status="passed" if verdict["passed"] else "failed")


def fresh_model(conv, init_args: list, seed: int) -> dict[str, tuple]:
    """Have the sandbox build a new ModelNew from `init_args` under `seed`; its floating tensors' shapes."""
    descs, payload = export_values(init_args)
    if payload:
        raise ProtocolViolation("get_init_inputs() returns CPU tensors, which cannot be sent")
    conv.talk.send({"op": Op.FRESH, "init_args": descs, "seed": seed})
    try:
        return perturbation.reported_shapes(conv.talk.expect(Event.FRESH).get("tensors"))
    except ValueError as exc:
        raise ProtocolViolation(str(exc)) from None


def judged_call(conv, name: str, inputs: list, expected: list) -> dict:
    conv.talk.request(Op.CALL, inputs, rng_seed=call_seed(conv.job.input_salt, name))
    reply = conv.talk.expect(Event.OUTPUT, payload_bound(expected + inputs))
    outputs = conv.talk.receive_outputs(reply)
    return compare_outputs(expected, outputs, conv.tolerance["atol"], conv.tolerance["rtol"])

