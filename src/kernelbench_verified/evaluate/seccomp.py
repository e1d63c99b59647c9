"""The jail's seccomp filter: the system calls a kernel's process may not make (jail.py installs it).

It refuses ptrace, process_vm_*, mounts, namespace changes, kernel modules, kexec, bpf, perf events,
keyrings and the clock and swap controls with EPERM, clone with namespace flags likewise, and clone3 with
ENOSYS (so libc falls back to clone, whose flags the filter can read); a foreign architecture's calls
kill the process. Standard library only: it runs inside the sandbox before torch is imported.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW = 1, 4
SECCOMP_SYSCALL = {"x86_64": 317, "aarch64": 277}

_libc = ctypes.CDLL(None, use_errno=True)


class SeccompError(Exception):
    """The filter could not be installed (jail.confine reports it as the jail's failure)."""


ARCH = os.uname().machine
# (audit arch, syscall numbers refused with EPERM, clone, clone3) per architecture.
_SYSCALLS = {
    "x86_64": (0xC000003E, {
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "mount": 165, "umount2": 166,
        "pivot_root": 155, "chroot": 161, "init_module": 175, "finit_module": 313, "delete_module": 176,
        "kexec_load": 246, "kexec_file_load": 320, "unshare": 272, "setns": 308, "bpf": 321,
        "perf_event_open": 298, "keyctl": 250, "add_key": 248, "request_key": 249, "userfaultfd": 323,
        "open_by_handle_at": 304, "name_to_handle_at": 303, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "reboot": 169,
        "swapon": 167, "swapoff": 168, "acct": 163, "settimeofday": 164, "clock_settime": 227,
        "adjtimex": 159, "clock_adjtime": 305, "iopl": 172, "ioperm": 173, "pidfd_getfd": 438}, 56, 435),
    "aarch64": (0xC00000B7, {
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "mount": 40, "umount2": 39,
        "pivot_root": 41, "chroot": 51, "init_module": 105, "finit_module": 273, "delete_module": 106,
        "kexec_load": 104, "kexec_file_load": 294, "unshare": 97, "setns": 268, "bpf": 280,
        "perf_event_open": 241, "keyctl": 219, "add_key": 217, "request_key": 218, "userfaultfd": 282,
        "open_by_handle_at": 265, "name_to_handle_at": 264, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "reboot": 142,
        "swapon": 224, "swapoff": 225, "acct": 89, "settimeofday": 170, "clock_settime": 112,
        "adjtimex": 171, "clock_adjtime": 266, "pidfd_getfd": 438}, 220, 435),
}
CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_BPF_LD_W_ABS, _BPF_JEQ_K, _BPF_JSET_K, _BPF_JGE_K, _BPF_RET_K = 0x20, 0x15, 0x45, 0x35, 0x06
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO, SECCOMP_RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000


def _insn(code, jt, jf, k) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def seccomp_program(arch: str = ARCH) -> bytes:
    """A classic-BPF filter: refuse the listed system calls (EPERM), clone with namespace flags
    (EPERM) and clone3 (ENOSYS, so libc falls back to clone, whose flags the filter can read); a
    foreign architecture's calls kill the process."""
    audit_arch, refused, clone, clone3 = _SYSCALLS[arch]
    deny = SECCOMP_RET_ERRNO | errno.EPERM
    body = [_insn(_BPF_LD_W_ABS, 0, 0, 4),                      # seccomp_data.arch
            _insn(_BPF_JEQ_K, 1, 0, audit_arch),
            _insn(_BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
            _insn(_BPF_LD_W_ABS, 0, 0, 0)]                      # seccomp_data.nr
    if arch == "x86_64":                                        # x32 calls share the arch value
        body += [_insn(_BPF_JGE_K, 0, 1, 0x40000000), _insn(_BPF_RET_K, 0, 0, deny)]
    for number in sorted(refused.values()):
        body += [_insn(_BPF_JEQ_K, 0, 1, number), _insn(_BPF_RET_K, 0, 0, deny)]
    body += [_insn(_BPF_JEQ_K, 0, 1, clone3), _insn(_BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS),
             _insn(_BPF_JEQ_K, 0, 3, clone),
             _insn(_BPF_LD_W_ABS, 0, 0, 16),                    # args[0], low 32 bits: the flags
             _insn(_BPF_JSET_K, 0, 1, CLONE_NAMESPACE_FLAGS),
             _insn(_BPF_RET_K, 0, 0, deny),
             _insn(_BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW)]
    return b"".join(body)


def install_seccomp(flag_choices: tuple = (SECCOMP_FILTER_FLAG_SPEC_ALLOW, 0)) -> None:
    """Install seccomp_program() on this process with the first of `flag_choices` the kernel takes."""
    if ARCH not in _SYSCALLS:
        raise SeccompError(f"no seccomp filter for the {ARCH} architecture")
    program = seccomp_program()
    buffer = ctypes.create_string_buffer(program)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(program) // 8, ctypes.addressof(buffer))
    # SPEC_ALLOW: where the host's mitigation mode is `seccomp` (Linux's default before 5.16), a filter
    # without it forces speculative-store-bypass and indirect-branch mitigations on the sandbox alone,
    # whose Python then runs slower than the baseline's unfiltered process. They shield the sandbox from
    # other code, not other processes from it. (The H200 host's mode is prctl.)
    for flags in flag_choices:  # Linux before 4.17 knows no SPEC_ALLOW (EINVAL)
        if _libc.syscall(SECCOMP_SYSCALL[ARCH], SECCOMP_SET_MODE_FILTER, flags, ctypes.byref(fprog)) == 0:
            return
        if ctypes.get_errno() != errno.EINVAL:
            break
    raise SeccompError(f"installing the seccomp filter: {os.strerror(ctypes.get_errno())}")
