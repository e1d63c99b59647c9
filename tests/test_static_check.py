"""The static reward-hack checker: every exploit fixture flagged with its code, no finding on correct
kernels, one minimal snippet per rule, the policy's effect on a record, and no crash on any input."""

from pathlib import Path

import pytest

from conftest import KERNELS, ROOT
from kernelbench_verified.errors import UserError
from kernelbench_verified.static.check import Finding, check_file, check_source, rule_table
from kernelbench_verified.static.policy import REJECTED_STATUS, apply_policy, rejecting_codes
from kernelbench_verified.static.rules import RULES
from kernelbench_verified.problems.load import LEVELS, list_problems, self_candidate
from kernelbench_verified.validate.exploits import expected_code as exploit_code, runtime_case

FIXTURES = ROOT / "tests" / "fixtures"
# Attacks no rule is written for are caught at run time by the case they are named after, not here.
EXPLOITS = sorted(p for p in (FIXTURES / "exploits").glob("*.py") if not runtime_case(p.stem))
CLEAN = sorted((FIXTURES / "clean").glob("*.py"))
BENCH = ROOT / "benchmarks" / "kernels"
CODES = {rule.code: rule.severity for rule in RULES}


def expected_code(path: Path) -> str:
    code = exploit_code(path.stem)
    assert code, f"{path.name} does not start with a rule code"
    return code


def serious(findings):
    return [f for f in findings if f.severity in ("warn", "error")]


@pytest.mark.parametrize("path", EXPLOITS, ids=lambda p: p.stem)
def test_exploit_fixture_is_flagged_with_its_code(path):
    findings = check_file(path)
    code = expected_code(path)
    assert code in {f.code for f in findings}, findings
    record = apply_policy({"eval_status": "correct", "correctness": True, "metadata": {}}, findings, "reject")
    rejected = record["eval_status"] == REJECTED_STATUS
    assert rejected == (CODES[code] == "error" or any(f.severity == "error" for f in findings))


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.stem)
def test_correct_fixture_has_no_findings(path):
    assert serious(check_file(path)) == []


def test_fixture_suite_covers_the_issue():
    assert len(CLEAN) >= 6
    covered = {expected_code(path) for path in EXPLOITS}
    hacks = {"side_stream", "monkey_patch", "pointer_cache", "input_mutation", "tensor_subclass", "background_work",
             "persisting_l2", "kernel_never_launched", "torch_fallback", "shape_branch", "precision_downgrade",
             "introspection", "ctypes", "file_io", "torch_compile", "no_custom_kernel", "harness_import"}
    assert hacks <= covered, hacks - covered


@pytest.mark.parametrize("name", ["19_0_relu_vec4", "1_0_sgemm_tiled", "23_0_softmax_rows", "19_4_illegal_memory_access",
                                  "19_6_relu_triton", "23_1_softmax_triton"])
def test_benchmark_kernels_without_hacks_are_clean(name):
    (path,) = BENCH.glob(f"level*/{name}.py")
    assert serious(check_file(path)) == []
    if "triton" in name:  # and a Triton run finds the Triton kernel it asked for
        assert serious(check_file(path, backend="triton")) == []


@pytest.mark.parametrize("level", LEVELS)
def test_no_reference_as_its_own_candidate_is_refused(level):
    """The static checker is a lint: under static_check=reject it must refuse none of the honest
    self-candidates (the 270 references with `class ModelNew(Model): pass`)."""
    refused = {p.pid: codes for p in list_problems(level, None, (None, None))
               if (codes := rejecting_codes(check_source(self_candidate(p.path.read_text())), "reject"))}
    assert refused == {}


def test_benchmark_side_stream_kernel_is_rejected():
    findings = check_file(BENCH / "level1" / "19_2_relu_side_stream.py")
    assert [(f.code, f.severity) for f in findings] == [("side_stream", "error")]
    assert "cudaStreamCreateWithFlags" in findings[0].message and findings[0].line == 17


@pytest.mark.parametrize("stem, code", [("relu_patch_allclose", "monkey_patch"), ("relu_patch_tensor_ops", "monkey_patch"),
                                        ("relu_patches_timer", "monkey_patch"), ("relu_zeroes_input", "input_mutation"),
                                        ("relu_in_place", "input_mutation"), ("relu_tensor_subclass", "tensor_subclass"),
                                        ("relu_background_thread", "background_work"), ("relu_os_exit", "process_control"),
                                        ("relu_thread_handoff", "background_work"), ("relu_cpp", None)])
def test_example_kernels(stem, code):
    path = KERNELS / f"{stem}.py"
    errors = {f.code for f in check_file(path) if f.severity == "error"}
    assert errors == ({code} if code else set())


# ---- one minimal snippet per rule ------------------------------------------------------------------

def cuda(body: str, functions=("run",), call="ext.run(x)") -> str:
    """A kernel file around a C++/CUDA body, built with load_inline and called from forward."""
    return (f"import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
            f"SRC = r'''\n{body}\n'''\n"
            f"ext = load_inline(name='e', cpp_sources='', cuda_sources=SRC, functions={list(functions)!r})\n"
            f"class ModelNew(nn.Module):\n    def forward(self, x):\n        return {call}\n")


LAUNCHED = "__global__ void k(float* y) { y[0] = 1.f; }\nvoid run(torch::Tensor y) { k<<<1, 1>>>(y.data_ptr<float>()); }"


def python(forward: str, prelude: str = "") -> str:
    """A kernel file whose custom kernel is fine, with extra module code and a forward body."""
    body = "\n".join("        " + line for line in forward.splitlines())
    return cuda(LAUNCHED).replace("class ModelNew", prelude + "\nclass ModelNew").rsplit("        return", 1)[0] + body + "\n"


def triton(forward: str, prelude: str = "") -> str:
    """A kernel file with a @triton.jit kernel `k`, extra module code and a forward body."""
    body = "\n".join("        " + line for line in forward.splitlines())
    return ("import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n\n\n"
            "@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)\n\n"
            f"{prelude}\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n{body}\n")


LAUNCHED_TRITON = "k[(1,)](x, x.numel(), BLOCK=16)\nreturn x"

SNIPPETS = {  # code -> (flagged snippet, similar snippet that must not be flagged), checked with backend=triton
    "backend_mismatch": (cuda(LAUNCHED), triton(LAUNCHED_TRITON)),
    "no_custom_kernel": ("import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x * 2\n",
                         cuda(LAUNCHED)),
    "kernel_never_launched": (cuda(LAUNCHED.replace("k<<<1, 1>>>(y.data_ptr<float>());", "")),
                              cuda("template <int N> __global__ void k(float* y) {}\n"
                                   "void run(torch::Tensor y) { auto f = k<4>; f<<<1, 1>>>(y.data_ptr<float>()); }")),
    "extension_function_unused": (cuda(LAUNCHED + "\nvoid helper(torch::Tensor y) {}", functions=("run", "helper")),
                                  cuda(LAUNCHED + "\nvoid helper(torch::Tensor y) {}", functions=("run", "helper"),
                                       call="ext.helper(x) or ext.run(x)")),
    "torch_fallback": (python("try:\n    return ext.run(x)\nexcept Exception:\n    return torch.relu(x)"),
                       python("try:\n    return ext.run(x)\nexcept RuntimeError as e:\n    raise ValueError('bad') from e")),
    "torch_compile": (python("return ext.run(x)", "f = torch.compile(lambda t: t)"),
                      python("return ext.run(x)", "f = torch.cuda.is_available()")),
    "side_stream": (cuda(LAUNCHED + "\nvoid s() { cudaStream_t t; cudaStreamCreate(&t); }"),
                    cuda(LAUNCHED + "\n// cudaStreamCreate(&t);  no longer used")),
    "side_stream_joined": (python("s = torch.cuda.Stream()\ns.wait_stream(torch.cuda.current_stream())\n"
                                  "torch.cuda.current_stream().wait_stream(s)\nreturn ext.run(x)"),
                           python("return ext.run(x)", "s = torch.cuda.current_stream()")),
    "background_work": (python("return ext.run(x)", "from concurrent.futures import ThreadPoolExecutor"),
                        python("return ext.run(x)", "import functools")),
    "process_control": (python("return ext.run(x)", "import subprocess"), python("return ext.run(x)", "import os")),
    "monkey_patch": (python("return ext.run(x)", "import torch.nn.functional as F\nF.relu = lambda t: t"),
                     python("return ext.run(x)", "import torch.nn.functional as F\nrelu = F.relu\nself_relu = 3")),
    "harness_import": (python("return ext.run(x)", "from kernelbench_verified import judge"),
                       python("return ext.run(x)", "from torch import nn as kernelbench_nn")),
    "tensor_subclass": (python("return ext.run(x)", "class T(torch.Tensor):\n    pass"),
                        python("return ext.run(x)", "class T(nn.Module):\n    pass")),
    "introspection": (python("return ext.run(x)", "import inspect"),
                      python("return ext.run(x)", "import gc\ngc.collect()")),
    "ctypes": (python("return ext.run(x)", "import ctypes"), python("return ext.run(x)", "import cmath")),
    "file_io": (python("return ext.run(x)", "data = open('/tmp/out').read()"),
                python("return ext.run(x)", "import os\npath = os.path.join('a', 'b')")),
    "pointer_cache": (python("if x.data_ptr() in CACHE:\n    return CACHE[x.data_ptr()]\nreturn ext.run(x)", "CACHE = {}"),
                      python("return ext.run(x.data_ptr())")),
    "input_mutation": (python("x[0] = 0\nreturn ext.run(x)"), python("x = x.contiguous()\nx.mul_(2)\nreturn ext.run(x)")),
    "shape_branch": (python("if x.numel() == 4096:\n    return x\nreturn ext.run(x)"),
                     python("if x.numel() == 0:\n    return x\nif x.size(1) != 64:\n    raise ValueError('shape')\nreturn ext.run(x)")),
    "precision_downgrade": (python("return ext.run(x.half())"),
                            python("assert x.dtype != torch.float16\nreturn ext.run(x.float())")),
    "source_unfollowed": (cuda(LAUNCHED, call="ext.run(x)").replace("cuda_sources=SRC", "cuda_sources=PARTS['cu']")
                          .replace("ext = load_inline", "PARTS = {'cu': SRC}\next = load_inline")
                          + "UNUSED = r'''__global__ void fast(float* y) {}'''\n",
                          cuda(LAUNCHED, call="ext.run(x)")),
    "guarded_build": (python("return ext.run(x) if ext else torch.relu(x)").replace(
        "ext = load_inline(", "try:\n    ext = load_inline(").replace(
        "functions=['run'])\n", "functions=['run'])\nexcept Exception:\n    ext = None\n"),
        python("return ext.run(x)")),
    "forward_replaced": (python("out = ext.run(x)\nself.forward = lambda *a: out\nreturn out"),
                         python("out = ext.run(x)\nself.forwarded = out\nreturn out")),
    "mode_switch": (python("return ext.run(x)").replace("class ModelNew(nn.Module):",
                    "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.eval()"),
                    python("return ext.run(x)").replace("class ModelNew(nn.Module):",
                    "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                    "        self.inner = nn.Identity().eval()")),
    "constant_output": (python("if x.shape == (4, 4):\n    return self.cached\nreturn ext.run(x)").replace(
        "class ModelNew(nn.Module):", "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.cached = torch.zeros(4, 4)"),
        python("ext.run(self.cached)\nreturn self.cached").replace(
        "class ModelNew(nn.Module):", "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.cached = torch.zeros(4, 4)")),
    "persisting_l2": (cuda(LAUNCHED + "\nvoid l2() { cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1 << 20); }"),
                      cuda(LAUNCHED + "\nvoid l2() { cudaDeviceGetAttribute(nullptr, cudaDevAttrL2CacheSize, 0); }")),
}


def test_every_rule_has_a_snippet():
    assert set(SNIPPETS) == set(CODES)


@pytest.mark.parametrize("code", sorted(SNIPPETS))
def test_rule_on_minimal_snippet(code):
    flagged, similar = SNIPPETS[code]
    assert code in {f.code for f in check_source(flagged, backend="triton")}, check_source(flagged, backend="triton")
    assert code not in {f.code for f in check_source(similar, backend="triton")}, check_source(similar, backend="triton")


@pytest.mark.parametrize("flagged, forward, prelude", [
    (True, "return torch.relu(x)", "decoy = k  # named, never launched"),
    (True, "return torch.relu(x)", ""),
    (False, LAUNCHED_TRITON, ""),
    (False, "k.run(x, x.numel(), BLOCK=16, grid=(1,))\nreturn x", ""),
    (False, "fn = k if x.numel() > 16 else k\nfn[(1,)](x, x.numel(), BLOCK=16)\nreturn x", ""),
    (True, "layers = [torch.relu]\nreturn layers[0](x)", "decoy = k"),  # another launch-like call vouches for nothing
], ids=["named_only", "never_named", "grid_launch", "run_launch", "through_variable", "other_subscript_call"])
def test_a_triton_kernel_counts_as_launched_only_when_launched(flagged, forward, prelude):
    codes = {f.code for f in check_source(triton(forward, prelude))}
    assert ("kernel_never_launched" in codes) == flagged, codes


def test_backend_mismatch_only_speaks_for_triton_runs():
    assert "backend_mismatch" not in {f.code for f in check_source(cuda(LAUNCHED), backend="cuda")}
    assert "backend_mismatch" in {f.code for f in check_source(triton("return torch.relu(x)"), backend="triton")}


def test_precision_rule_applies_to_fp32_work_only():
    source = python("return ext.run(x.half())")
    assert "precision_downgrade" in {f.code for f in check_source(source, precision="fp32")}
    assert "precision_downgrade" not in {f.code for f in check_source(source, precision="bf16")}


def test_cpp_precision_types_are_told_from_variables_named_half():
    assert "precision_downgrade" in {f.code for f in check_source(cuda(LAUNCHED + "\n__device__ void f(const half* p) {}"))}
    loop = "\n__device__ int f(int n) { int half = n / 2; for (int half_width = half; half_width > 0; half_width >>= 1) {} return half; }"
    assert check_source(cuda(LAUNCHED + loop)) == []


def test_size_specialisation_that_still_launches_a_kernel_is_not_a_shortcut():
    helper = "def launch(t):\n    return ext.run(t)"
    specialised = python("if x.shape[1] == 64:\n    return launch(x)\nreturn ext.run(x)", helper)
    assert check_source(specialised) == []
    assert "shape_branch" in {f.code for f in check_source(specialised.replace("return launch(x)", "return x"))}


def test_kernel_launched_through_a_macro_is_launched():
    body = ("#define LAUNCH(kern, n) \\\n    kern<<<((n) + 255) / 256, 256>>>(y, (n))\n"
            "__global__ void used(float* y, long n) {}\n__global__ void unused(float* y, long n) {}\n"
            "void run(torch::Tensor t) { float* y = t.data_ptr<float>(); LAUNCH(used, t.numel()); }")
    findings = check_source(cuda(body))
    assert [(f.code, "unused" in f.message) for f in findings] == [("kernel_never_launched", True)]


def test_finding_lines_point_into_embedded_sources():
    source = cuda(LAUNCHED + "\nvoid s() {\n  cudaStream_t t;\n  cudaStreamCreate(&t);\n}")
    (finding,) = check_source(source)
    assert source.splitlines()[finding.line - 1].strip() == "cudaStreamCreate(&t);"


# ---- robustness ------------------------------------------------------------------------------------

def test_unparsable_file_gives_one_syntax_finding():
    findings = check_source("import torch\n\nclass ModelNew(nn.Module:\n    pass\n")
    assert len(findings) == 1 and findings[0].code == "syntax" and findings[0].severity == "error"
    assert findings[0].line == 3 and "does not parse" in findings[0].message


@pytest.mark.parametrize("source", ["", "\x00", "(" * 5000, "x = '''unterminated", "\ufeffimport torch\n", "lambda: (yield)"])
def test_odd_inputs_do_not_crash(source):
    findings = check_source(source)
    assert all(isinstance(f, Finding) for f in findings)
    assert "checker_error" not in {f.code for f in findings}


def test_truncated_fixtures_never_crash_the_checker():
    for path in EXPLOITS + CLEAN:
        text = path.read_text()
        for cut in range(0, len(text), max(1, len(text) // 25)):
            findings = check_source(text[:cut])
            assert "checker_error" not in {f.code for f in findings}, (path.name, cut, findings)
            assert [f.code for f in findings if f.code == "syntax"] in ([], ["syntax"])


def test_checker_never_runs_the_kernel(tmp_path):
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit(3)\n"
    assert "file_io" in {f.code for f in check_source(source)}
    assert not marker.exists()


# ---- policy and documentation ----------------------------------------------------------------------

RECORD = {"sample_id": 0, "compiled": True, "correctness": True, "eval_status": "correct", "runtime": 1.5,
          "runtime_stats": {"mean": 1.5}, "peak_memory": 1024, "memory_stats": {"peak_allocated": 1024},
          "metadata": {"device": "cuda:0"}}
ERROR = Finding("side_stream", 17, "error", "side stream created")
WARNING = Finding("no_custom_kernel", 1, "warn", "no custom kernel")


def test_policy_off_stores_nothing():
    assert apply_policy(RECORD, [ERROR], "off") == RECORD


def test_policy_warn_stores_findings_and_keeps_the_verdict():
    record = apply_policy(RECORD, [WARNING, ERROR], "warn")
    assert record["metadata"]["static_findings"] == [WARNING.to_dict(), ERROR.to_dict()]
    assert record["correctness"] and record["eval_status"] == "correct" and record["runtime"] == 1.5
    assert "static_findings" not in RECORD["metadata"]  # the input record is not changed
    assert [Finding.from_dict(d) for d in record["metadata"]["static_findings"]] == [WARNING, ERROR]


def test_policy_reject_fails_samples_with_error_findings_only():
    rejected = apply_policy(RECORD, [WARNING, ERROR], "reject")
    assert not rejected["correctness"] and rejected["eval_status"] == REJECTED_STATUS
    assert rejected["metadata"]["static_rejected_codes"] == ["side_stream"]
    assert rejected["metadata"]["eval_status_before_static"] == "correct"
    assert rejected["runtime"] == -1.0 and rejected["peak_memory"] == -1 and rejected["compiled"]
    kept = apply_policy(RECORD, [WARNING], "reject")
    assert kept["correctness"] and kept["metadata"]["static_findings"] == [WARNING.to_dict()]
    assert rejecting_codes([WARNING, ERROR], "warn") == [] and rejecting_codes([ERROR], "reject") == ["side_stream"]


def test_unknown_policy_is_a_user_error():
    with pytest.raises(UserError, match="static_check"):
        apply_policy(RECORD, [], "strict")


def test_docs_document_every_code():
    page = (ROOT / "docs" / "static-checks.md").read_text()
    section = page.split("## Codes", 1)[1]
    for code, severity, _ in rule_table():
        assert f"| `{code}` | {severity} |" in section, code


def test_an_exported_helper_that_is_not_called_is_a_warning_not_an_error():
    """An honest extension may export a helper it does not need; only an extension none of whose
    functions is called is a decoy (kernel_never_launched, an error that reject stops)."""
    body = LAUNCHED + "\nvoid helper(torch::Tensor y) { k<<<1, 1>>>(y.data_ptr<float>()); }"
    findings = check_source(cuda(body, functions=("run", "helper")))
    assert [(f.code, f.severity) for f in findings] == [("extension_function_unused", "warn")]
    assert rejecting_codes(findings, "reject") == []
    decoy = check_source(cuda(body, functions=("run", "helper"), call="torch.relu(x)"))
    assert "kernel_never_launched" in {f.code for f in decoy}


def _module_file(init: str, forward: str, imports: str = "", prelude: str = "") -> str:
    """A kernel file whose ModelNew runs `init` in __init__ and `forward` in forward (indented here)."""
    indent = lambda text: "\n".join("        " + line for line in text.splitlines())
    return (f"import torch\nimport torch.nn as nn\n{imports}\n{prelude}\nclass ModelNew(nn.Module):\n"
            f"    def __init__(self):\n        super().__init__()\n{indent(init)}\n"
            f"    def forward(self, x):\n{indent(forward)}\n")


# Honest habits of model-written kernels that the checker once took for hacks: each must give no error.
HONEST_HABITS = {
    "source_in_a_method": _module_file(
        f"src = r'''{LAUNCHED}'''\nself.ext = load_inline(name='e', cpp_sources='', cuda_sources=src, functions=['run'])",
        "return self.ext.run(x)", "from torch.utils.cpp_extension import load_inline"),
    "source_from_a_helper_and_a_parameter": _module_file(
        "self.ext = build(cuda_source())", "return self.ext.run(x)",
        "import textwrap\nfrom torch.utils.cpp_extension import load_inline",
        f"def cuda_source():\n    return textwrap.dedent(r'''{LAUNCHED}''')\n"
        "def build(source, name='e'):\n    return load_inline(name=name, cpp_sources='', cuda_sources=[source], functions=['run'])\n"),
    "source_under_a_cuda_check": _module_file(
        "pass", "return ext.run(x)", "from torch.utils.cpp_extension import load_inline",
        f"if torch.cuda.is_available():\n    SRC = r'''{LAUNCHED}'''\n"
        "    ext = load_inline(name='e', cpp_sources='', cuda_sources=SRC, functions=['run'])\n"),
    "source_written_for_load": _module_file(
        "folder = tempfile.mkdtemp()\nos.makedirs(folder, exist_ok=True)\npath = os.path.join(folder, 'k.cu')\n"
        "with open(path, 'w') as handle:\n    handle.write(CU)\nself.ext = load(name='k', sources=[path])",
        "return self.ext.run(x)", "import os\nimport tempfile\nfrom torch.utils.cpp_extension import load",
        f"CU = r'''#include <torch/extension.h>\n{LAUNCHED}\n"
        "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"run\", &run); }'''\n"),
    "cupy_raw_module_in_a_method": _module_file(
        "code = r'''extern \"C\" __global__ void k(float* y) { y[0] = 1.f; }'''\n"
        "self.mod = cupy.RawModule(code=code)\nself.k = self.mod.get_function('k')",
        "self.k((1,), (1,), (x.data_ptr(),))\nreturn x", "import cupy"),
    "cache_keyed_on_own_weight": python(
        "key = (self.weight._version, self.weight.data_ptr(), id(self.weight))\n"
        "if self.key != key:\n    self.packed, self.key = self.weight.t().contiguous(), key\nreturn ext.run(x)"),
    "stream_made_and_unused": _module_file(
        "self.stream = torch.cuda.Stream()", "return ext.run(x)", "",
        cuda(LAUNCHED).split("class ModelNew")[0]),
    "inductor_tuning": python("return ext.run(x)", "import torch._inductor.config as inductor_config\n"
                              "inductor_config.coordinate_descent_tuning = True\ntorch._dynamo.config.cache_size_limit = 64"),
}


@pytest.mark.parametrize("name", sorted(HONEST_HABITS))
def test_honest_habits_get_no_error(name):
    errors = [f for f in check_source(HONEST_HABITS[name]) if f.severity == "error"]
    assert errors == [], errors


def test_honest_fixtures_get_no_error():
    """The kernels of tests/fixtures/honest (written as models write them) give no error-level finding:
    under static_check=reject none would be refused."""
    honest = sorted((FIXTURES / "honest").glob("*.py"))
    accused = {p.stem: sorted({f.code for f in check_file(p) if f.severity == "error"}) for p in honest}
    assert len(honest) >= 30 and {k: v for k, v in accused.items() if v} == {}


def test_a_decoy_beside_a_followed_source_is_still_an_error_and_an_unfollowed_one_a_warning():
    decoy = cuda(LAUNCHED) + "DECOY = r'''__global__ void fast(float* y) {}'''\n"
    assert [f.severity for f in check_source(decoy) if "decoy" in f.message] == ["error"]
    unfollowed = SNIPPETS["source_unfollowed"][0]
    assert {f.code for f in check_source(unfollowed) if f.severity == "error"} == set()
    assert "source_unfollowed" in {f.code for f in check_source(unfollowed)}
