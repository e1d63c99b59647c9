"""Handing tensors between the judge and the kernel's process without pickling.

On CUDA a tensor travels as a CUDA IPC handle of its storage and the receiver maps that memory (no
copy: a 6.4 GB output is compared in place; only an output that CUDA IPC cannot share, such as one of
torch.compile's CUDA graphs, is copied first). On the CPU its bytes follow the message on the pipe.
Either way the receiver rebuilds a plain tensor from dtype, shape (on CUDA also strides) and memory, so a
tensor subclass or a patched method in the sender's process cannot alter what is compared. A CUDA
tensor keeps the layout the kernel gave it (channels_last, transposed, expanded): the judge reads its
values where they are, and no copy is queued after the kernel's synchronisation.

Values that are not tensors travel as JSON ({"value": ...}) when JSON holds them (scalars, lists and
string-keyed dicts of them); anything else becomes its repr, which compares unequal to any real value.

CUDA IPC memory stays with its producer until the producer's reference counters say the consumers are
done; torch's consumer decrements them in a shared-memory file that the producer names. The jailed
sandbox's /dev/shm is private, so the judge could never reach that file (and must not write to a file
a kernel names): the judge ignores the counter and the producer's event, and the sandbox releases its
own counters once the judge's next request shows it has dropped the mappings (release_exports).
"""

from __future__ import annotations

import base64
import secrets

import torch

DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32,
    torch.int16, torch.int8, torch.uint8, torch.bool)}
JSON_SCALARS = (int, float, bool, str, type(None))


def _b64(value):
    return {"b64": base64.b64encode(value).decode()} if isinstance(value, bytes) else value


def _unb64(value):
    return base64.b64decode(value["b64"]) if isinstance(value, dict) else value


def _json_value(value):
    """`value` itself when JSON carries it unchanged but for tuples becoming lists (scalars, and lists
    and string-keyed dicts of them: level 4's model configs), else its repr."""
    return value if _plain(value) else repr(value)


def _plain(value, depth: int = 0) -> bool:
    if isinstance(value, JSON_SCALARS):
        return True
    if depth >= 16:
        return False
    if isinstance(value, (list, tuple)):
        return all(_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    return False


# The producer's side: (storage pointer, counter file, counter offset) of every CUDA export
# whose counter is still held.
_EXPORTED: list[tuple] = []


def release_exports(keep: list) -> None:
    """Release the counters of everything exported so far except the storages of `keep` (tensors the
    judge still maps), so CUDA can reuse that memory; called when a new request from the judge arrives."""
    kept = {t.untyped_storage().data_ptr() for t in keep if isinstance(t, torch.Tensor) and t.is_cuda}
    still = []
    for entry in _EXPORTED:
        pointer, counter_file, counter_offset = entry
        if pointer in kept:
            still.append(entry)
        else:
            torch.UntypedStorage._release_ipc_counter_cuda(counter_file, counter_offset)
    _EXPORTED[:] = still
    torch.cuda.ipc_collect()


def export_values(values: list) -> tuple[list, bytes]:
    """Descriptions of `values` and the bytes of their CPU tensors, for one message. A CUDA tensor is
    shared in the layout it has (its strides and storage offset travel with it): making it contiguous
    here would queue a copy after the call's synchronisation, which the judge could read before it ran."""
    descs, chunks, offset, copied_on = [], [], 0, set()
    for value in values:
        if not isinstance(value, torch.Tensor):
            descs.append({"value": _json_value(value)})
            continue
        tensor = value.detach()
        desc = {"dtype": str(tensor.dtype).removeprefix("torch."), "shape": list(tensor.shape)}
        if tensor.is_cuda:
            try:
                handle = tensor.untyped_storage()._share_cuda_()
            except RuntimeError:
                # The CUDA-graph outputs of torch.compile's cudagraph modes could not be IPC-shared on
                # the H200 ("invalid device pointer"); a copy in ordinary memory can, with the same values.
                tensor = tensor.clone()
                handle = tensor.untyped_storage()._share_cuda_()
                copied_on.add(tensor.device)
            _EXPORTED.append((tensor.untyped_storage().data_ptr(), handle[4], handle[5]))
            desc["cuda_ipc"] = [_b64(v) for v in handle]
            desc["offset_bytes"] = tensor.storage_offset() * tensor.element_size()
            desc["stride"] = list(tensor.stride())
        else:
            data = tensor.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if tensor.numel() else b""
            desc["offset"], desc["nbytes"] = offset, len(data)
            chunks.append(data)
            offset += len(data)
        descs.append(desc)
    for device in copied_on:  # the copies are done before the reply says the values are there
        torch.cuda.synchronize(device)
    return descs, b"".join(chunks)


def _shape_and_bytes(desc: dict) -> tuple[torch.dtype, list, int]:
    dtype = DTYPES.get(desc.get("dtype"))
    shape = desc.get("shape")
    if dtype is None or not isinstance(shape, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 1 << 40 for s in shape):
        raise ValueError(f"malformed tensor description {str(desc)[:200]}")
    numel = 1
    for s in shape:
        numel *= s
    return dtype, shape, numel * torch.empty((), dtype=dtype).element_size()


def import_values(descs, payload: bytes = b"") -> list:
    """Rebuild plain tensors and values from untrusted descriptions; ValueError if malformed."""
    if not isinstance(descs, list):
        raise ValueError("the values are not a list")
    return [_import_one(d, payload) for d in descs]


def _import_one(desc, payload: bytes):
    if not isinstance(desc, dict):
        raise ValueError("a value description is not an object")
    if "value" in desc:
        return desc["value"]
    dtype, shape, nbytes = _shape_and_bytes(desc)
    if "cuda_ipc" in desc:
        storage = torch.UntypedStorage._new_shared_cuda(*_ipc_arguments(desc["cuda_ipc"]))
        stride, extent = _stride_and_extent(desc, shape)
        element = torch.empty((), dtype=dtype).element_size()
        offset = desc.get("offset_bytes", 0)
        if not isinstance(offset, int) or offset < 0 or offset % element or offset + extent * element > storage.nbytes():
            raise ValueError("tensor description points outside its storage")
        return torch.empty(0, dtype=dtype, device=storage.device).set_(storage, offset // element, shape, stride)
    offset, size = desc.get("offset"), desc.get("nbytes")
    if not isinstance(offset, int) or size != nbytes or offset < 0 or offset + nbytes > len(payload):
        raise ValueError("tensor bytes missing or of the wrong size")
    if nbytes == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(payload[offset:offset + nbytes]), dtype=torch.uint8).view(dtype).reshape(shape)


def _stride_and_extent(desc: dict, shape: list) -> tuple[list, int]:
    """The strides of a shared tensor (contiguous when none are given) and how many elements of its
    storage they reach; ValueError if malformed."""
    stride = desc.get("stride")
    if stride is None:
        stride, step = [], 1
        for s in reversed(shape):
            stride.insert(0, step)
            step *= max(s, 1)
    if not isinstance(stride, list) or len(stride) != len(shape) or not all(
            isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1 << 40 for v in stride):
        raise ValueError(f"malformed tensor strides {str(stride)[:200]}")
    if any(s == 0 for s in shape):
        return stride, 0
    return stride, 1 + sum((s - 1) * v for s, v in zip(shape, stride))


def _ipc_arguments(fields) -> tuple:
    """_new_shared_cuda's arguments from an untrusted _share_cuda_ tuple: the memory handle and sizes
    as sent, checked; a counter file name that cannot exist (the consumer's decrement on release then
    finds nothing) and no producer event to wait on (the sandbox synchronises before it replies)."""
    if not isinstance(fields, list) or len(fields) != 8:
        raise ValueError("malformed CUDA IPC description")
    device, handle, size, offset = fields[0], _unb64(fields[1]), fields[2], fields[3]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (device, size, offset)) \
            or not isinstance(handle, bytes):
        raise ValueError("malformed CUDA IPC description")
    nowhere = f"/kbv_no_counter_{secrets.token_hex(8)}".encode()
    return device, handle, size, offset, nowhere, 0, b"", False


def payload_bound(values: list, slack: int = 1 << 20) -> int:
    """Bytes a reply holding `values`-sized CPU tensors may carry (twice theirs, plus slack)."""
    return 2 * sum(v.nbytes for v in values if isinstance(v, torch.Tensor) and not v.is_cuda) + slack
