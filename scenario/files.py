"""Opening a file that must be a regular file, without ever waiting on it.

`open()` on a FIFO blocks until a writer comes, and a device may never end: a manifest, an action
file or a cassette swapped for one would hold a run (and its lease) forever. The file is opened
non-blocking and checked with `fstat` on the same descriptor before anything is read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

NON_BLOCKING = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
"""How every file of Warrant's is opened for reading; add `os.O_NOFOLLOW` where a last symlink
must not be followed (records, which were resolved at admission)."""


def open_regular(path: Path) -> BinaryIO:
    """A binary handle of `path`, which must be a regular file (else `OSError`: not a regular
    file)."""
    fd = os.open(path, NON_BLOCKING)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")
