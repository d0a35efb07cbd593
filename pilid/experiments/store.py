"""The results store: one JSON line per finished trial, appended atomically.

A record is written with a single ``os.write`` of complete lines on an ``O_APPEND`` descriptor
while the results directory's records lock is held (``pilid.experiments.locking``, a
``filelock`` lock file under ``.locks/``), then fsync'ed. Several processes (joblib workers,
Slurm array jobs on a shared file system with working ``flock``) can therefore append to one
``records.jsonl`` without interleaving. An append that cannot finish (a full disk, an error of
the write or of its fsync, an interrupt between two short writes) is cut back to the file's
size before it, so the file ends on its last whole line again, and stops with one
``PilidError`` line (disk full: free space and run the same command to resume). Only a writer
killed in the middle of its write can leave a partial last line; the reader skips such a line
with a warning, and the next writer terminates it with a newline first so that it never glues
onto a good record.

Reading writes nothing and needs no write access: the reader takes the records lock shared
(``locking.shared``) where its lock file exists, and reads unlocked where it does not (no writer
of ours has appended there) or where the platform has no ``flock``.

Every line is checked against the record schema (``RECORD_SCHEMA``) when it is read: a line
that is not JSON, or whose fields have the wrong type (``"trial": "1"``, ``"value": null``,
``"experiment": 123``), is skipped with one ``StoreWarning`` naming the file and the line number,
so that one bad line never blocks a setting: its trial simply counts as not run. Shown on
stderr, the warning is the one line ``pilid: warning: <file>: line <k> ...``, once per process
for a line however often the file is read (captured warnings, ``pytest.warns`` or
``warnings.catch_warnings(record=True)``, see every read).
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pilid.atomic import is_disk_full
from pilid.errors import PilidError
from pilid.experiments.locking import exclusive, lock_path, shared

RECORDS_FILE = "records.jsonl"

#: What identifies a trial's record: a newer record of the same key supersedes the older ones
#: (a ``force=true`` rerun); ``newest_records`` is the rule, the report applies it to frames.
RECORD_KEY = ("setting_id", "trial")

#: The fields of a trial record (docs/architecture.md, "Records"), in the order the runner writes
#: them.
RECORD_FIELDS = (
    "experiment",
    "dataset",
    "model",
    "estimator",  # the class's dotted path; records from before it lack it
    "params",
    "N",
    "m",
    "task",
    "trial",
    "seed",
    "metric",
    "value",
    "fit_seconds",
    "fit_mode",
    "layout",
    "device",
    "versions",
    "setting_id",
    "data",
    "encoding",  # how the categorical columns reached the model; records from before lack it
    "finished_at",
)


class StoreWarning(UserWarning):
    """A line of the records file could not be read and was skipped."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _is_text_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


#: The fields a record must have to count as a finished trial, each with its check and what it
#: must be (the runner writes every field of ``RECORD_FIELDS``).
RECORD_SCHEMA: dict[str, tuple[Any, str]] = {
    "setting_id": (_is_name, "a non-empty string"),
    "trial": (lambda v: _is_int(v) and v >= 0, "a whole number >= 0"),
    "value": (_is_number, "a finite number"),
}
#: Fields checked when present.
OPTIONAL_SCHEMA: dict[str, tuple[Any, str]] = {
    "seed": (lambda v: _is_int(v) and v >= 0, "a whole number >= 0"),
    "metric": (_is_name, "a non-empty string"),
    "model": (_is_name, "a non-empty string"),
    "estimator": (_is_name, "a non-empty string"),
    "dataset": (_is_name, "a non-empty string"),
    "params": (lambda v: isinstance(v, dict), "an object"),
    "data": (lambda v: isinstance(v, dict), "an object"),
    "N": (lambda v: v is None or (_is_int(v) and v >= 0), "a whole number"),
    "m": (lambda v: v is None or (_is_int(v) and v >= 0), "a whole number"),
    "fit_seconds": (lambda v: v is None or _is_number(v), "a finite number"),
    "layout": (lambda v: v is None or isinstance(v, dict), "an object"),
    "versions": (lambda v: v is None or isinstance(v, dict), "an object"),
    "experiment": (_is_text_or_none, "a string"),
    "task": (_is_text_or_none, "a string"),
    "fit_mode": (_is_text_or_none, "a string"),
    "device": (_is_text_or_none, "a string"),
    "finished_at": (_is_text_or_none, "a string"),
}


def record_problem(record: Any) -> str | None:
    """Why ``record`` is not a usable trial record (one phrase), or None when it is."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for name, (check, expected) in RECORD_SCHEMA.items():
        if name not in record:
            return f"no {name!r} field"
        if not check(record[name]):
            return f"{name!r} is {record[name]!r}, not {expected}"
    for name, (check, expected) in OPTIONAL_SCHEMA.items():
        if name in record and not check(record[name]):
            return f"{name!r} is {record[name]!r}, not {expected}"
    return None


def records_path(path: str | os.PathLike) -> Path:
    """The records file for ``path``: a results directory or a ``.jsonl`` file itself."""
    path = Path(path).expanduser()
    if path.suffix == ".jsonl" or path.is_file():
        return path
    return path / RECORDS_FILE


def records_in(results_dir: str | os.PathLike) -> Path:
    """The records file of ``results_dir`` (the config key), which must be a directory (made
    when missing); a relative path is taken from where the command was started."""
    return _absolute(results_dir) / RECORDS_FILE


def _absolute(path: str | os.PathLike) -> Path:
    """``results_dir`` relative to where the command was started (also under Hydra's chdir)."""
    path = Path(os.path.expanduser(str(path)))
    if path.is_absolute():
        return path
    try:
        from hydra.core.hydra_config import HydraConfig

        if HydraConfig.initialized():
            return Path(HydraConfig.get().runtime.cwd) / path
    except ImportError:  # pragma: no cover - hydra is a dependency
        pass
    return Path.cwd() / path


def _jsonable(value: Any) -> Any:
    """Plain-JSON form of numpy scalars/arrays, paths and non-finite floats (as null)."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, str):  # numpy arrays and scalars
        return _jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


def encode_record(record: Mapping[str, Any]) -> bytes:
    """One record as one line of JSON (UTF-8, no newline inside, newline at the end)."""
    line = json.dumps(_jsonable(record), ensure_ascii=False, allow_nan=False, sort_keys=False)
    return line.encode("utf-8") + b"\n"


class ResultStore:
    """Append-only JSON Lines store of trial records under a results directory.

    ``ResultStore(results_dir)`` reads and writes ``<results_dir>/records.jsonl``; a path that
    ends in ``.jsonl`` names the file directly.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = records_path(path)

    @property
    def root(self) -> Path:
        """The results directory (artefacts go under ``root / "artifacts"``)."""
        return self.path.parent

    def __repr__(self) -> str:
        """``ResultStore('<path of records.jsonl>')``."""
        return f"ResultStore({str(self.path)!r})"

    # -- writing ---------------------------------------------------------------------------
    def check_writable(self) -> None:
        """Raise ``PilidError`` (one line) unless records can be appended here: the results
        directory is a directory (or can be made), and ``records.jsonl`` is a writable file.

        Called before the first trial trains, so that no training is lost to a store that
        cannot take its record. Creates the directory but never writes to the file.
        """
        root = self.root
        if root.exists() and not root.is_dir():
            raise PilidError(
                f"results_dir {str(root)!r} is a file, not a directory; set results_dir to a "
                "directory (e.g. results_dir=results/runs)"
            )
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise PilidError(
                f"cannot create results_dir {str(root)!r} ({error.strerror}); set results_dir "
                "to a writable directory"
            ) from error
        if self.path.is_dir():
            raise PilidError(
                f"{str(self.path)!r} is a directory, not a records file; move it away or set "
                "results_dir to another directory"
            )
        try:  # open as the writer will (os.access says yes to root for read-only files)
            if self.path.exists():
                os.close(os.open(self.path, os.O_WRONLY | os.O_APPEND))
            else:
                fd, probe = tempfile.mkstemp(prefix=".write-check-", dir=root)
                os.close(fd)
                os.unlink(probe)
        except OSError as error:
            target = self.path if self.path.exists() else root
            raise PilidError(
                f"cannot write results to {str(target)!r} ({error.strerror}); make it "
                "writable or set results_dir to a writable directory"
            ) from error

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one record atomically."""
        self.extend([record])

    def extend(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Append several records in one atomic write: all of them, or none.

        A write that cannot finish (``ENOSPC``, an I/O error, a failed fsync, an interrupt
        between two short writes) is cut back to the file's size before it, so the file keeps
        its earlier records and ends on a whole line; it raises ``PilidError`` (one line: for a
        full disk, free space and run the same command to resume), or the interrupt itself.
        An interrupt that comes once every byte is written (during the fsync) keeps the
        records, which are whole: the trials they hold are finished and counted as recorded.
        """
        data = b"".join(encode_record(r) for r in records)
        if not data:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as error:
            raise self._write_error(error) from error
        try:
            with self._lock():
                size = os.fstat(fd).st_size
                if _ends_without_newline(fd, size):
                    data = b"\n" + data  # close a line torn by a writer that was killed
                try:
                    _write_all(fd, data)
                    os.fsync(fd)
                except BaseException as error:
                    # an interrupt once every byte is written (in the fsync, say) keeps the
                    # whole records: the kernel still writes them out, and the run's line
                    # counts them; a failed write or fsync takes the append back
                    if isinstance(error, OSError) or os.fstat(fd).st_size != size + len(data):
                        _truncate(fd, size)
                    raise
        except OSError as error:
            raise self._write_error(error) from error
        finally:
            os.close(fd)

    def _write_error(self, error: OSError) -> PilidError:
        """The one line for an append that failed with ``error`` (the file is as it was)."""
        where = str(self.path)
        if is_disk_full(error):
            return PilidError(
                f"cannot append to {where!r}: the disk is full ({error.strerror}); the file "
                "keeps its earlier records and ends on a whole line; free space and run the "
                "same command to resume"
            )
        reason = error.strerror or type(error).__name__
        return PilidError(
            f"cannot write results to {where!r} ({reason}); make it writable or set "
            "results_dir to a writable directory, then run the same command to resume"
        )

    def _lock(self):
        """The records lock (``<root>/.locks/records.jsonl.lock``)."""
        return exclusive(lock_path(self.root, self.path.name))

    def _read_lock(self):
        """The records lock for a reader, taken shared; it creates and writes nothing (see
        ``locking.shared``), so a read-only results directory reads like any other."""
        return shared(lock_path(self.root, self.path.name))

    # -- reading ---------------------------------------------------------------------------
    def records(self) -> list[dict[str, Any]]:
        """All readable records in file order; unreadable lines are skipped with a warning."""
        if not self.path.exists():
            return []
        if self.path.is_dir():
            raise PilidError(
                f"{str(self.path)!r} is a directory, not a records file; move it away or set "
                "results_dir to another directory"
            )
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - closed below
        except OSError as error:
            raise PilidError(
                f"cannot read {str(self.path)!r} ({error.strerror}); fix its permissions"
            ) from error
        with handle, self._read_lock():
            data = handle.read()
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline
        out = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            record = _decode(line)
            if record is None:
                _warn(f"{self.path}: line {number} is not a complete record; skipped")
                continue
            if (problem := record_problem(record)) is not None:
                _warn(f"{self.path}: line {number} is not a valid record ({problem}); skipped")
                continue
            out.append(record)
        if tail.strip():
            record = _decode(tail)
            number = len(lines) + 1
            if record is None:
                _warn(
                    f"{self.path}: line {number} skipped: the last line is incomplete (an "
                    "interrupted write)"
                )
            elif (problem := record_problem(record)) is not None:
                _warn(f"{self.path}: line {number} is not a valid record ({problem}); skipped")
            else:  # a complete record whose newline was lost
                out.append(record)
        return out

    def setting_records(self, setting_id: str, keep: str = "last") -> list[dict[str, Any]]:
        """Records of one setting, one per trial (``keep="last"``: the newest one) by trial."""
        rows = [r for r in self.records() if r["setting_id"] == setting_id]
        if keep == "all":
            return rows
        rows = newest_records(rows)
        return sorted(rows, key=lambda r: (r.get("trial") is None, r.get("trial")))

    def done_trials(self, setting_id: str) -> set[int]:
        """Trial numbers already recorded for ``setting_id``."""
        return {r["trial"] for r in self.records() if r["setting_id"] == setting_id}


def newest_records(rows: Iterable[Mapping[str, Any]]) -> list[Any]:
    """The newest record of each ``RECORD_KEY`` (the last in file order), each at its own
    position; a record without the key fields is kept as it is."""
    latest: dict[tuple, Any] = {}
    for index, row in enumerate(rows):
        key = tuple(row.get(name) for name in RECORD_KEY)
        if any(part is None for part in key):
            key = ("__line__", index)
        latest.pop(key, None)  # re-insert so the newest record sits at its own position
        latest[key] = row
    return list(latest.values())


def _ends_without_newline(fd: int, size: int) -> bool:
    """Whether the file's last byte (of ``size``) is not a newline (read without moving the
    append offset's meaning: ``O_APPEND`` writes go to the end wherever the offset is)."""
    if size == 0:
        return False
    os.lseek(fd, size - 1, os.SEEK_SET)
    return os.read(fd, 1) != b"\n"


def _write_all(fd: int, data: bytes) -> None:
    """``data`` through ``os.write`` (a regular file takes it in one write; the loop is only for
    short writes)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _truncate(fd: int, size: int) -> None:
    """Cut the file back to ``size`` bytes (an append that did not finish); best effort: a file
    left longer ends in a partial line, which the reader skips and the next writer closes."""
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError:
        pass


#: The package's own folder: a warning is attributed to the first caller outside it.
_PACKAGE_DIR = str(Path(__file__).resolve().parents[1]) + os.sep
#: Warning texts already shown on stderr by this process (``_format_once``).
_SHOWN: set[str] = set()


def _warn(text: str) -> None:
    """One ``StoreWarning``: attributed to the first caller outside pilid (a user's script, the
    command line's entry), and, where Python would print it on stderr itself, printed as the one
    line ``pilid: warning: <text>`` (no source line), once per process."""
    level, frame = 2, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        level, frame = level + 1, frame.f_back
    previous = warnings.formatwarning
    stock = previous is _STOCK_FORMAT
    if stock:
        warnings.formatwarning = _format_once
    try:
        warnings.warn(text, StoreWarning, stacklevel=level)
    finally:
        if stock and warnings.formatwarning is _format_once:
            warnings.formatwarning = previous


_STOCK_FORMAT = warnings.formatwarning


def _format_once(message, category, filename, lineno, line=None) -> str:
    """``warnings.formatwarning`` for the store's own warnings: ``pilid: warning: <text>`` the
    first time this process shows ``text``, nothing after (other warnings: Python's format)."""
    if not issubclass(category, StoreWarning):
        return _STOCK_FORMAT(message, category, filename, lineno, line)
    text = " ".join(str(message).split())
    if text in _SHOWN:
        return ""
    _SHOWN.add(text)
    return f"pilid: warning: {text}\n"


def _decode(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def load_results(path: str | os.PathLike = "results/runs", keep: str = "last"):
    """The records under ``path`` (a results directory or a ``records.jsonl``) as a DataFrame.

    One row per record. ``keep="last"`` (default) keeps only the newest record of each
    ``(setting_id, trial)`` (a ``force=true`` rerun supersedes older ones); ``keep="all"`` keeps
    every line. Nested fields (``params``, ``data``, ``versions``) stay dicts. A results
    directory without records gives an empty DataFrame with the record columns; a path that
    does not exist raises ``PilidError``. Unreadable lines are skipped with a ``StoreWarning``.

    Parameters
    ----------
    path : path, default="results/runs"
        A results directory or a ``records.jsonl`` file.
    keep : {"last", "all"}, default="last"
        The newest record of each trial, or every line.

    Returns
    -------
    pandas.DataFrame
        One row per record, its fields (`RECORD_FIELDS`) as columns.
    """
    import pandas as pd

    if keep not in ("last", "all"):
        raise PilidError(f"keep={keep!r} is invalid; use 'last' or 'all'")
    store = ResultStore(path)
    if not store.path.exists() and not Path(path).expanduser().exists():
        raise PilidError(f"no results at {str(path)!r}; run `python -m pilid.run` first")
    rows = store.records()
    if keep == "last":
        rows = newest_records(rows)
    if not rows:
        return pd.DataFrame(columns=list(RECORD_FIELDS))
    return pd.DataFrame.from_records(rows)
