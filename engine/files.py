"""Reading a file the player named or the game keeps, without hanging or reading without end.

A path can name anything: a FIFO (opening it for reading blocks until a writer comes), a folder,
a device such as /dev/zero (which never ends), or a regular file far larger than anything the
game writes. Every file the game reads goes through `open_regular` or `read_regular`: the path is
checked to be a regular file before it is opened, opened without blocking, checked again on the
open descriptor (it may have been swapped in between), and read with a size limit.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO


class NotAFile(OSError):
    """The path exists but is not a regular file (a folder, a FIFO, a device, a socket)."""


def kind_of(mode: int) -> str:
    """What a non-regular file is, in a few words for a one-line message."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse(path: str | os.PathLike[str], mode: int) -> NotAFile:
    code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
    return NotAFile(code, f"{kind_of(mode)}, not a file", os.fspath(path))


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` opened for reading in binary, when it is a regular file (through any symlinks).

    FileNotFoundError when it is missing, NotAFile when it is something else, OSError when it
    cannot be opened. Never blocks: a FIFO is refused before and after it is opened.
    """
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise _refuse(path, mode)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _refuse(path, mode)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """At most `limit` + 1 bytes of the regular file `path` (one more than the limit tells the
    caller the file is larger); the errors of open_regular."""
    with open_regular(path) as handle:
        return handle.read(limit + 1)


def size_of(path: str | os.PathLike[str]) -> int:
    """The size of the regular file `path` (NotAFile, or OSError, otherwise)."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise _refuse(path, info.st_mode)
    return info.st_size
