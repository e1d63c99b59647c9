"""Handing output tensors from the kernel's process to the judge without pickling.

On CUDA the kernel's process exports a CUDA IPC handle of its output's storage and the judge maps
that memory (no copy: a 6.4 GB output is compared in place; only an output that CUDA IPC cannot share,
such as one of torch.compile's CUDA graphs, is copied first). On the CPU the output is written as raw
bytes to a file in the job's private directory. Either way the judge rebuilds a plain tensor from
dtype, shape and memory, so a tensor subclass or patched method in the kernel's process cannot alter
what is compared.
"""

from __future__ import annotations

import base64
from pathlib import Path

import torch

DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32,
    torch.int16, torch.int8, torch.uint8, torch.bool)}


def _b64(value):
    return {"b64": base64.b64encode(value).decode()} if isinstance(value, bytes) else value


def _unb64(value):
    return base64.b64decode(value["b64"]) if isinstance(value, dict) else value


def export_tensor(tensor: torch.Tensor, workdir: Path, tag: str) -> dict:
    """Describe `tensor` (made contiguous) so that import_tensor can rebuild it in another process."""
    tensor = tensor.detach().contiguous()
    desc = {"dtype": str(tensor.dtype).removeprefix("torch."), "shape": list(tensor.shape)}
    if tensor.is_cuda:
        try:
            handle = tensor.untyped_storage()._share_cuda_()
        except RuntimeError:
            # The CUDA-graph outputs of torch.compile's cudagraph modes could not be IPC-shared on the
            # H200 ("invalid device pointer"); a copy in ordinary memory can, with the same values.
            tensor = tensor.clone()
            handle = tensor.untyped_storage()._share_cuda_()
        desc["cuda_ipc"] = [_b64(v) for v in handle]
        desc["offset_bytes"] = tensor.storage_offset() * tensor.element_size()
    else:
        path = workdir / f"{tag}.bin"
        tensor.reshape(-1).view(torch.uint8).numpy().tofile(path)
        desc["file"] = str(path)
    return desc


def import_tensor(desc: dict, workdir: Path) -> torch.Tensor:
    """Rebuild a plain tensor from an untrusted description; ValueError if it is malformed."""
    dtype = DTYPES.get(desc.get("dtype"))
    shape = desc.get("shape")
    if dtype is None or not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape):
        raise ValueError(f"malformed tensor description {str(desc)[:200]}")
    numel = 1
    for s in shape:
        numel *= s
    nbytes = numel * torch.empty((), dtype=dtype).element_size()
    if "cuda_ipc" in desc:
        args = [_unb64(v) for v in desc["cuda_ipc"]]
        storage = torch.UntypedStorage._new_shared_cuda(*args)
        offset = int(desc.get("offset_bytes", 0))
        if offset < 0 or offset + nbytes > storage.nbytes():
            raise ValueError("tensor description points outside its storage")
        flat = torch.empty(0, dtype=torch.uint8, device=storage.device)
        flat.set_(storage, offset, (nbytes,), (1,))
        return flat.view(dtype).reshape(shape)
    path = Path(desc.get("file", ""))
    if path.parent.resolve() != workdir.resolve() or not path.is_file() or path.stat().st_size != nbytes:
        raise ValueError("tensor file missing, outside the job directory, or of the wrong size")
    if nbytes == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.from_file(str(path), size=nbytes, dtype=torch.uint8).view(dtype).reshape(shape)
