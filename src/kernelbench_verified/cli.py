"""The command line every Hydra script shares: `run_script` reads it, composes the config (config.py)
and runs the script's job; -h/--help prints the script's purpose and every key of its config with its
default and comment, --cfg job prints the composed config, -m runs a sweep one job after another.

Upstream's scripts use pydra, and its command lines work here too: --show (as --cfg job), a method call
such as .greedy (upstream_names.PYDRA_METHODS), --list KEY A B list-- (KEY=[A,B]) and --in PREFIX KEY=V
in-- (PREFIX.KEY=V); `None` is null (config.upstream_syntax); upstream's key names that ours spell
differently are translated (upstream_names).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from omegaconf import DictConfig, OmegaConf

from .config import config_path, load_config, upstream_syntax
from .errors import UserError
from .upstream_names import PYDRA_METHODS, UPSTREAM_ENVIRONMENT, UPSTREAM_NAMES


@dataclass(frozen=True)
class Sweeps:
    """How a script takes a sweep (-m): its jobs run one after another, each exactly as the command
    without -m would run it. `writes(cfg)` lists the files or folders one job writes (none for a script
    that only reads); a sweep in which two jobs would write the same place is refused before any runs,
    with `advice`: what to do instead, in one line."""

    writes: Callable[[DictConfig], list]
    advice: str = ""


def run_script(config_name: str, main: Callable[[DictConfig], int | None], doc: str | None = None,
               sweeps: Sweeps | None = None) -> None:
    """Entry point of a thin script: read the command line, compose the config, run `main`, turn
    UserError into one line.

    Besides key=value overrides the command line takes -h/--help (`doc`, the script's docstring, by
    default the __main__ module's, then every key of configs/{config_name}.yaml with its default and its
    comment), --cfg job (print the composed config, run nothing) and -m/--multirun (a sweep, as `sweeps`
    allows; None refuses every sweep). --help reads no config through Hydra and calls nothing of `main`:
    a script whose job needs torch imports it inside `main`."""
    try:
        if any(arg in ("-h", "--help") for arg in sys.argv[1:]):  # whatever else the line holds
            doc = doc if doc is not None else getattr(sys.modules.get("__main__"), "__doc__", None)
            print(script_help(config_name, doc, sweeps, Path(sys.argv[0]).name or "script.py"))
            sys.exit(0)
        command = parse_command_line(sys.argv[1:], PYDRA_METHODS.get(config_name, {}))
        if command.multirun:
            sys.exit(_multirun(config_name, main, command, sweeps))
        cfg = load_config(config_name, command.overrides, allow_missing=bool(command.cfg))
        if command.cfg:
            print(OmegaConf.to_yaml(cfg), end="")
            missing = sorted(OmegaConf.missing_keys(cfg))
            if missing:
                print(f"note: {', '.join(missing)} still to pass as key=value (??? above) before this runs",
                      file=sys.stderr)
            sys.exit(0)
        code = main(cfg)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted: finished results are saved; re-run the same command to resume", file=sys.stderr)
        sys.exit(130)
    sys.exit(code or 0)


@dataclass
class CommandLine:
    overrides: list[str] = field(default_factory=list)
    help: bool = False
    cfg: str | None = None  # "job": print the config instead of running
    multirun: bool = False


# What --cfg takes: Hydra's job and all print the composed config (these scripts have no Hydra runtime
# config: no outputs/ folders, no logging setup), hydra is refused.
CFG_CHOICES = ("job", "all")


def parse_command_line(argv: list[str], methods: dict | None = None) -> CommandLine:
    """Hydra's flags these scripts take (--help, --cfg job, -m) and pydra's (--show, .method, --list,
    --in) apart from the key=value overrides, which keep their order (a later one wins)."""
    command, args, scopes = CommandLine(), list(argv), []
    while args:
        arg = args.pop(0)
        if arg in ("-h", "--help"):
            command.help = True
        elif arg == "--show":
            command.cfg = "job"
        elif arg == "--list":
            command.overrides.append(_pydra_list(args, scopes))
        elif arg == "--in":
            if not args or args[0].startswith("-") or "=" in args[0]:
                raise UserError("--in needs a key to scope the next overrides to: --in jail_limits processes=64 in--")
            scopes.append(args.pop(0))
        elif arg == "in--":
            if not scopes:
                raise UserError("in-- without an --in before it")
            scopes.pop()
        elif arg.startswith(".") and re.match(r"^\.[A-Za-z_]\w*(\(\))?$", arg):
            name = arg[1:].removesuffix("()")
            if name not in (methods or {}):
                known = ", ".join(f".{m}" for m in methods or {}) or "none"
                raise UserError(f"unknown method {arg!r}: this script's config takes {known} (key=value sets a key)")
            command.overrides += methods[name]
        elif arg in ("-m", "--multirun"):
            command.multirun = True
        elif arg in ("-c", "--cfg") or arg.startswith("--cfg="):
            value = arg.partition("=")[2] if "=" in arg else (args.pop(0) if args else "")
            if value == "hydra":
                raise UserError("--cfg hydra: these scripts have no Hydra runtime config (they write no outputs/ "
                                "folders); --cfg job prints the job's config")
            if value not in CFG_CHOICES:
                raise UserError(f"--cfg {value or '(nothing)'}: use --cfg job, which prints the composed config "
                                "and runs nothing")
            command.cfg = "job"
        elif arg == "--resolve":
            pass  # Hydra's flag for resolved interpolations: --cfg job always prints them resolved
        elif arg.startswith("-"):
            raise UserError(f"unknown option {arg!r}: these scripts take key=value overrides, --help, --cfg job "
                            "(or --show), -m, and pydra's --list and --in (see --help)")
        else:
            command.overrides.append(_scoped(arg, scopes))
    if scopes:
        raise UserError(f"--in {scopes[-1]} is not closed: end its overrides with in--")
    return command


def _scoped(override: str, scopes: list[str]) -> str:
    """A key=value inside pydra's --in PREFIX ... in--: PREFIX.key=value (a leading + or ~ stays first)."""
    if not scopes:
        return override
    sign = override[0] if override[:1] in ("+", "~") else ""
    return sign + ".".join(scopes) + "." + override[len(sign):]


def _pydra_list(args: list[str], scopes: list[str]) -> str:
    """pydra's --list KEY A B C list--: KEY=[A,B,C]."""
    if "list--" not in args:
        raise UserError("--list is not closed: write --list KEY A B list-- (or KEY=[A,B])")
    end = args.index("list--")
    items = args[:end]
    del args[: end + 1]
    if not items or "=" in items[0] or items[0].startswith("-"):
        raise UserError("--list needs a key and then its values: --list gpu_arch Hopper Ada list--")
    return _scoped(f"{items[0]}=[{','.join(items[1:])}]", scopes)


def _multirun(config_name: str, main: Callable, command: CommandLine, sweeps: Sweeps | None) -> int:
    """-m: compose every combination of the sweep first (any bad value stops it before a job runs),
    refuse two jobs that would write the same place, then run each job as its own process: the
    script, with that job's overrides and no -m. The sweep stops at the first job that fails."""
    script = Path(sys.argv[0]).name
    if sweeps is None:
        raise UserError(f"{script} takes no sweep (-m): run one command per combination")
    jobs = sweep_jobs(command.overrides)
    configs = [load_config(config_name, overrides) for _, overrides in jobs]
    _refuse_shared_outputs([label for label, _ in jobs], configs, sweeps)
    if command.cfg:
        for number, ((label, _), cfg) in enumerate(zip(jobs, configs), 1):
            print(f"# -m job {number}/{len(jobs)}: {label}\n{OmegaConf.to_yaml(cfg)}", end="")
        return 0
    if len(jobs) == 1:
        return main(configs[0]) or 0
    for number, (label, overrides) in enumerate(jobs, 1):
        print(f"-m job {number}/{len(jobs)}: {label}", flush=True)
        code = _run_job([sys.executable, sys.argv[0], *overrides])
        if code:
            print(f"-m: job {number}/{len(jobs)} ({label}) exited with {code}; the jobs after it did not run. "
                  "Re-running the same command resumes every job", flush=True)
            return code
    print(f"-m: {len(jobs)} jobs done", flush=True)
    return 0


def _run_job(command: list[str]) -> int:
    """One job of a sweep, waited for to its end, and its exit status. A Ctrl-C reaches the job too, which
    saves what it finished before it exits; the sweep then stops. On Linux a job never outlives its sweep:
    a sweep that is killed takes its running job with it, as killing that job's own command would."""
    import subprocess

    from .lifetime import end_with_parent_hook

    process = subprocess.Popen(command, preexec_fn=end_with_parent_hook())
    interrupted = False
    while True:
        try:
            code = process.wait()
            break
        except KeyboardInterrupt:
            interrupted = True
    code = 128 - code if code < 0 else code  # killed by a signal: the shell's convention
    return code or (130 if interrupted else 0)


def sweep_jobs(overrides: list[str]) -> list[tuple[str, list[str]]]:
    """The jobs of a sweep, in order, as (label, overrides): one per combination of the swept keys'
    values (key=a,b or Hydra's range(1,4) and choice(a,b)); a bracketed list (key=[1,10]) is one value."""
    import itertools

    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    overrides = [upstream_syntax(o) for o in overrides]
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException as exc:
        raise UserError(f"bad config override: {str(exc).strip().splitlines()[0]}") from None
    choices = []
    for original, override in zip(overrides, parsed):
        if not override.is_sweep_override():
            choices.append([(None, original)])
        elif not override.is_discrete_sweep():
            raise UserError(f"-m: {original!r} is not a list of values: give them as key=a,b,c")
        else:
            key = override.get_key_element()
            choices.append([(f"{key}={value}", f"{key}={value}") for value in override.sweep_string_iterator()])
    jobs = []
    for combination in itertools.product(*choices):
        label = " ".join(swept for swept, _ in combination if swept) or "(no swept key)"
        jobs.append((label, [override for _, override in combination]))
    return jobs


def _refuse_shared_outputs(labels: list[str], configs: list[DictConfig], sweeps: Sweeps) -> None:
    owners: dict[str, str] = {}
    for label, cfg in zip(labels, configs):
        places = {os.path.normpath(os.path.abspath(str(place))): str(place) for place in sweeps.writes(cfg)}
        for place, shown in places.items():
            for taken, other in owners.items():
                if place == taken or place.startswith(taken + os.sep) or taken.startswith(place + os.sep):
                    raise UserError(f"-m: jobs {other} and {label} would both write {shown}: {sweeps.advice}")
        owners.update({place: label for place in places})


@dataclass
class KeyDoc:
    """One key of a config file as --help shows it: its dotted name, its default as the YAML writes it
    (None for a mapping whose keys follow), and its meaning, from the comments beside and under it (a
    comment block right above a key belongs to it too; a list item's comment describes that item)."""

    key: str
    default: str | None
    meaning: list[str] = field(default_factory=list)


_KEY_LINE = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][A-Za-z0-9_]*|[0-9]+)\s*:(?:\s+(?P<rest>.*))?$")
_ITEM_LINE = re.compile(r"^(?P<indent> *)-\s+(?P<rest>.*)$")


def _split_comment(text: str) -> tuple[str, str]:
    """A YAML line's value and its comment (a # outside quotes, after a space)."""
    quote = None
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].strip(), text[i + 1:].strip()
    return text.strip(), ""


def config_header(name: str) -> list[str]:
    """The comment lines at the top of configs/{name}.yaml, before its first key or blank line."""
    header = []
    for line in config_path(name).read_text().splitlines():
        if not line.startswith("#"):
            break
        header.append(line.lstrip("#").strip())
    return header


def config_keys(name: str) -> list[KeyDoc]:
    """Every key of configs/{name}.yaml, in file order, with its default and the comments that say what
    it means; the keys of a nested mapping as parent.key."""
    text = config_path(name).read_text()
    values = OmegaConf.to_container(OmegaConf.create(text), resolve=False)
    docs: list[KeyDoc] = []
    parents: list[tuple[int, str]] = []  # (indent, dotted key) of the open mappings
    above: list[str] = []  # a comment block waiting for the key under it
    current: KeyDoc | None = None  # the key the next indented comment continues
    in_header = True
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            above, current, in_header = [], None, False
            continue
        if stripped.startswith("#"):
            comment = stripped[1:].strip()
            if current is not None and line.startswith(" "):
                current.meaning.append(comment)
            elif not in_header:
                above.append(comment)
            continue
        in_header = False
        item = _ITEM_LINE.match(line)
        if item and current is not None:
            value, comment = _split_comment(item["rest"])
            current.meaning.append(f"- {value}: {comment}" if comment else f"- {value}")
            continue
        match = _KEY_LINE.match(line)
        if not match:
            continue
        indent = len(match["indent"])
        while parents and parents[-1][0] >= indent:
            parents.pop()
        dotted = f"{parents[-1][1]}.{match['key']}" if parents else match["key"]
        value, comment = _split_comment(match["rest"] or "")
        default = _lookup(values, dotted)
        block_mapping = not value and isinstance(default, dict)
        doc = KeyDoc(dotted, None if block_mapping else override_value(default), above + ([comment] if comment else []))
        docs.append(doc)
        above, current = [], doc
        if block_mapping:
            parents.append((indent, dotted))
    named = {doc.key.split(".")[0] for doc in docs}
    return docs + [KeyDoc(str(k), override_value(v)) for k, v in values.items() if str(k) not in named]


def _lookup(values: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        values = values.get(part, values.get(int(part)) if part.isdigit() else None) \
            if isinstance(values, dict) else None
    return values


def override_value(value: Any) -> str:
    """A default as it would be written on the command line: null, true, 3, [1,2,3], {4:10}, ???."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(override_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{override_value(k)}:{override_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str) and value != "???" and re.search(r"[\s,\[\]{}()=:'\"\\$]", value):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return str(value)


def script_help(config_name: str, doc: str | None, sweeps: Sweeps | None, prog: str) -> str:
    """--help: usage, the script's docstring (its first line is its purpose), the options, then every key
    of configs/{config_name}.yaml with its default and meaning."""
    import shutil
    import textwrap

    width = max(80, min(shutil.get_terminal_size((100, 24)).columns, 120))
    column = 30
    methods = "".join(f" [.{name}]" for name in PYDRA_METHODS.get(config_name, {}))
    out = [f"usage: {prog} [KEY=VALUE ...]{methods} [--cfg job | --show] [-m KEY=A,B ...] [-h]", ""]
    if doc and doc.strip():
        out += [textwrap.dedent(doc).strip("\n"), ""]

    def entry(left: str, meaning: list[str]) -> None:
        text = " ".join(m for m in meaning if m and not m.startswith("- "))
        lines = textwrap.wrap(text, width - column, break_on_hyphens=False) if text else []
        lines += [line for m in meaning if m.startswith("- ")
                  for line in textwrap.wrap(m, width - column, subsequent_indent="  ", break_on_hyphens=False)]
        if len(left) > column - 2 or not lines:
            out.append(left)
        else:
            out.append(left.ljust(column) + lines.pop(0))
        out.extend(" " * column + line for line in lines)

    if sweeps is None:
        multirun = ["not taken by this script: run one command per combination"]
    else:
        multirun = ["sweep KEY=A,B (or range(1,4)): one job per combination of the swept values, one after "
                    "another, each run as the command without -m would run it (resume included); the sweep "
                    "stops at the first job that fails. key=[1,10] is one value, a list; a value may take "
                    "another key's as ${key}."]
        if sweeps.advice:
            multirun.append("A sweep in which two jobs would write the same place is refused before any job "
                            "runs: " + sweeps.advice + ".")
    out.append("options:")
    entry("  -h, --help", ["print this help and exit"])
    entry("  --cfg job", ["print the config composed from the file and the overrides, as YAML with "
                          "interpolations resolved, and exit without running anything (with -m: every job's)"])
    entry("  -m, --multirun", multirun)
    entry("  --show", ["pydra's spelling of --cfg job, as upstream's scripts take it"])
    entry("  --list KEY A B list--", ["pydra's list: the same as KEY=[A,B]"])
    entry("  --in KEY ... in--", ["pydra's scope: KEY2=V between them sets KEY.KEY2=V"])
    for name, overrides in PYDRA_METHODS.get(config_name, {}).items():
        entry(f"  .{name}", [f"upstream's config method, here {' '.join(overrides)}"])
    out += ["", f"keys of configs/{config_name}.yaml (override any as KEY=VALUE; ??? = required):"]
    header = config_header(config_name)  # its first line names the script, as the usage line did
    out += ["  " + line for line in textwrap.wrap(" ".join(header[1:] if len(header) > 1 else header),
                                                    width - 2, break_on_hyphens=False)] if header else []
    for key in config_keys(config_name):
        left = "  " + (key.key if key.default is None else f"{key.key}={key.default}")
        entry(left, key.meaning)
    upstream = {**UPSTREAM_NAMES.get(config_name, {}), **UPSTREAM_ENVIRONMENT.get(config_name, {})}
    if upstream:
        out += ["", "upstream's names that ours spell differently (each prints what it does when used):"]
        for name, meaning in upstream.items():
            entry(f"  {name}" + ("" if name in UPSTREAM_NAMES.get(config_name, {}) else " (environment)"),
                  [meaning.meaning])
    return "\n".join(out)
