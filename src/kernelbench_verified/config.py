"""Loading a script's Hydra config from configs/ with key=value overrides, and checking it.

We use Hydra's compose API rather than @hydra.main: it neither changes the working directory nor
writes outputs/ folders, and its errors can be turned into one line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf

from .paths import CHECKOUT_ROOT
from .errors import UserError

CONFIG_DIR = CHECKOUT_ROOT / "configs"


def config_path(name: str) -> Path:
    path = CONFIG_DIR / f"{name}.yaml"
    if not path.is_file():
        raise UserError(f"config {path} not found: is the package installed from a checkout?")
    return path


def load_config(name: str, overrides: list[str], allow_missing: bool = False) -> DictConfig:
    """Compose configs/{name}.yaml with Hydra-style overrides, upstream's names among them
    (upstream_names.translate); raise UserError on any problem. `allow_missing` keeps required keys
    not given as ??? (for printing the config), instead of refusing them."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from .upstream_names import translate

    defaults = OmegaConf.load(config_path(name))
    overrides = translate(name, [upstream_syntax(o) for o in overrides])
    _refuse_unknown_keys(defaults, overrides, name)
    try:
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
            cfg = compose(config_name=name, overrides=overrides)
        OmegaConf.resolve(cfg)
        missing = sorted(OmegaConf.missing_keys(cfg))
    except (HydraException, OmegaConfBaseException, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if first.startswith("Ambiguous value for argument"):  # key=a,b without -m
            raise UserError(f"bad config override: {first}: add -m to run one job per value, or write a list "
                            "as key=[a,b] or a string as key='a,b'") from None
        raise UserError(f"bad config override: {first} (see configs/{name}.yaml for the keys)") from None
    if missing and not allow_missing:
        raise UserError(f"missing required config key(s): {', '.join(missing)} (pass them as key=value)")
    _coerce_booleans(cfg, defaults)
    return cfg


# Booleans as upstream's pydra scripts and people write them; anything else is an error naming the key.
BOOLEAN_WORDS = {"true": True, "t": True, "yes": True, "1": True, "false": False, "f": False, "no": False, "0": False}


def _coerce_booleans(cfg: DictConfig, defaults: DictConfig) -> None:
    """Keys whose default is a boolean take T/F, true/false, yes/no or 1/0; `use_hidden_tests=F` must
    never read as true."""
    for key in defaults.keys():
        default = OmegaConf.select(defaults, str(key), throw_on_missing=False)
        if not isinstance(default, bool) or isinstance(cfg[key], bool):
            continue
        word = str(cfg[key]).strip().lower()
        if word not in BOOLEAN_WORDS:
            raise UserError(f"{key}={cfg[key]!r} is not a boolean: use true or false (T/F, yes/no and 1/0 work too)")
        cfg[key] = BOOLEAN_WORDS[word]


def upstream_syntax(override: str) -> str:
    """Upstream's pydra values as Hydra reads them: a tuple `subset=(1,10)` as the list `subset=[1,10]`,
    and Python's `None` (alone, or as an item of a list or tuple, `subset=(None,None)`) as null."""
    key, sep, value = override.partition("=")
    value = value.strip()
    if not sep:
        return override
    if value == "None":
        return f"{key}=null"
    if value[:1] in "([" and value[-1:] in ")]" and len(value) >= 2:
        items = re.sub(r"(?<![\w'\"])None(?![\w'\"])", "null", value[1:-1])
        return f"{key}=[{items}]"
    return override


def _refuse_unknown_keys(defaults: DictConfig, overrides: list[str], name: str) -> None:
    """An override of a key the config does not have names the keys it is close to."""
    import difflib

    known = [str(k) for k in defaults.keys()]  # `in` would miss required (???) keys
    for override in overrides:
        key = override.partition("=")[0].lstrip("+~").split(".")[0].strip()
        if key and key not in known and not override.startswith("+"):
            close = difflib.get_close_matches(key, known, n=3)
            hint = f" (did you mean {' or '.join(close)}?)" if close else f" (see configs/{name}.yaml for the keys)"
            raise UserError(f"unknown config key {key!r}{hint}")


def require_choice(cfg: DictConfig, key: str, choices: tuple) -> Any:
    value = cfg[key]
    if value not in choices:
        raise UserError(f"{key}={value!r} is not one of {', '.join(map(str, choices))}")
    return value


def require_int(cfg: DictConfig, key: str, minimum: int = 0) -> int:
    value = cfg[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise UserError(f"{key}={value!r} must be an integer >= {minimum}")
    return value


def parse_subset(value) -> tuple:
    """The inclusive problem-id range of a `subset` key: [first, last], null for an open end."""
    subset = OmegaConf.to_container(value) if value is not None and not isinstance(value, (int, str)) else value
    if subset is None:
        return (None, None)
    if not isinstance(subset, list) or len(subset) != 2 or not all(s is None or isinstance(s, int) for s in subset):
        raise UserError(f"subset={value!r} must be [first_id, last_id] (null for an open end)")
    return tuple(subset)


def parse_problem_ids(value) -> list[int] | None:
    """The problem ids of a `problem_ids` key: a list of ids, or None (the subset decides)."""
    ids = OmegaConf.to_container(value) if isinstance(value, ListConfig) else value
    if ids is None:
        return None
    ids = [ids] if isinstance(ids, int) and not isinstance(ids, bool) else ids
    if not isinstance(ids, list) or not ids or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise UserError(f"problem_ids={value!r} must be a list of problem ids, e.g. [71,86,95] (or null)")
    return ids


def resolve_devices(requested: str, num_devices: int) -> list[str]:
    """cuda:0..n-1 for n = num_devices, or ["cpu"] * n when there is no GPU or device=cpu."""
    import torch

    if requested == "cpu" or (requested == "auto" and not torch.cuda.is_available()):
        return ["cpu"] * num_devices
    available = torch.cuda.device_count()
    if available == 0:
        raise UserError("device=cuda but no CUDA GPU is visible (use device=cpu or device=auto)")
    if num_devices > available:
        raise UserError(f"num_gpu_devices={num_devices} but only {available} GPU(s) are visible")
    return [f"cuda:{i}" for i in range(num_devices)]


def child_visible_devices(device: str) -> str:
    """The CUDA_VISIBLE_DEVICES value that binds a child process to `device` ("cuda:i" or "cpu"):
    index i of this process's own CUDA_VISIBLE_DEVICES when one is set (a user who ran with
    CUDA_VISIBLE_DEVICES=2,3 gets GPUs 2 and 3, not 0 and 1), else i itself."""
    if device == "cpu":
        return ""
    index = int(device.split(":")[1])
    inherited = [d.strip() for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    return inherited[index] if index < len(inherited) else str(index)


def trials_by_level(cfg: DictConfig) -> dict[str, int]:
    """num_perf_trials_by_level, {level: trials or null}, checked; the levels with a count of their own,
    keys as strings (the form JSON stores them)."""
    value = cfg.get("num_perf_trials_by_level")
    raw = OmegaConf.to_container(value) if isinstance(value, DictConfig) else value or {}
    counted = {k: v for k, v in raw.items() if v is not None} if isinstance(raw, dict) else None
    if counted is None or not all(str(k).isdigit() and isinstance(v, int) and not isinstance(v, bool) and v >= 1
                                  for k, v in counted.items()):
        raise UserError(f"num_perf_trials_by_level={value!r} must map levels to trial counts >= 1 or null, "
                        f"e.g. {{4: 10}}")
    return {str(int(k)): v for k, v in counted.items()}


def perf_trials(settings: dict, level: int) -> int:
    """Timed calls for a problem of `level`: its num_perf_trials_by_level entry, else num_perf_trials."""
    return settings.get("num_perf_trials_by_level", {}).get(str(level), settings["num_perf_trials"])


def hardware_label(device_name: str | None) -> str:
    """The folder name a device's figures go under: "H100" for "NVIDIA H100 80GB HBM3", "cpu" for the CPU
    (a record's metadata.hardware, evaluate.record.hardware_name)."""
    name = (device_name or "").replace("NVIDIA", "").strip()
    if not name:
        return "gpu"
    return "cpu" if name.lower().startswith("cpu") else name.split()[0]


_RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=@-]{0,199}$")


def safe_run_name(value) -> str:
    """A run_name that names one folder inside runs_dir: no separators, no '..', no leading dot."""
    name = str(value)
    if not _RUN_NAME.match(name) or ".." in name:
        raise UserError(f"run_name={name!r} is not a plain folder name (letters, digits and . _ + = @ -, "
                        "not starting with a dot, no '/' or '..')")
    return name


def existing_run_folder(cfg: DictConfig) -> Path:
    """runs_dir/run_name, which must exist; a script checks it before it imports torch, so a mistyped
    name costs a second, not torch's import."""
    run_dir = Path(cfg.runs_dir) / safe_run_name(cfg.run_name)
    if not run_dir.is_dir():
        raise UserError(f"run folder {run_dir} not found (check run_name= and runs_dir=)")
    return run_dir
