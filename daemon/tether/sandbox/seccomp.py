"""The seccomp socket filter commands run under (classic BPF, standard library only).

Owns: the filter's program for x86_64 or aarch64: no unix sockets, no datagram socketpairs, no io_uring,
other architectures' syscalls kill the process, and with `inet_stream_only` (Landlock) only TCP for inet.
Why each rule: docs/decisions/0003-sandbox.md.
Must not: filter anything else.
"""

from __future__ import annotations

import os
import struct

__all__ = ["socket_filter", "supported"]

# classic BPF opcodes
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_EPERM = 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM

# struct seccomp_data: int nr; u32 arch; u64 ip; u64 args[6] (little-endian machines only)
_NR, _ARCH, _ARG0, _ARG1, _ARG2 = 0, 4, 16, 24, 32

_X32_BIT = 0x40000000
# machine -> (AUDIT_ARCH_*, socket, io_uring_setup, socketpair)
_ARCHES = {
    "x86_64": (0xC000003E, 41, 425, 53),
    "aarch64": (0xC00000B7, 198, 425, 199),
}
_AF_UNIX, _AF_INET, _AF_INET6 = 1, 2, 10
_SOCK_STREAM, _SOCK_DGRAM, _SOCK_TYPE_MASK = 1, 2, 0xF
_IPPROTO_TCP = 6


def supported(machine: str | None = None) -> bool:
    return (machine or os.uname().machine) in _ARCHES


def socket_filter(inet_stream_only: bool, machine: str | None = None) -> bytes:
    """The filter program as `struct sock_filter[]` bytes (8 bytes an instruction)."""
    machine = machine or os.uname().machine
    if machine not in _ARCHES:
        raise ValueError(f"no seccomp socket filter for the {machine} architecture")
    return _assemble(_symbolic(machine, inet_stream_only))


# (opcode, or a label's name; jump if true; jump if false; constant): a jump is an offset
# or the name of the label it goes to
_Instruction = tuple[int | str, int | str, int | str, int]


def _symbolic(machine: str, inet_stream_only: bool) -> list[_Instruction]:
    """The program with labels and symbolic jump targets."""
    arch, socket_nr, io_uring_nr, socketpair_nr = _ARCHES[machine]
    code: list[_Instruction] = [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ_K, 0, "kill", arch),
        (_LD_W_ABS, 0, 0, _NR),
    ]
    if machine == "x86_64":
        code.append((_JSET_K, "kill", 0, _X32_BIT))
    code += [
        (_JEQ_K, "deny", 0, io_uring_nr),
        (_JEQ_K, "pair", 0, socketpair_nr),
        (_JEQ_K, 0, "allow", socket_nr),
        (_LD_W_ABS, 0, 0, _ARG0),  # the domain
        # any other domain: on to the inet checks, or allowed (not into the pair's check:
        # that would refuse UDP to a command with the network)
        (_JEQ_K, "deny", 0 if inet_stream_only else "allow", _AF_UNIX),
    ]
    if inet_stream_only:
        code += [
            (_JEQ_K, "inet", 0, _AF_INET),
            (_JEQ_K, "inet", "allow", _AF_INET6),
            ("inet", 0, 0, 0),  # label
            (_LD_W_ABS, 0, 0, _ARG1),  # the type, SOCK_NONBLOCK/SOCK_CLOEXEC or-ed in
            (_AND_K, 0, 0, _SOCK_TYPE_MASK),
            (_JEQ_K, 0, "deny", _SOCK_STREAM),
            (_LD_W_ABS, 0, 0, _ARG2),  # the protocol: 0 (TCP) or TCP itself
            (_JEQ_K, "allow", 0, 0),
            (_JEQ_K, "allow", "deny", _IPPROTO_TCP),
        ]
    code += [
        # a datagram pair is unconnected on the far side: `sendto` a path reaches any
        # filesystem datagram socket (syslog, journald, systemd notify); stream and
        # seqpacket pairs are connected to each other and reach nothing else
        ("pair", 0, 0, 0),
        (_LD_W_ABS, 0, 0, _ARG1),
        (_AND_K, 0, 0, _SOCK_TYPE_MASK),
        (_JEQ_K, "deny", "allow", _SOCK_DGRAM),
        ("allow", 0, 0, 0),
        (_RET_K, 0, 0, _ALLOW),
        ("deny", 0, 0, 0),
        (_RET_K, 0, 0, _EPERM),
        ("kill", 0, 0, 0),
        (_RET_K, 0, 0, _KILL_PROCESS),
    ]
    return code


def _assemble(code: list[_Instruction]) -> bytes:
    """Labels removed and jump targets resolved to relative offsets, packed."""
    labels: dict[str, int] = {}
    program: list[tuple[int, int | str, int | str, int]] = []
    for op, jt, jf, k in code:
        if isinstance(op, str):
            labels[op] = len(program)
        else:
            program.append((op, jt, jf, k))

    def offset(target: int | str, at: int) -> int:
        if isinstance(target, str):
            jump = labels[target] - at - 1
            assert 0 <= jump < 256
            return jump
        return target

    return b"".join(
        struct.pack("<HBBI", op, offset(jt, at), offset(jf, at), k) for at, (op, jt, jf, k) in enumerate(program)
    )
