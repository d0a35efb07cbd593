"""Files written whole or not at all: every file the store and the report write goes through here.

``replacing(path)`` hands out a temporary file in ``path``'s own directory (a hidden
``.<name>.<pid>.<random>.tmp``); when the block ends without an exception the temporary file is
flushed to disk (``fsync``) and renamed over ``path`` with ``os.replace``, which POSIX and Windows
make atomic within one file system; the directory entry is then synced too. A reader therefore
sees the old file or the new one, never a part of either: a process killed (even by SIGKILL)
while it writes leaves the old file in place, and a write that fails (a full disk) removes its
temporary file and leaves the old file as it was. Only a SIGKILL can leave a hidden temporary
file behind; no reader of pilid looks at those.

The new file gets the old one's permission bits, or for a new file the ones ``open()`` would
give it (0o666 less the umask).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

#: The errno values that say the disk (or the user's quota) is full.
DISK_FULL = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})


def is_disk_full(error: BaseException) -> bool:
    """Whether ``error`` is an ``OSError`` saying the disk or the quota is full."""
    return isinstance(error, OSError) and error.errno in DISK_FULL


def temporary_name(path: str | os.PathLike) -> Path:
    """A fresh hidden temporary path beside ``path`` (``.<name>.<pid>.<random>.tmp``)."""
    path = Path(path)
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


@contextlib.contextmanager
def replacing(path: str | os.PathLike, *, durable: bool = True) -> Iterator[Path]:
    """Yield a temporary path to write the whole new content of ``path`` to; on a clean exit
    it replaces ``path`` atomically, on an exception it is removed and ``path`` is untouched.

    ``durable``: ``fsync`` the new file before the rename and its directory after it, so that
    the new content, not an empty file, is there after a power cut too. The writer may open the
    temporary path itself (pandas ``to_csv``, matplotlib ``savefig`` with an explicit
    ``format=``: the temporary name does not end in the target's suffix).
    """
    path = Path(path)
    temporary = temporary_name(path)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mode = None
    os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # umask applies
    try:
        yield temporary
        if durable:
            _fsync_file(temporary)
        if mode is not None:
            with contextlib.suppress(OSError):
                os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    if durable:
        _fsync_directory(path.parent)


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Replace ``path``'s content with ``data`` atomically (see ``replacing``); returns ``path``."""
    path = Path(path)
    with replacing(path) as temporary:
        fd = os.open(temporary, os.O_WRONLY | os.O_TRUNC)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    return path


def write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> Path:
    """``Path.write_text`` made atomic (see ``replacing``): the same bytes (newlines become
    ``os.linesep``, as ``write_text`` does), written whole or not at all; returns ``path``."""
    if os.linesep != "\n":  # pragma: no cover - Windows
        text = text.replace("\n", os.linesep)
    return write_bytes(path, text.encode(encoding))


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDWR)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems that refuse fsync on a directory
        pass
    finally:
        os.close(fd)
