"""A typo or a wrongly typed value inside a YAML of the user's ``--config-dir`` (issue 49, item 5)
stops with one line naming the file, the key, the closest valid key and the fix; it used to be
``In 'data/bost': ConfigKeyError raised while composing config:`` and nothing more."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pilid.errors import PilidError
from pilid.experiments.config import composition_error, yaml_error
from pilid.run import check_composition
from pilid.schema import section_fields

ROOT = Path(__file__).resolve().parents[1]

#: The issue's data YAML: ``targt`` for ``target``.
BOST = "defaults: [table, _self_]\npath: x.csv\ntargt: y\ntask: regression\n"


def _valid(section: str, name: str) -> str:
    """The schema's keys of ``section=name`` as the line lists them (an independent reading)."""
    keys = section_fields(section, name)
    return ", ".join(k for k in keys if k not in ("name", "regressor", "classifier"))


def _user_dir(tmp_path: Path, files: dict[str, str]) -> Path:
    directory = tmp_path / "my_conf"
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    return directory


def _error(args: list[str]) -> str:
    with pytest.raises(PilidError) as raised:
        check_composition(args)
    return str(raised.value)


def test_a_misspelt_key_in_a_data_yaml_names_the_file_the_key_and_the_closest(tmp_path):
    directory = _user_dir(tmp_path, {"data/bost.yaml": BOST})
    path = directory / "data" / "bost.yaml"
    for given in (f"--config-dir={directory}", "-cd"):
        args = [given, str(directory), "data=bost"] if given == "-cd" else [given, "data=bost"]
        assert _error(args) == (
            f"unknown key 'targt' in {path} (data=bost); did you mean target? valid keys: "
            f"{_valid('data', 'table')}; correct or remove targt in that file"
        )


def test_a_misspelt_key_in_a_model_yaml_that_extends_a_built_in(tmp_path):
    directory = _user_dir(tmp_path, {"model/mine.yaml": "defaults: [pilid, _self_]\ngama: 3\n"})
    message = _error(["--config-dir", str(directory), "model=mine"])
    assert message == (
        f"unknown key 'gama' in {directory / 'model' / 'mine.yaml'} (model=mine); did you mean "
        f"gamma? valid keys: {_valid('model', 'pilid')}; correct or remove gama in that file"
    )


def test_a_key_with_no_close_valid_one_lists_them_all(tmp_path):
    text = BOST.replace("targt: y", "target: y\nzzzzzz: 1")
    directory = _user_dir(tmp_path, {"data/bost.yaml": text})
    message = _error(["--config-dir", str(directory), "data=bost"])
    assert "did you mean" not in message and "\n" not in message
    assert message.startswith(f"unknown key 'zzzzzz' in {directory / 'data' / 'bost.yaml'} ")
    assert f"valid keys: {_valid('data', 'table')}; correct or remove zzzzzz" in message


def test_a_wrongly_typed_value_in_a_yaml_names_the_file_and_the_type(tmp_path):
    text = BOST.replace("targt: y", "target: y\nstandardize_target: maybe")
    directory = _user_dir(tmp_path, {"data/bost.yaml": text})
    assert _error(["--config-dir", str(directory), "data=bost"]) == (
        f"standardize_target: 'maybe' in {directory / 'data' / 'bost.yaml'} (data=bost) is "
        "invalid: Value 'maybe' is not a valid bool (type str); write standardize_target: "
        "true|false in that file"
    )


def test_the_same_typo_on_the_command_line_keeps_its_line(tmp_path):
    """The command line's typo is not in a file: its line names the override as before."""
    message = _error(["data=table", "data.path=x.csv", "data.targt=y", "data.task=regression"])
    assert message == (
        f"unknown key data.targt for data 'table'; valid keys: {_valid('data', 'table')} "
        "(check the spelling: data.<key>=<value>)"
    )


def test_other_errors_are_not_taken_for_a_yaml_error():
    assert yaml_error(ValueError("In 'data/bost': something else")) is None
    message = str(composition_error(ValueError("plain"), ()))
    assert message == "plain"


@pytest.mark.slow
@pytest.mark.parametrize("sweep", [False, True])
def test_the_command_line_prints_the_one_line(tmp_path, sweep):
    """The issue's reproduction from the user's folder (``--config-dir`` relative to it), as a
    single run and as the second value of a sweep (the sweeper's check): stderr names the file
    and the key, exit 2."""
    _user_dir(tmp_path, {"data/bost.yaml": BOST})
    (tmp_path / "x.csv").write_text("a,y\n1,2\n")
    data = "data=skill,bost" if sweep else "data=bost"
    command = [sys.executable, "-m", "pilid.run", *(["-m"] if sweep else []), "--config-dir"]
    command += ["my_conf", data, f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        timeout=300,
    )
    assert done.returncode == 2, done.stderr[-3000:]
    line = (
        "unknown key 'targt' in my_conf/data/bost.yaml (data=bost); did you mean target? "
        f"valid keys: {_valid('data', 'table')}; correct or remove targt in that file"
    )
    if sweep:
        assert done.stderr.splitlines() == [
            f"pilid: error: in the sweep job [data=bost]: {line}",
            "pilid: nothing was run; fix that value and run the sweep again",
        ]
    else:
        assert done.stderr.splitlines() == [f"pilid: error: {line}"]
