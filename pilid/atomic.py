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

A build of several files that belong together (the report's tables, its figures) goes through
``staged_folder(folder)``: every file is written into a hidden folder beside ``folder``
(``.<name>.<pid>.<random>.staging``), and only once all are written are they moved into
``folder``, one ``os.replace`` each, while SIGINT, SIGTERM and SIGHUP wait (``signals_deferred``).
An interrupt or an error while the files are written removes the hidden folder and leaves
``folder`` as it was: its files are all of the old build or all of the new one, never a mix.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import signal
import stat
import threading
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


#: The signals ``signals_deferred`` holds back (where the platform has them).
DEFERRED_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP back while the block runs (a few renames): a signal that
    arrives meanwhile is noted and raised again, to the handler it had, once the block is done.
    Python runs signal handlers in the main thread, so the block cannot be cut there; elsewhere
    (another thread) this is a no-op. Signals the process ignores stay ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for signum in DEFERRED_SIGNALS:
        handler = signal.getsignal(signum)
        if handler not in (signal.SIG_IGN, None):
            previous[signum] = signal.signal(signum, lambda number, frame: caught.append(number))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if caught:
            signal.raise_signal(caught[0])


def staging_name(folder: str | os.PathLike) -> Path:
    """A fresh hidden folder path beside ``folder`` (``.<name>.<pid>.<random>.staging``)."""
    folder = Path(os.path.abspath(folder))  # "." and "tables/" have a name too
    return folder.with_name(f".{folder.name}.{os.getpid()}.{secrets.token_hex(4)}.staging")


@contextlib.contextmanager
def staged_folder(folder: str | os.PathLike) -> Iterator[Path]:
    """Yield a hidden folder beside ``folder`` (inside it where its parent is not writable) to
    write a whole build's files into; on a clean exit they are moved into ``folder`` (created if
    missing; files of its own that the build does not write stay), on an exception (an
    interrupt included) the hidden folder is removed and ``folder`` is untouched.

    The moves run under ``signals_deferred``, so a SIGINT/SIGTERM/SIGHUP cannot leave some files
    old and some new; only a SIGKILL in those milliseconds could (and only a SIGKILL leaves a
    hidden folder behind). A moved file keeps the permission bits of the file it replaces.
    Map the paths written in the hidden folder to their places with ``moved_path``.
    """
    folder = Path(folder)
    staging = staging_name(folder)
    try:
        staging.mkdir(parents=True)
    except OSError as error:  # `folder` writable in a parent that is not (--out /tmp): inside it
        if error.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        folder.mkdir(parents=True, exist_ok=True)
        staging = folder / staging.name
        staging.mkdir()
    try:
        yield staging
        with signals_deferred():
            folder.mkdir(parents=True, exist_ok=True)
            for source in sorted(p for p in staging.rglob("*") if p.is_file()):
                _move_into(source, folder / source.relative_to(staging))
            _fsync_directory(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def moved_path(path: str | os.PathLike, staging: str | os.PathLike, folder) -> Path:
    """Where ``path``, written under ``staging`` (``staged_folder``), lies in ``folder``."""
    return Path(folder) / Path(path).relative_to(staging)


def _move_into(source: Path, target: Path) -> None:
    """Rename ``source`` over ``target`` (its permission bits kept); across file systems (a
    ``folder`` that is a mount point), copy it beside ``target`` and rename that."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(source, stat.S_IMODE(target.stat().st_mode))
    try:
        os.replace(source, target)
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
        with replacing(target) as temporary:
            shutil.copyfile(source, temporary)


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
