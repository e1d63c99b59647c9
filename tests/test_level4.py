"""Level 4: every model is built from the hyper-parameters in its file, offline, and maps token ids to
logits of the catalog's shape (on the meta device where transformers allows it, else a reduced real run)."""

import json
import socket

import pytest
import torch

from conftest import ROOT
from kernelbench_verified.problems.inputs import build_model
from kernelbench_verified.problems.load import load_module

CATALOG = [json.loads(line) for line in (ROOT / "KernelBench" / "catalog.jsonl").read_text().splitlines()]
LEVEL4 = [e for e in CATALOG if e["level"] == 4]

# transformers (5.x) reads token values on the host in these models' forward (padding checks for
# BigBird up to 704 tokens and Electra, position_ids.max().item() in Reformer), which the meta device
# cannot do; they get a real forward at reduced depth and size instead.
NOT_ON_META = {"google/bigbird-roberta-base": 704, "google/electra-small-discriminator": None,
               "google/reformer-enwik8": None}


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No network at all: HF offline switches, an empty cache, and sockets that refuse to connect."""
    home = tmp_path / "hf_home"
    home.mkdir()
    for key, value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HOME": str(home)}.items():
        monkeypatch.setenv(key, value)

    def refuse(*args, **kwargs):
        raise AssertionError("level-4 problem tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    yield home
    assert not any(home.iterdir()), "something was written to the Hugging Face cache"


def _runs_on_meta(entry) -> bool:
    limit = NOT_ON_META.get(entry["hf_model"]["model_name"], -1)
    return limit == -1 or (limit is not None and entry["hf_model"]["sequence_length"] > limit)


@pytest.mark.parametrize("entry", LEVEL4, ids=lambda e: e["name"])
def test_model_builds_offline_and_maps_ids_to_logits(entry, offline):
    module = load_module(ROOT / "KernelBench" / "level4" / entry["filename"])
    if _runs_on_meta(entry):
        device = torch.device("meta")
        batch, seq = entry["inputs"][0]["shape"]
        expected = entry["output"]["shape"]
    else:  # reduced real run: one layer, a short sequence, batch 2
        device = torch.device("cpu")
        layer_key = next(k for k in ("num_hidden_layers", "num_layers", "n_layer") if k in module.HF_CONFIG)
        module.HF_CONFIG[layer_key] = 1
        if "attn_layers" in module.HF_CONFIG:
            module.HF_CONFIG["attn_layers"] = module.HF_CONFIG["attn_layers"][:1]
        batch, seq = 2, min(64, entry["inputs"][0]["shape"][1])
        module.batch_size, module.sequence_length = batch, seq
        expected = [batch, seq, entry["output"]["shape"][-1]]
    model = build_model(module.Model, module, 42, device, torch.float32)
    with torch.device(device):
        torch.manual_seed(0)
        (ids,) = module.get_inputs()
    assert ids.dtype == torch.int64 and list(ids.shape) == [batch, seq]
    with torch.no_grad():
        logits = model(ids)
    assert list(logits.shape) == expected and logits.dtype == torch.float32
    if device.type == "cpu":
        assert bool(torch.isfinite(logits).all())


def test_level4_files_match_the_catalog_and_hidden_files_say_inputs_are_integer():
    from kernelbench_verified.problems.hidden_tests import INTEGER_ONLY_NOTE, hidden_path
    from kernelbench_verified.problems.load import list_problems

    assert {p.filename for p in list_problems(4)} == {e["filename"] for e in LEVEL4}
    for entry in LEVEL4:
        assert INTEGER_ONLY_NOTE in hidden_path(4, entry["pid"]).read_text()
