"""Raw UCI files: where they live, their SHA-256, a verified first-use download, a strict reader.

The files are kept exactly as UCI ships them (see ``../shared/data/uci/README.md``), one
sub-folder per dataset. Every problem with a file (missing, wrong checksum, truncated, malformed)
raises :class:`pilid.errors.DataFileError` with one line that names the file and the fix.
"""

from __future__ import annotations

import csv
import hashlib
import http.client
import io
import logging
import os
import sys
import tempfile
import urllib.error
import urllib.request
import warnings
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from filelock import FileLock

from pilid.errors import DataFileError

log = logging.getLogger("pilid.data")

#: Environment variable that selects the data directory (below an explicit ``data_dir``).
DATA_DIR_ENV = "PILID_DATA_DIR"
#: Data directory used when neither ``data_dir`` nor ``PILID_DATA_DIR`` is given.
DEFAULT_DATA_DIR = "~/.cache/pilid"


@dataclass(frozen=True)
class RawFile:
    """One raw file as UCI ships it, and the official archive that contains it."""

    dataset: str  # pilid's dataset name (bike, bank, spambase, skill)
    folder: str  # sub-folder of the data directory
    filename: str
    sha256: str
    rows: int  # data rows, header excluded
    url: str  # official UCI zip archive holding the file (possibly inside a nested zip)
    archive_sha256: str | None = None  # published SHA-256 of that zip, where known

    def relpath(self) -> str:
        """The file's path under the data directory (``<folder>/<filename>``)."""
        return f"{self.folder}/{self.filename}"


_UCI = "https://archive.ics.uci.edu/static/public"

#: The raw file each UCI loader reads (checksums and row counts from the data README).
RAW_FILES: dict[str, RawFile] = {
    "bike": RawFile(
        "bike",
        "bike",
        "hour.csv",
        "e03de4ee4ef4dc376ac6e04bf829673c6269e8eba5c60fa121640fa2f829504f",
        17379,
        f"{_UCI}/275/bike+sharing+dataset.zip",
        "b70182d0d0508e9abbb79306ce5c0cec34869000f8220175ac83d11dbe845401",
    ),
    "bank": RawFile(
        "bank",
        "bank",
        "bank-additional-full.csv",
        "74adfc578bf77a7ff4bb1ba4a9f8709d9e3c6907342959c2c8416847e0afb4d8",
        41188,
        f"{_UCI}/222/bank+marketing.zip",
        None,
    ),
    "spambase": RawFile(
        "spambase",
        "spambase",
        "spambase.data",
        "b1ef93de71f97714d3d7d4f58fc9f718da7bbc8ac8a150eff2778616a8097b12",
        4601,
        f"{_UCI}/94/spambase.zip",
        "813ac1df8effac70463c09c9c4b11e8803eefcab54771af66150852bcdcd1636",
    ),
    "skill": RawFile(
        "skill",
        "skillcraft",
        "SkillCraft1_Dataset.csv",
        "9201edfe8fa842a9a5a53ed2952a2d630cb42b2e7dca6ce982e99455f82abc8b",
        3395,
        f"{_UCI}/272/skillcraft1+master+table+dataset.zip",
        "d6f4f88c2d077a0938cf774ff242df511c9a5801dcc66e4461ffdf893ce23fc2",
    ),
}


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data directory: ``data_dir`` argument > env ``PILID_DATA_DIR`` > ``~/.cache/pilid``."""
    if data_dir is None or str(data_dir).strip() == "":
        data_dir = os.environ.get(DATA_DIR_ENV, "").strip() or DEFAULT_DATA_DIR
    return Path(os.path.expandvars(str(data_dir))).expanduser()


def locate(raw: RawFile, data_dir: Path, download: bool = True, verify: bool = True) -> Path:
    """Path of ``raw`` under ``data_dir`` (``<folder>/<file>``, or the file directly in it).

    Missing: download the official archive into ``data_dir`` when ``download`` is true (once:
    the file is kept there), else raise one line saying where to put the file.
    """
    expected = data_dir / raw.folder / raw.filename
    found = _existing(raw, data_dir)
    if found is not None:
        return found
    if download:
        return download_file(raw, data_dir, verify=verify)
    raise DataFileError(
        f"missing data file {raw.relpath()} for dataset {raw.dataset!r}: put {raw.filename} "
        f"(from the UCI archive {raw.url}) at {expected}; the data directory is data_dir=, "
        f"else ${DATA_DIR_ENV}, else {DEFAULT_DATA_DIR}; or pass download=True (on the command "
        "line: data.download=true) to fetch it"
    )


def _existing(raw: RawFile, data_dir: Path) -> Path | None:
    for candidate in (data_dir / raw.folder / raw.filename, data_dir / raw.filename):
        if candidate.is_file():
            return candidate
    return None


# --------------------------------------------------------------------------- checksums

_VERIFIED: dict[tuple[str, int, int], str] = {}


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, cached per (path, mtime, size) so repeated loads cost one ``stat``."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _VERIFIED:
        _VERIFIED[key] = _hash_file(path)
    return _VERIFIED[key]


def verify_file(path: Path, expected: str) -> None:
    """Raise one line naming ``path`` when its SHA-256 is not ``expected``."""
    actual = file_sha256(path)
    if actual != expected:
        raise DataFileError(
            f"{path} fails its sha256 check (expected {expected[:12]}..., got {actual[:12]}...): "
            "replace it with the original UCI file, or pass verify=False (on the command line: "
            "data.verify=false) to use it anyway"
        )


# --------------------------------------------------------------------------- download


def _fetch(url: str, timeout: float = 60.0) -> bytes:
    """The bytes at ``url`` (the one place that touches the network; tests replace it)."""
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (fixed https URLs)
        return response.read()


def _find_member(archive: zipfile.ZipFile, filename: str, depth: int = 0) -> bytes | None:
    """Bytes of the member named ``filename`` (any folder), searching nested zips too."""
    for info in archive.infolist():
        base = info.filename.rsplit("/", 1)[-1]
        if base == filename and not info.filename.startswith("__MACOSX"):
            return archive.read(info)
    if depth < 2:
        for info in archive.infolist():
            if info.filename.endswith(".zip") and not info.filename.startswith("__MACOSX"):
                with zipfile.ZipFile(io.BytesIO(archive.read(info))) as inner:
                    found = _find_member(inner, filename, depth + 1)
                if found is not None:
                    return found
    return None


def _reason(error: BaseException) -> str:
    """A short, one-line reason for a failed fetch (``HTTP 404 Not Found``, ``timed out``)."""
    if isinstance(error, urllib.error.HTTPError):
        text = f"HTTP {error.code} {error.reason}"
    else:
        if isinstance(error, urllib.error.URLError):
            error = error.reason if isinstance(error.reason, BaseException) else error
        strerror = getattr(error, "strerror", None)
        text = strerror if strerror else (str(getattr(error, "reason", "") or error))
    return " ".join(str(text).split()) or type(error).__name__


def download_file(raw: RawFile, data_dir: Path, verify: bool = True) -> Path:
    """Fetch UCI's official zip for ``raw``, check it, extract the file into ``<folder>/``.

    Says so in one line (stderr and the ``pilid.data`` logger at INFO). The zip's SHA-256 is
    checked where a published value exists, and the extracted file's SHA-256 is checked unless
    ``verify`` is false. The file is written atomically; concurrent loaders (parallel workers)
    wait on a lock file so that the archive is fetched once.
    """
    target = data_dir / raw.folder / raw.filename
    lock = FileLock(str(target.parent / f".{raw.filename}.lock"))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except OSError as error:
        raise DataFileError(
            f"missing data file {raw.relpath()} for dataset {raw.dataset!r}, and it cannot be "
            f"downloaded into {target.parent} ({error.strerror or error}): put {raw.filename} "
            f"(from the UCI archive {raw.url}) at {target} by hand, or set data_dir (or "
            f"${DATA_DIR_ENV}) to a writable directory"
        ) from error
    try:
        found = _existing(raw, data_dir)  # another process fetched it while we waited
        if found is not None:
            return found
        return _download(raw, target, verify)
    finally:
        lock.release()


def _download(raw: RawFile, target: Path, verify: bool) -> Path:
    message = f"downloading {raw.dataset} from {raw.url} into {target.parent} (one time)"
    log.debug("%s", message)  # DEBUG: Hydra's console shows INFO, and the line is printed
    print(f"pilid: {message}", file=sys.stderr, flush=True)
    try:
        payload = _fetch(raw.url)
    except (OSError, http.client.HTTPException) as error:  # URLError, timeouts, resets
        raise DataFileError(
            f"missing data file {raw.relpath()} for dataset {raw.dataset!r}, and downloading "
            f"{raw.url} failed ({_reason(error)}): put {raw.filename} (from that UCI archive) at "
            f"{target}, or point data_dir=<folder> (or ${DATA_DIR_ENV}) at a folder holding "
            f"{raw.relpath()}, or retry with a working internet connection"
        ) from error
    if verify and raw.archive_sha256 is not None:
        actual = hashlib.sha256(payload).hexdigest()
        if actual != raw.archive_sha256:
            raise DataFileError(
                f"downloaded {raw.url} fails its sha256 check (expected "
                f"{raw.archive_sha256[:12]}..., got {actual[:12]}...); put {raw.filename} at "
                f"{target} by hand, or pass verify=False (on the command line: "
                "data.verify=false) to use the download anyway"
            )
    try:
        with zipfile.ZipFile(io.BytesIO(payload)) as archive:
            content = _find_member(archive, raw.filename)
    except zipfile.BadZipFile as error:
        raise DataFileError(
            f"downloaded {raw.url} is not a valid zip archive; put {raw.filename} at {target} "
            "by hand"
        ) from error
    if content is None:
        raise DataFileError(
            f"downloaded {raw.url} holds no {raw.filename}; put that file at {target} by hand"
        )
    if verify:
        actual = hashlib.sha256(content).hexdigest()
        if actual != raw.sha256:
            raise DataFileError(
                f"{raw.filename} from {raw.url} fails its sha256 check (expected "
                f"{raw.sha256[:12]}..., got {actual[:12]}...); put the original file at {target} "
                "by hand, or pass verify=False (on the command line: data.verify=false) to use "
                "it anyway"
            )
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{raw.filename}.", suffix=".part")
    except OSError as error:
        raise DataFileError(
            f"cannot write {target} ({error.strerror or error}): put {raw.filename} there by "
            f"hand, or set data_dir (or ${DATA_DIR_ENV}) to a writable directory"
        ) from error
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    log.info(
        "saved %s (%d bytes, sha256 %s)",
        target,
        len(content),
        "checked" if verify else "not checked",
    )
    return target


# --------------------------------------------------------------------------- strict reader


def malformed(path: Path, detail: str) -> DataFileError:
    """One line: ``path`` is malformed (``detail``) and how to fix it."""
    return DataFileError(
        f"{path} is malformed ({detail}); replace it with the original UCI file "
        "(see the data README for its sha256)"
    )


def read_table(
    path: Path,
    columns: Sequence[str],
    numeric: Iterable[str],
    *,
    sep: str = ",",
    header: bool = True,
    missing: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Read a raw CSV strictly: exact header, every row complete, numeric columns parse.

    ``numeric`` columns become float64, the others ``str``. ``missing`` maps a column to the
    token that marks a missing value there (NaN in the result); any other empty or unparseable
    cell, a short or long row, or a wrong header raises one line naming the file.
    """
    columns = list(columns)
    numeric = set(numeric)
    missing = dict(missing or {})
    dtypes = {c: ("float64" if c in numeric else "str") for c in columns}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                path,
                sep=sep,
                header=0 if header else None,
                names=None if header else columns,
                index_col=False,
                dtype=dtypes,
                keep_default_na=False,
                na_values={c: [missing[c]] for c in missing} if missing else None,
                engine="c",
            )
    except (ValueError, pd.errors.ParserError, pd.errors.ParserWarning) as error:
        detail = _diagnose(path, columns, numeric, sep, header, missing, error)
        raise malformed(path, detail) from error
    if header and list(frame.columns) != columns:
        absent = [c for c in columns if c not in frame.columns]
        extra = [c for c in frame.columns if c not in columns]
        raise malformed(
            path, f"unexpected header: missing {absent or 'none'}, unexpected {extra or 'none'}"
        )
    first = 2 if header else 1  # file line number of data row 0
    for column in columns:
        values = frame[column]
        if column in numeric:
            bad = values.isna().to_numpy() if column not in missing else None
        else:
            bad = (values.isna() | (values == "")).to_numpy()
        if bad is not None and bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise malformed(path, f"line {row + first}: column {column!r} is empty or missing")
    if len(frame) == 0:
        raise malformed(path, "no data rows")
    return frame


def _diagnose(
    path: Path,
    columns: list[str],
    numeric: set[str],
    sep: str,
    header: bool,
    missing: Mapping[str, str],
    error: Exception,
) -> str:
    """Locate the first bad line after the fast reader failed (slow, only on error)."""
    summary = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return summary
    lines = text.splitlines()
    start = 1 if header else 0
    if header and not lines:
        return "empty file"
    reader = csv.reader(lines[start:], delimiter=sep, quotechar='"')
    for offset, fields in enumerate(reader):
        line = offset + start + 1
        if not fields:
            continue
        if len(fields) != len(columns):
            return f"line {line} has {len(fields)} fields, expected {len(columns)}"
        for name, value in zip(columns, fields):
            if name in numeric and value != missing.get(name):
                try:
                    float(value)
                except ValueError:
                    return f"line {line}: column {name!r} value {value[:20]!r} is not a number"
    return summary
