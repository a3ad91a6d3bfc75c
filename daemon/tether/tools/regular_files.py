"""Opening a file the repository controls only when it is a regular file.

Owns: `open_regular`, the one way Tether opens a workspace file for itself (git's index and objects, a
pre-read copy, AGENTS.md, MEMORY.md): non-blocking open, checked on the descriptor (a swapped-in FIFO or device).
Must not: read, decide what may be read, or follow anything the caller did not resolve.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

__all__ = ["open_regular"]


def open_regular(path: str) -> BinaryIO:
    """`path` opened for reading if it is a regular file (else OSError EINVAL)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", path)
    return os.fdopen(fd, "rb")
