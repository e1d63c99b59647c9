"""Loading a script's Hydra config from configs/ with key=value overrides, and checking it.

We use Hydra's compose API rather than @hydra.main: it neither changes the working directory nor
writes outputs/ folders, and its errors can be turned into one line.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from omegaconf import DictConfig, OmegaConf

from . import REPO_ROOT
from .errors import UserError

CONFIG_DIR = REPO_ROOT / "configs"


def load_config(name: str, overrides: list[str]) -> DictConfig:
    """Compose configs/{name}.yaml with Hydra-style overrides; raise UserError on any problem."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    if not (CONFIG_DIR / f"{name}.yaml").is_file():
        raise UserError(f"config {CONFIG_DIR / name}.yaml not found: is the package installed from a checkout?")
    try:
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
            cfg = compose(config_name=name, overrides=overrides)
        OmegaConf.resolve(cfg)
        missing = sorted(OmegaConf.missing_keys(cfg))
    except (HydraException, OmegaConfBaseException, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"bad config override: {first} (see configs/{name}.yaml for the keys)") from None
    if missing:
        raise UserError(f"missing required config key(s): {', '.join(missing)} (pass them as key=value)")
    return cfg


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


def run_script(config_name: str, main: Callable[[DictConfig], int | None]) -> None:
    """Entry point of a thin script: compose the config, run `main`, turn UserError into one line."""
    try:
        cfg = load_config(config_name, sys.argv[1:])
        code = main(cfg)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted: finished results are saved; re-run the same command to resume", file=sys.stderr)
        sys.exit(130)
    sys.exit(code or 0)


def parse_subset(value) -> tuple:
    """The inclusive problem-id range of a `subset` key: [first, last], null for an open end."""
    subset = OmegaConf.to_container(value) if value is not None and not isinstance(value, (int, str)) else value
    if subset is None:
        return (None, None)
    if not isinstance(subset, list) or len(subset) != 2 or not all(s is None or isinstance(s, int) for s in subset):
        raise UserError(f"subset={value!r} must be [first_id, last_id] (null for an open end)")
    return tuple(subset)


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
