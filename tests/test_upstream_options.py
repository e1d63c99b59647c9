"""Every option of upstream's generation, evaluation, analysis and leaderboard scripts, and every
environment variable they read, is taken here with its meaning.

The lists are upstream's own: the pydra config classes of facebookresearch/kernel_bench_verified
(GenerationConfig, EvalConfig, AnalysisConfig) and of ScalingIntelligence/KernelBench (the same three
classes), and the argparse flags of kernel_bench_verified's generate_leaderboard.py. KernelBench's
generate_baseline_time.py takes no options.
"""

import json
import re

import pytest
from omegaconf import OmegaConf

from conftest import ROOT, TINY
from kernelbench_verified import upstream_names
from kernelbench_verified.config import load_config
from kernelbench_verified.errors import UserError

REQUIRED = {"generate": ["run_name=r", "level=1"], "eval": ["run_name=r", "level=1"],
            "analysis": ["run_name=r", "level=1"]}

# Each upstream key with a value as upstream's users write it, and the keys it must set here (an empty
# mapping: it sets nothing, and says so in one line). One command line holds them all, as a user's would.
VERIFIED = {
    "generate": {
        "dataset_src": ("local", {"dataset_src": "local"}),
        "dataset_name": ("ScalingIntelligence/KernelBench", {"dataset_name": "ScalingIntelligence/KernelBench"}),
        "level": ("2", {"level": 2}), "subset": ("(None,None)", {"subset": [None, None]}), "run_name": ("r", {"run_name": "r"}),
        "num_workers": ("8", {"num_workers": 8}), "api_query_interval": ("0.5", {"api_query_interval": 0.5}),
        "server_type": ("openai", {"server_type": "openai"}), "model_name": ("gpt-5.5", {"model_name": "gpt-5.5"}),
        "max_tokens": ("4096", {"max_tokens": 4096}), "temperature": ("0.0", {"temperature": 0.0}),
        "runs_dir": ("runs", {"runs_dir": "runs"}), "verbose": ("T", {"verbose": True}),
        "store_type": ("local", {"store_type": "local"}), "num_samples": ("5", {"num_samples": 5}),
        "log_prompt": ("True", {"log_prompt": True}), "precision": ("bf16", {"precision": "bf16"}),
    },
    "eval": {
        "run_name": ("r", {"run_name": "r"}), "dataset_src": ("huggingface", {"dataset_src": "huggingface"}),
        "dataset_name": ("ScalingIntelligence/KernelBench", {"dataset_name": "ScalingIntelligence/KernelBench"}),
        "level": ("1", {"level": 1}), "subset": ("(1,10)", {"subset": [1, 10]}), "eval_mode": ("local", {"eval_mode": "local"}),
        "gpu_arch": ("['Hopper']", {"gpu_arch": ["Hopper"]}), "runs_dir": ("runs", {"runs_dir": "runs"}),
        "verbose": ("F", {"verbose": False}), "num_correct_trials": ("5", {"num_correct_trials": 5}),
        "num_perf_trials": ("100", {"num_perf_trials": 100}), "timeout": ("180", {"timeout": 180}),
        "measure_performance": ("False", {"measure_performance": False}), "build_cache": ("True", {"build_cache": True}),
        "num_cpu_workers": ("20", {"num_cpu_workers": 20}),
        "kernel_eval_build_dir": ("cache", {"kernel_eval_build_dir": "cache"}),
        "num_gpu_devices": ("1", {"num_gpu_devices": 1}), "num_samples": ("5", {"num_samples": 5}),
        "precision": ("fp32", {"precision": "fp32"}), "use_hidden_tests": ("True", {"use_hidden_tests": True}),
    },
    "analysis": {
        "run_name": ("r", {"run_name": "r"}), "level": ("1", {"level": 1}), "hardware": ("H200", {"hardware": "H200"}),
        "baseline": ("baseline_time_torch", {"baseline": "baseline_time_torch"}),
        "use_hidden_eval": ("True", {"use_hidden_eval": True}),
    },
}

KERNELBENCH = {
    "generate": {
        "dataset_src": ("huggingface", {"dataset_src": "huggingface"}),
        "dataset_name": ("ScalingIntelligence/KernelBench", {"dataset_name": "ScalingIntelligence/KernelBench"}),
        "level": ("1", {"level": 1}), "subset": ("(3,7)", {"subset": [3, 7]}), "run_name": ("r", {"run_name": "r"}),
        "num_workers": ("64", {"num_workers": 64}), "api_query_interval": ("0.0", {"api_query_interval": 0.0}),
        "server_type": ("anthropic", {"server_type": "anthropic"}), "model_name": ("claude-x", {"model_name": "claude-x"}),
        "max_tokens": ("8192", {"max_tokens": 8192}), "temperature": ("0.7", {"temperature": 0.7}),
        "is_reasoning_model": ("True", {}),  # with reasoning_effort given, nothing more
        "reasoning_effort": ("high", {"reasoning_effort": "high"}),
        "budget_tokens": ("2048", {"thinking_budget": 2048}),
        "runs_dir": ("runs", {"runs_dir": "runs"}), "verbose": ("False", {"verbose": False}),
        "store_type": ("local", {"store_type": "local"}), "num_samples": ("3", {"num_samples": 3}),
        "log_prompt": ("False", {"log_prompt": False}), "backend": ("triton", {"backend": "triton"}),
        "precision": ("fp16", {"precision": "fp16"}), "prompt_option": ("zero_shot", {"prompt_option": "zero_shot"}),
        "include_hardware_info": ("True", {}), "hardware_gpu_name": ("H100", {"hardware_note": "H100"}),
        "custom_prompt_key": ("None", {}), "check_kernel": ("True", {}),
    },
    "eval": {
        "run_name": ("r", {"run_name": "r"}), "dataset_src": ("local", {"dataset_src": "local"}),
        "dataset_name": ("ScalingIntelligence/KernelBench", {"dataset_name": "ScalingIntelligence/KernelBench"}),
        "level": ("2", {"level": 2}), "subset": ("(None,None)", {"subset": [None, None]}),
        "problem_ids": ("[71,86,95]", {"problem_ids": [71, 86, 95]}), "eval_mode": ("local", {"eval_mode": "local"}),
        "gpu": ("H100", {}), "gpu_arch": ("['Ada']", {"gpu_arch": ["Ada"]}), "runs_dir": ("runs", {"runs_dir": "runs"}),
        "verbose": ("False", {"verbose": False}), "num_correct_trials": ("3", {"num_correct_trials": 3}),
        "num_perf_trials": ("50", {"num_perf_trials": 50}), "timeout": ("300", {"timeout": 300}),
        "measure_performance": ("True", {"measure_performance": True}), "timing_method": ("cuda_event", {}),
        "build_cache": ("False", {"build_cache": False}), "num_cpu_workers": ("8", {"num_cpu_workers": 8}),
        "kernel_eval_build_dir": ("cache", {"kernel_eval_build_dir": "cache"}),
        "num_gpu_devices": ("2", {"num_gpu_devices": 2}), "backend": ("cuda", {"backend": "cuda"}),
        "precision": ("bf16", {"precision": "bf16"}), "num_samples_per_problem": ("5", {"num_samples": 5}),
        "pass_at_k_values": ("[1,5]", {}),
    },
    "analysis": {
        "run_name": ("r", {"run_name": "r"}), "level": ("3", {"level": 3}), "hardware": ("L40S", {}),
        "baseline": ("baseline_time_torch", {}),  # both then taken from baseline_file, given after them
        "baseline_file": ("/data/timing/H100_Modal/baseline_time_torch_compile.json",
                          {"timing_dir": "/data/timing", "hardware": "H100_Modal",
                           "baseline": "baseline_time_torch_compile"}),
        "eval_results_dir": ("/data/runs", {"runs_dir": "/data/runs"}), "output_file": ("out.json", {"output_file": "out.json"}),
    },
}


@pytest.fixture(autouse=True)
def fresh_notes(monkeypatch):
    monkeypatch.setattr(upstream_names, "_printed", set())
    monkeypatch.delenv("KB_FP32_TOL", raising=False)


def composed(config: str, overrides: list[str]) -> dict:
    return OmegaConf.to_container(load_config(config, REQUIRED[config] + overrides))


@pytest.mark.parametrize("project, config", [(p, c) for p in ("verified", "kernelbench") for c in REQUIRED])
def test_every_upstream_key_is_taken_and_sets_what_it_means(project, config, capsys):
    keys = (VERIFIED if project == "verified" else KERNELBENCH)[config]
    cfg = composed(config, [f"{key}={value}" for key, (value, _) in keys.items()])
    expected = {ours: meant for _, sets in keys.values() for ours, meant in sets.items()}
    assert {key: cfg[key] for key in expected} == expected
    unchanged = {k: v for k, v in composed(config, []).items() if k not in expected and k not in REQUIRED_KEYS}
    assert {k: cfg[k] for k in unchanged} == unchanged  # nothing else moved
    said, ours = capsys.readouterr().err, composed(config, [])
    for key in keys:  # a key of ours is silent; any other upstream key says what it does here
        assert (f"upstream's {key}=" in said) == (key not in ours), key


REQUIRED_KEYS = {"run_name", "level"}


def test_upstreams_names_that_mean_nothing_here_say_so_in_one_line(capsys):
    composed("eval", ["gpu=L40S", "timing_method=host_time"])
    said = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in said] == ["upstream's gpu=L40S", "upstream's timing_method=host_time"]
    assert "Modal GPU type" in said[0] and "CUDA events" in said[1]


@pytest.mark.parametrize("overrides, meant", [
    (["is_reasoning_model=True"], {"reasoning_effort": "low", "thinking_budget": None}),
    (["is_reasoning_model=True", "budget_tokens=0"], {"reasoning_effort": "low", "thinking_budget": None}),
    (["budget_tokens=2048"], {"thinking_budget": None}),  # upstream thinks only for a reasoning model
    (["reasoning_effort=high", "is_reasoning_model=False", "budget_tokens=2048"],
     {"reasoning_effort": None, "thinking_budget": None}),
    (["hardware_gpu_name=H100"], {"hardware_note": None}),  # upstream adds it only with include_hardware_info
    (["include_hardware_info=F", "hardware_gpu_name=H100"], {"hardware_note": None}),
    (["hardware_note=A100", "include_hardware_info=F"], {"hardware_note": None}),
    (["temperature=0.7", "greedy_sample=True"], {"temperature": 0.0}),  # the attribute upstream's .greedy sets
    (["greedy_sample=True", "temperature=0.7"], {"temperature": 0.7}),  # a later key wins
])
def test_generation_keys_follow_upstreams_rules(overrides, meant):
    cfg = composed("generate", overrides)
    assert {key: cfg[key] for key in meant} == meant


@pytest.mark.parametrize("config, overrides, message", [
    ("generate", ["custom_prompt_key=custom"], "custom_prompt_key='custom': upstream's custom prompts"),
    ("generate", ["include_hardware_info=True"], "include_hardware_info=True needs hardware_gpu_name="),
    ("generate", ["is_reasoning_model=maybe"], "is_reasoning_model='maybe' is not a boolean"),
    ("eval", ["timing_method=wall"], "timing_method='wall' is not one of upstream's cuda_event, do_bench"),
    ("analysis", ["baseline_file=baseline.txt"], "baseline_file='baseline.txt' must be a baseline's .json file"),
])
def test_an_upstream_value_without_a_meaning_here_is_one_line(config, overrides, message):
    with pytest.raises(UserError, match=re.escape(message)):
        composed(config, overrides)


def test_kb_fp32_tol_is_the_fp32_tolerance_of_an_evaluation(monkeypatch, capsys):
    assert composed("eval", [])["atol"] is None
    monkeypatch.setenv("KB_FP32_TOL", "1e-4")
    assert (composed("eval", [])["atol"], composed("eval", [])["rtol"]) == (1e-4, 1e-4)
    assert "upstream's KB_FP32_TOL=1e-4 (environment)" in capsys.readouterr().err
    assert composed("eval", ["atol=1e-2"])["atol"] == 1e-2            # the command line wins
    assert composed("eval", ["precision=bf16"])["atol"] is None        # upstream's variable is fp32's only
    monkeypatch.setenv("KB_FP32_TOL", "strict")
    with pytest.raises(UserError, match="KB_FP32_TOL='strict' is not a number"):
        composed("eval", [])


def test_problem_ids_choose_the_problems_instead_of_the_subset(capsys):
    from kernelbench_verified.evaluate.run import problems_for

    base = [f"problems_dir={TINY / 'KernelBench'}"]
    assert [p.pid for p in problems_for(load_config("eval", REQUIRED["eval"] + base + ["problem_ids=[4,2]"]))] == [2, 4]
    chosen = problems_for(load_config("eval", REQUIRED["eval"] + base + ["subset=(1,1)", "problem_ids=[3]"]))
    assert [p.pid for p in chosen] == [3] and "subset=[1, 1] is not used" in capsys.readouterr().err
    with pytest.raises(UserError, match="problem_ids: no problem 99 in"):
        problems_for(load_config("eval", REQUIRED["eval"] + base + ["problem_ids=[2,99]"]))
    with pytest.raises(UserError, match="problem_ids='x' must be a list of problem ids"):
        problems_for(load_config("eval", REQUIRED["eval"] + base + ["problem_ids=x"]))


def test_the_analysis_takes_upstreams_paths_pass_at_k_values_and_output_file(tmp_path, capsys):
    from kernelbench_verified.leaderboard.analysis import analyze_run

    names = ["1_ReLU.py", "2_Matmul.py"]
    timing = tmp_path / "timing" / "H100_Modal"
    timing.mkdir(parents=True)
    (timing / "baseline_time_torch.json").write_text(json.dumps({"level1": {n: {"mean": 1.0} for n in names}}))
    run_dir = tmp_path / "runs" / "r"
    run_dir.mkdir(parents=True)
    correct = {1: [True, False, False, False], 2: [False] * 4}  # pass@1 = 1/8, pass@3 = (3/4)/2
    (run_dir / "eval_results.json").write_text(json.dumps({
        f"{pid}_{sid}": {"sample_id": sid, "problem_id": pid, "compiled": True, "correctness": ok,
                         "metadata": {}, "runtime": 0.5 if ok else -1.0, "runtime_stats": {}}
        for pid, oks in correct.items() for sid, ok in enumerate(oks)}))
    out = tmp_path / "metrics.json"
    cfg = load_config("analysis", ["run_name=r", "level=1", f"baseline_file={timing / 'baseline_time_torch.json'}",
                                   f"eval_results_dir={tmp_path / 'runs'}", "pass_at_k_values=[1,3,8]",
                                   f"output_file={out}", "excluded=none", "bootstrap_resamples=10"])
    assert analyze_run(cfg) == 0
    printed = capsys.readouterr()
    assert "pass@8 needs at least 8 samples per problem, the run has 4" in printed.err
    rows = dict(line.strip().split("  ", 1) for line in printed.out.splitlines()[1:] if line.startswith("  "))
    assert (rows["pass@1"].strip(), rows["pass@3"].strip()) == ("12.5%", "37.5%") and "pass@5" not in rows
    written = json.loads(out.read_text())
    assert written["metrics"]["pass_at_k"] == {"1": 0.125, "3": 0.375}
    assert written["metrics"]["correct"] == 0.5 and written["metrics"]["correct_speedup"] == 2.0
    assert written["baseline"] == str(timing / "baseline_time_torch.json") and written["level"] == 1
    with pytest.raises(UserError, match=r"pass_at_k_values=.* must be a list of positive integers"):
        analyze_run(load_config("analysis", ["run_name=r", "level=1", "pass_at_k_values=[0]"]))


# kernel_bench_verified's generate_leaderboard.py: every flag, with a value, and the option it sets here.
LEADERBOARD_FLAGS = {"--hardware": ("H100", "hardware", "H100"),
                     "--baseline": ("baseline_time_torch", "baseline", "baseline_time_torch"),
                     "--bf16_baseline": ("b16", "bf16_baseline", "b16"), "--out": ("x.html", "out", "x.html"),
                     "--use_hidden_eval": (None, "use_hidden_eval", True),
                     "--fp32_tolerance": ("1e-3", "fp32_tolerance", 1e-3),
                     "--bf16_tolerance": ("1e-2", "bf16_tolerance", 1e-2)}


def test_every_flag_of_upstreams_leaderboard_is_taken():
    import importlib.util

    spec = importlib.util.spec_from_file_location("board", ROOT / "scripts" / "generate_leaderboard.py")
    board = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(board)
    argv = [part for flag, (value, _, _) in LEADERBOARD_FLAGS.items() for part in (flag, value) if part is not None]
    args = vars(board.parse_args(argv))
    assert {dest: args[dest] for _, dest, _ in LEADERBOARD_FLAGS.values()} == \
        {dest: meant for _, dest, meant in LEADERBOARD_FLAGS.values()}


def test_the_docs_table_lists_every_upstream_name():
    page = (ROOT / "docs" / "layout.md").read_text()
    start = page.index("### Upstream's option names")
    table = page[start:page.index("\n## ", start)]
    first_cells = re.findall(r"^\| (`[^|]*) \|", table, re.MULTILINE)
    listed = {name for cell in first_cells for name in re.findall(r"`(\w+)`", cell)}
    upstream = {key for project in (VERIFIED, KERNELBENCH) for keys in project.values() for key in keys}
    upstream |= {flag.lstrip("-") for flag in LEADERBOARD_FLAGS} | {"greedy_sample", *ENVIRONMENT}
    assert listed == upstream, (sorted(upstream - listed), sorted(listed - upstream))


# The environment variables upstream's scripts read (kernel_bench_verified's src/utils.py and src/eval.py;
# KernelBench's .env.example, read through litellm, and src/kernelbench/utils.py).
ENVIRONMENT = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "TOGETHER_API_KEY",
               "SGLANG_API_KEY", "SAMBANOVA_API_KEY", "FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY", "MOONSHOT_API_KEY",
               "VLLM_API_KEY", "VLLM_SERVER_ADDRESS", "VLLM_SERVER_PORT", "VLLM_ENABLE_THINKING",
               "VLLM_STOP_TOKEN_IDS", "KB_FP32_TOL"}


@pytest.mark.parametrize("server_type, variable", [
    ("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY"), ("google", "GEMINI_API_KEY"),
    ("deepseek", "DEEPSEEK_API_KEY"), ("together", "TOGETHER_API_KEY"), ("sglang", "SGLANG_API_KEY"),
    ("sambanova", "SAMBANOVA_API_KEY"), ("fireworks", "FIREWORKS_API_KEY"), ("fireworks", "FIREWORKS_AI_API_KEY"),
    ("moonshot", "MOONSHOT_API_KEY"), ("vllm", "VLLM_API_KEY")])
def test_every_upstream_key_variable_is_read_for_its_server_type(server_type, variable, monkeypatch):
    from kernelbench_verified.generate.providers import resolve_api_key

    for name in {v for v in ENVIRONMENT if v.endswith("_API_KEY")} | {"GOOGLE_API_KEY"}:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, "key-from-" + variable)
    assert resolve_api_key(server_type, None) == "key-from-" + variable
