"""Opening a file the repository controls only when it is a regular file.

Owns: `open_regular`, the one way Tether opens a workspace file it reads for itself (git's
index and objects, a pre-read copy, AGENTS.md, MEMORY.md): opened without blocking and
checked on the open descriptor, so a FIFO or device a command swapped in after a check by
name cannot block the daemon (a FIFO without a writer blocks `open` forever) or flood it.
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
