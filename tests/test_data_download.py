"""First use of a UCI dataset: the missing file is downloaded into the data directory, checked,
and announced in one line; offline, or with ``download=False``, one line says where to put it.

No test touches the network: ``files._fetch`` returns a small zip built here (or fails), the
expected checksums are replaced by those of that zip, and ``socket.socket`` refuses.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import io
import logging
import socket
import urllib.error
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pilid.data import DATASETS, files, load_dataset
from pilid.data.uci import SKILL_COLUMNS
from pilid.errors import DataFileError

CONF = Path(__file__).resolve().parents[1] / "conf"
UCI_NAMES = ("bike", "bank", "spambase", "skill")


@pytest.fixture(autouse=True)
def _no_network(no_network):
    """Every test here runs without the network (`conftest.no_network`)."""


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _fake_skill(monkeypatch, rows: int = 24) -> tuple[bytes, bytes, files.RawFile]:
    """A small file in SkillCraft's format inside a zip, registered (both checksums) as UCI's."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(np.round(rng.random((rows, len(SKILL_COLUMNS))) * 100, 3))
    frame.columns = SKILL_COLUMNS
    frame["GameID"] = np.arange(rows) + 50
    frame["LeagueIndex"] = np.arange(rows) % 6 + 1
    content = frame.to_csv(index=False, lineterminator="\r\n").encode()
    payload = _zip({"SkillCraft1_Dataset.csv": content, "readme.txt": b"x"})
    raw = dataclasses.replace(
        files.RAW_FILES["skill"],
        sha256=hashlib.sha256(content).hexdigest(),
        archive_sha256=hashlib.sha256(payload).hexdigest(),
        rows=rows,
    )
    monkeypatch.setitem(files.RAW_FILES, "skill", raw)
    return content, payload, raw


def _serve(monkeypatch, payload: bytes) -> list[str]:
    fetched: list[str] = []
    monkeypatch.setattr(files, "_fetch", lambda url, timeout=60.0: fetched.append(url) or payload)
    return fetched


def test_loaders_download_by_default():
    for name in UCI_NAMES:
        parameters = inspect.signature(DATASETS[name].loader).parameters
        assert parameters["download"].default is True and parameters["verify"].default is True


def test_first_use_downloads_into_the_data_dir_checks_it_and_says_so(
    tmp_path, monkeypatch, capsys, caplog
):
    content, payload, raw = _fake_skill(monkeypatch)
    fetched = _serve(monkeypatch, payload)
    monkeypatch.setenv("PILID_DATA_DIR", str(tmp_path))
    with caplog.at_level(logging.DEBUG, logger="pilid.data"):
        data = load_dataset("skill")  # no data_dir, no download option: the defaults
    target = tmp_path / "skillcraft" / "SkillCraft1_Dataset.csv"
    assert fetched == [raw.url]
    assert target.read_bytes() == content
    assert data.info["source"] == str(target) and data.info["sha256"] == raw.sha256
    assert len(data.X) == 24 and data.y.sum() == 12  # LeagueIndex 4-6 of 1-6
    line = f"downloading skill from {raw.url} into {tmp_path / 'skillcraft'} (one time)"
    assert capsys.readouterr().err.splitlines() == [f"pilid: {line}"]
    # logged below INFO: a console that shows INFO (Hydra's) does not say it twice
    assert line in [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert line not in [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert not list(target.parent.glob("*.part"))  # written atomically, nothing left over
    load_dataset("skill")  # present now: no second download, no second line
    assert len(fetched) == 1 and capsys.readouterr().err == ""


def test_a_download_that_fails_its_checksum_is_not_kept(tmp_path, monkeypatch):
    content, payload, raw = _fake_skill(monkeypatch)
    tampered = content.replace(b"\r\n50,", b"\r\n51,", 1)  # an edited GameID
    assert tampered != content
    monkeypatch.setitem(
        files.RAW_FILES, "skill", dataclasses.replace(raw, archive_sha256=None)
    )  # UCI publishes no zip checksum for some archives: the member's is still checked
    _serve(monkeypatch, _zip({"SkillCraft1_Dataset.csv": tampered}))
    with pytest.raises(DataFileError) as error:
        load_dataset("skill", data_dir=tmp_path)
    message = str(error.value)
    assert "fails its sha256 check" in message and raw.sha256[:12] in message
    assert "verify=False (on the command line: data.verify=false)" in message
    assert "\n" not in message
    assert not (tmp_path / "skillcraft" / "SkillCraft1_Dataset.csv").exists()
    data = load_dataset("skill", data_dir=tmp_path, verify=False)  # the user's explicit choice
    assert data.info["sha256"] is None and len(data.X) == 24


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        (
            urllib.error.URLError(socket.gaierror(-3, "Temporary failure in name resolution")),
            "(Temporary failure in name resolution)",
        ),
        (TimeoutError("timed out"), "(timed out)"),
        (ConnectionResetError(104, "Connection reset by peer"), "(Connection reset by peer)"),
        (
            urllib.error.HTTPError(files.RAW_FILES["bank"].url, 404, "Not Found", None, None),
            "(HTTP 404 Not Found)",
        ),
    ],
    ids=["dns", "timeout", "reset", "http-404"],
)
def test_offline_first_use_is_one_line_saying_where_to_put_the_file(
    tmp_path, monkeypatch, capsys, failure, reason
):
    def offline(url, timeout=60.0):
        raise failure

    monkeypatch.setattr(files, "_fetch", offline)
    with pytest.raises(DataFileError) as error:
        load_dataset("bank", data_dir=tmp_path)
    message = str(error.value)
    raw = files.RAW_FILES["bank"]
    assert message.startswith("missing data file bank/bank-additional-full.csv for dataset 'bank'")
    assert f"downloading {raw.url} failed {reason}" in message
    assert f"at {tmp_path / 'bank' / 'bank-additional-full.csv'}" in message
    assert "data_dir=<folder> (or $PILID_DATA_DIR)" in message  # the other way to give it
    assert "\n" not in message
    assert not (tmp_path / "bank" / "bank-additional-full.csv").exists()
    assert len(capsys.readouterr().err.splitlines()) == 1  # the announcement only


def test_download_false_never_fetches_and_names_both_forms(tmp_path):
    with pytest.raises(DataFileError) as error:  # the autouse fixture fails any fetch
        load_dataset("spambase", data_dir=tmp_path, download=False)
    message = str(error.value)
    assert str(tmp_path / "spambase" / "spambase.data") in message
    assert "download=True (on the command line: data.download=true)" in message
    assert "\n" not in message
    assert not (tmp_path / "spambase").exists()  # nothing created


def test_an_unwritable_data_dir_is_one_line(tmp_path, monkeypatch):
    _, payload, _ = _fake_skill(monkeypatch)
    fetched = _serve(monkeypatch, payload)
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data directory should be")
    with pytest.raises(DataFileError) as error:
        load_dataset("skill", data_dir=blocker)
    message = str(error.value)
    assert "cannot be downloaded into" in message and "set data_dir" in message
    assert str(blocker / "skillcraft" / "SkillCraft1_Dataset.csv") in message
    assert "\n" not in message and fetched == []


def test_a_file_fetched_meanwhile_by_another_process_is_not_fetched_again(tmp_path):
    raw = files.RAW_FILES["spambase"]
    target = tmp_path / raw.folder / raw.filename
    target.parent.mkdir()
    target.write_bytes(b"1,0\r\n")  # appeared while this process waited for the lock
    assert files.download_file(raw, tmp_path) == target  # the autouse fixture fails any fetch


def _compose(overrides):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(config_name="config", overrides=overrides)


@pytest.mark.parametrize("name", UCI_NAMES)
def test_verify_and_download_are_plain_keys_of_the_data_config(tmp_path, name):
    cfg = _compose([f"data={name}"])
    assert cfg.data.verify is True and cfg.data.download is True
    cfg = _compose([f"data={name}", "data.verify=false", "data.download=false"])  # no "+"
    options = {k: v for k, v in cfg.data.items() if k != "name"}
    assert options["verify"] is False and options["download"] is False
    with pytest.raises(DataFileError, match="data.download=true"):  # reaches the loader
        load_dataset(cfg.data.name, data_dir=str(tmp_path), **options)
