"""One kernel's job: everything the build worker and the judge need to evaluate one sample, typed.

A job is made once, in the evaluator's process (`Job.for_sample`), from the run's settings and the
kernel's checked source, and travels to build workers and judges (a process queue, Ray) as it is. The
kernel travels as the source text that was read and checked, never as a path. Torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from .build import build_dir, build_key
from .messages import SandboxMode
from ..config import perf_trials


@dataclass(frozen=True)
class Job:
    key: str  # "{pid}_{sid}", the sample's key in the result file
    kernel_source: str
    problem_path: str
    hidden_path: str | None  # the problem's hidden-test file (use_hidden_tests), read by the judge only
    cases: tuple  # the correctness cases, problems.inputs.Case as dicts, in order
    device: str
    build_key: str  # content address of the build (build.build_key)
    build_dir: str
    warm_triton: bool  # compile Triton once into the build before the first judged run
    precision: str
    tf32_mode: str
    seed: int  # the model's initialisation (weights are not secret)
    input_salt: str  # every input the judge makes derives from it
    timeout: float  # seconds of one evaluation, start to end
    compile_timeout: float  # seconds of one build
    num_perf_trials: int
    num_warmup: int
    measure_performance: bool
    flush_l2: bool
    torch_pch: dict = field(default_factory=dict)  # the precompiled torch header's folders (pch)
    perturb_parameters: bool = False  # D5 after a correct verdict (robustness.py)
    shape_variants: bool = False  # S1, S2 after a correct verdict

    @classmethod
    def for_sample(cls, key: str, source: str, problem_path: Path, level: int, hidden: Path | None, cases: list,
                   settings: dict, build_root: Path, device: str, warm_triton: bool) -> Job:
        """The job of one sample, from the run's settings (evaluate.run.settings_from_config)."""
        # A build records the folder it was made in (the jail's /build, or the cache itself unjailed), and
        # torch rebuilds one moved elsewhere: jailed and unjailed runs keep separate builds. The precompiled
        # header's folders are among the build's arguments, which torch also compares.
        address = build_key(source, settings["arch_list"],
                            f"precision={settings['precision']};sandbox={settings['sandbox']};"
                            f"pch={','.join(sorted(settings['torch_pch'].values()))}")
        return cls(key=key, kernel_source=source, problem_path=str(problem_path),
                   hidden_path=str(hidden) if hidden else None, cases=tuple(cases), device=device,
                   build_key=address, build_dir=str(build_dir(build_root, address)), warm_triton=warm_triton,
                   precision=settings["precision"], tf32_mode=settings["tf32_mode"], seed=settings["seed"],
                   input_salt=settings["input_salt"], timeout=settings["timeout"],
                   compile_timeout=settings["compile_timeout"], num_perf_trials=perf_trials(settings, level),
                   num_warmup=settings["num_warmup"], measure_performance=settings["measure_performance"],
                   flush_l2=settings["flush_l2"], torch_pch=dict(settings["torch_pch"]),
                   perturb_parameters=bool(settings.get("perturb_parameters")),
                   shape_variants=bool(settings.get("shape_variants")))

    def moved_to(self, folder: str) -> Job:
        """This job with its build in `folder` (a Ray judge's own copy of a shipped build)."""
        return replace(self, build_dir=folder)

    def for_sandbox(self, mode: SandboxMode, build_dir: str, init_args: list | None, timed_cpu: int | None) -> dict:
        """What a sandbox is told: the checked source, the public reference (for the clock's calibration,
        before the kernel loads, and the build's construction probe) and how to build the model; no
        hidden tests, no seeds of inputs."""
        sent = {"kernel_source": self.kernel_source, "build_key": self.build_key, "device": self.device,
                "tf32_mode": self.tf32_mode, "precision": self.precision, "seed": self.seed, "mode": mode,
                "flush_l2": self.flush_l2, "init_args": init_args, "torch_pch": self.torch_pch or {},
                "build_dir": build_dir, "timed_cpu": timed_cpu}
        if mode in (SandboxMode.EVAL, SandboxMode.COMPILE):
            sent["reference_source"] = Path(self.problem_path).read_text()
        return sent
