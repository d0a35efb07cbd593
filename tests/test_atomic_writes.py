"""Files written whole or not at all (a process killed mid-write, a full disk): every
file the store and the report write goes through `pilid.atomic`, so a writer that is killed or
fails half-way leaves the old file whole and no temporary file behind."""

from __future__ import annotations

import ast
import errno
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pilid import atomic
from pilid.errors import PilidError
from pilid.experiments.artefacts import write_artefacts

ROOT = Path(__file__).resolve().parents[1]


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# -- the helper ---------------------------------------------------------------------------------
def test_replacing_swaps_the_whole_content_and_keeps_the_mode(tmp_path):
    path = tmp_path / "table.md"
    path.write_text("old\n")
    path.chmod(0o640)
    assert atomic.write_text(path, "new ä\nline\n") == path
    assert path.read_bytes() == "new ä\nline\n".encode()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert _listing(tmp_path) == ["table.md"]
    fresh = atomic.write_bytes(tmp_path / "new.bin", b"\x00\x01")
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.read_bytes() == b"\x00\x01"
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask  # as open() would make it


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "shape_fidelity.csv"
    path.write_text("setting_id,trial,r2\na,0,0.5\n")
    with pytest.raises(OSError, match="No space left"):
        with atomic.replacing(path) as temporary:
            temporary.write_text("setting_id,trial,r2\na,0,0.")  # the disk fills up here
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert path.read_text() == "setting_id,trial,r2\na,0,0.5\n"
    assert _listing(tmp_path) == ["shape_fidelity.csv"]
    assert atomic.is_disk_full(OSError(errno.ENOSPC, "full"))
    assert not atomic.is_disk_full(OSError(errno.EACCES, "denied"))


_KILLED_WRITER = """
import sys
from pilid import atomic
with atomic.replacing(sys.argv[1]) as temporary:
    with open(temporary, "w") as handle:
        handle.write("new content, first half")
        handle.flush()
        print("half written", flush=True)
        sys.stdin.readline()  # SIGKILL arrives here
        handle.write(" and the second half")
"""


def test_a_writer_killed_mid_write_leaves_the_old_file_whole(tmp_path):
    path = tmp_path / "fig.png"
    path.write_bytes(b"old figure")
    writer = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout.readline().strip() == "half written"
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    assert path.read_bytes() == b"old figure"
    left = [name for name in _listing(tmp_path) if name != "fig.png"]
    assert len(left) == 1 and left[0].startswith(".fig.png.") and left[0].endswith(".tmp")


# -- the report's writers, cut off by the kernel half-way ---------------------------------------
_CUT_OFF_WRITERS = """
import json, resource, sys
from pathlib import Path
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from pilid.report import figures, shapes
from pilid.report.table_model import write_tables

root, limit = Path(sys.argv[1]), int(sys.argv[2])

class Big:  # what write_tables reads of a Table
    name, paper_table = "big", None
    def to_latex(self):
        return "% new\\n" + "x & y \\\\\\\\\\n" * 20000
    def to_markdown(self):
        return "| new |\\n"

scores = pd.DataFrame(
    {"setting_id": [f"s{i:05d}" for i in range(4000)], "trial": 0, "value": 0.25}
)
fig, ax = plt.subplots()
ax.scatter(*np.random.default_rng(0).normal(size=(2, 20000)), s=1)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
failed = {}
for name, write in (
    ("cache", lambda: shapes.write_fidelity_cache(root, scores)),
    ("tables", lambda: write_tables([Big()], root / "tables")),
    ("figure", lambda: figures.save(fig, root / "figures", "fig")),
):
    try:
        write()
    except OSError as error:
        failed[name] = error.errno
print(json.dumps(failed))
"""


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="RLIMIT_FSIZE needs a POSIX system")
def test_report_files_that_cannot_be_written_whole_keep_their_old_content(tmp_path):
    """The file size limit (RLIMIT_FSIZE; Python ignores SIGXFSZ) lets each write reach the
    limit, then fails it with EFBIG: the shape-fidelity cache (the only copy of its values for a
    clone), a table and a figure must each keep their old bytes, with no temporary left."""
    (tmp_path / "tables").mkdir()
    (tmp_path / "figures").mkdir()
    old = {
        tmp_path / "shape_fidelity.csv": b"setting_id,trial,r2\nold,0,0.5\n",
        tmp_path / "tables" / "big.tex": b"% old table\n",
        tmp_path / "figures" / "fig.png": b"old png",
        tmp_path / "figures" / "fig.pdf": b"old pdf",
    }
    for path, data in old.items():
        path.write_bytes(data)
    done = subprocess.run(
        [sys.executable, "-c", _CUT_OFF_WRITERS, str(tmp_path), str(20_000)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr
    failed = json.loads(done.stdout.strip().splitlines()[-1])
    assert failed == {"cache": errno.EFBIG, "tables": errno.EFBIG, "figure": errno.EFBIG}
    for path, data in old.items():
        assert path.read_bytes() == data, path
    for folder in (tmp_path, tmp_path / "tables", tmp_path / "figures"):
        assert not [name for name in _listing(folder) if name.endswith(".tmp")], folder


# -- the store's artefacts on a full disk -------------------------------------------------------
def test_artefacts_on_a_full_disk_are_one_line_and_leave_no_temporary(tmp_path, monkeypatch):
    folder = tmp_path / "artifacts" / "sid"
    shapes = pd.DataFrame({"feature": ["x0"] * 3, "x": [0.0, 0.5, 1.0], "value": [1.0, 2.0, 3.0]})
    write_artefacts(folder, 0, {"shapes": shapes})
    before = (folder / "shapes-trial0.csv").read_bytes()
    real = pd.DataFrame.to_csv

    def full_disk(self, path, **kwargs):
        Path(path).write_text("feature,x,va")  # what fitted before the disk filled up
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(pd.DataFrame, "to_csv", full_disk)
    with pytest.raises(PilidError) as raised:
        write_artefacts(folder, 0, {"shapes": shapes * 2})
    message = str(raised.value)
    assert "\n" not in message and "trial 0" in message and "disk is full" in message
    assert "run the same command to resume" in message
    assert (folder / "shapes-trial0.csv").read_bytes() == before
    assert _listing(folder) == ["shapes-trial0.csv"]  # no 0-byte .tmp artefact
    monkeypatch.setattr(pd.DataFrame, "to_csv", real)
    write_artefacts(folder, 0, {"shapes": shapes * 2})
    assert np.array_equal(pd.read_csv(folder / "shapes-trial0.csv")["value"], [2.0, 4.0, 6.0])


# -- nothing writes a file in place -------------------------------------------------------------
#: Where the store and the report write files (lock files are empty: `locking.py` is exempt).
WRITERS = [
    *sorted((ROOT / "pilid" / "report").glob("*.py")),
    *sorted(p for p in (ROOT / "pilid" / "experiments").glob("*.py") if p.name != "locking.py"),
]


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _in_place_writes(path: Path) -> list[str]:
    """``file:line: call`` for every write that does not go through `pilid.atomic`: a
    ``.write_text``/``.write_bytes`` method, ``open()`` for writing, and ``to_csv``/``savefig``
    to anything but the temporary path of a ``with replacing(...) as <name>`` around it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []

    def visit(node, temporaries):
        if isinstance(node, ast.With):
            names = {
                item.optional_vars.id
                for item in node.items
                if isinstance(item.context_expr, ast.Call)
                and getattr(
                    item.context_expr.func, "id", getattr(item.context_expr.func, "attr", "")
                )
                == "replacing"
                and isinstance(item.optional_vars, ast.Name)
            }
            temporaries = temporaries | names
        if isinstance(node, ast.Call):
            func = node.func
            name = getattr(func, "attr", getattr(func, "id", ""))
            where = f"{_shown(path)}:{node.lineno}: {name}"
            if isinstance(func, ast.Attribute) and name in ("write_text", "write_bytes"):
                if not (isinstance(func.value, ast.Name) and func.value.id == "atomic"):
                    found.append(where)
            elif isinstance(func, ast.Attribute) and name in ("to_csv", "savefig"):
                first = node.args[0] if node.args else None
                if not (isinstance(first, ast.Name) and first.id in temporaries):
                    found.append(where)
            elif isinstance(func, ast.Name) and name == "open":
                mode = node.args[1] if len(node.args) > 1 else None
                for keyword in node.keywords:
                    if keyword.arg == "mode":
                        mode = keyword.value
                text = mode.value if isinstance(mode, ast.Constant) else "r"
                if set(str(text)) & set("wax+"):
                    found.append(where)
        for child in ast.iter_child_nodes(node):
            visit(child, temporaries)

    visit(tree, frozenset())
    return found


def test_every_file_the_store_and_the_report_write_is_replaced_atomically():
    in_place = [line for path in WRITERS for line in _in_place_writes(path)]
    assert not in_place, "write through pilid.atomic instead:\n" + "\n".join(in_place)


def test_the_checker_finds_in_place_writes(tmp_path):
    probe = tmp_path / "probe.py"
    source = textwrap.dedent(
        """
        from pilid.atomic import replacing, write_text
        def good(frame, fig, path):
            write_text(path, "x")
            with replacing(path) as temporary:
                frame.to_csv(temporary)
                fig.savefig(temporary, format="png")
        def bad(frame, fig, path):
            path.write_text("x")
            frame.to_csv(path)
            fig.savefig(path)
            open(path, "w")
            with replacing(path) as temporary:
                frame.to_csv(path)
        """
    )
    probe.write_text(source)
    found = _in_place_writes(probe)
    assert [line.split(": ")[-1] for line in found] == [
        "write_text",
        "to_csv",
        "savefig",
        "open",
        "to_csv",
    ]
