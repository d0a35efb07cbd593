"""The results store: atomic appends, torn lines, concurrent writers, setting ids."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from pilid.errors import PilidError
from pilid.experiments import ResultStore, load_results
from pilid.experiments.setting import setting_config, setting_id
from pilid.experiments.store import StoreWarning


def _record(trial, setting="s1", value=0.5, **extra):
    return {"setting_id": setting, "trial": trial, "seed": trial, "value": value, **extra}


def test_round_trip_keeps_values_and_order(tmp_path):
    store = ResultStore(tmp_path)
    records = [_record(t, value=0.1 * t, params={"gamma": 5, "hidden": [16, 16]}) for t in range(5)]
    store.append(records[0])
    store.extend(records[1:])
    assert store.path == tmp_path / "records.jsonl"
    assert store.records() == records
    lines = store.path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 6  # one line per record, newline-terminated
    assert [json.loads(line) for line in lines[:-1]] == records


def test_numpy_values_and_non_finite_numbers_become_plain_json(tmp_path):
    store = ResultStore(tmp_path / "r.jsonl")
    store.append(
        _record(np.int64(3), value=np.float32(0.25), x=np.arange(3), bad=float("nan"), p=tmp_path)
    )
    (got,) = store.records()
    assert got == {
        "setting_id": "s1",
        "trial": 3,
        "seed": 3,
        "value": 0.25,
        "x": [0, 1, 2],
        "bad": None,
        "p": str(tmp_path),
    }
    assert store.done_trials("s1") == {3}


def test_torn_last_line_is_skipped_with_warning_and_repaired_by_next_append(tmp_path):
    store = ResultStore(tmp_path)
    store.extend([_record(0), _record(1)])
    full = (json.dumps(_record(2)) + "\n").encode()
    with open(store.path, "ab") as handle:  # a writer killed half-way through its line
        handle.write(full[: len(full) // 2])
    with pytest.warns(StoreWarning, match="last line is incomplete"):
        assert [r["trial"] for r in store.records()] == [0, 1]
    with pytest.warns(StoreWarning):
        assert store.done_trials("s1") == {0, 1}

    store.append(_record(3))
    data = store.path.read_bytes()
    assert data.endswith((json.dumps(_record(3)) + "\n").encode())
    assert data.count(b"\n") == 4  # the torn fragment got its own line, not glued to trial 3
    with pytest.warns(StoreWarning, match="line 3 is not a complete record"):
        assert [r["trial"] for r in store.records()] == [0, 1, 3]
    with pytest.warns(StoreWarning):
        frame = load_results(tmp_path)
    assert sorted(frame["trial"]) == [0, 1, 3]


def test_complete_last_record_without_newline_is_read(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(_record(0)) + "\n" + json.dumps(_record(1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [r["trial"] for r in ResultStore(path).records()] == [0, 1]


def test_garbage_lines_never_break_the_reader(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_bytes(b'\xff\xfe\n[1, 2]\n{"trial": \n' + json.dumps(_record(7)).encode() + b"\n\n")
    with pytest.warns(StoreWarning):
        assert ResultStore(tmp_path).records() == [_record(7)]


def test_keep_last_supersedes_older_records_of_a_trial(tmp_path):
    store = ResultStore(tmp_path)
    store.extend([_record(0, value=1.0), _record(1, value=2.0), _record(0, "s2", value=5.0)])
    store.append(_record(0, value=3.0))  # e.g. a force=true rerun of trial 0
    assert [(r["trial"], r["value"]) for r in store.setting_records("s1")] == [(0, 3.0), (1, 2.0)]
    assert len(store.setting_records("s1", keep="all")) == 3
    assert store.done_trials("s1") == {0, 1} and store.done_trials("s2") == {0}
    assert store.done_trials("nosuch") == set()

    frame = load_results(tmp_path)
    assert isinstance(frame, pd.DataFrame) and len(frame) == 3
    values = frame.set_index(["setting_id", "trial"])["value"]
    assert values[("s1", 0)] == 3.0 and values[("s1", 1)] == 2.0 and values[("s2", 0)] == 5.0
    assert len(load_results(store.path, keep="all")) == 4


def test_load_results_on_empty_and_missing_paths(tmp_path):
    frame = load_results(tmp_path)
    assert frame.empty and {"setting_id", "trial", "value", "model"} <= set(frame.columns)
    with pytest.raises(PilidError, match="no results at"):
        load_results(tmp_path / "nosuch")
    with pytest.raises(PilidError, match="keep="):
        load_results(tmp_path, keep="first")


_WRITER = """
import os, sys, time
from pilid.experiments.store import ResultStore
path, writer, n, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
while not os.path.exists(go):
    time.sleep(0.005)
store = ResultStore(path)
for i in range(n):
    # 6 kB lines: larger than PIPE_BUF, so only the lock keeps them whole
    store.append({"writer": writer, "i": i, "payload": chr(97 + writer) * 6000})
"""


@pytest.mark.slow
def test_concurrent_writers_lose_and_mix_nothing(tmp_path):
    writers, per_writer = 4, 120
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(tmp_path), str(w), str(per_writer), str(go)]
        )
        for w in range(writers)
    ]
    time.sleep(0.3)
    go.touch()
    assert all(p.wait(timeout=120) == 0 for p in procs)

    data = (tmp_path / "records.jsonl").read_bytes()
    lines = data.split(b"\n")
    assert lines.pop() == b""
    assert len(lines) == writers * per_writer
    records = [json.loads(line) for line in lines]  # every line is a whole record
    assert sorted((r["writer"], r["i"]) for r in records) == [
        (w, i) for w in range(writers) for i in range(per_writer)
    ]
    assert all(r["payload"] == chr(97 + r["writer"]) * 6000 for r in records)
    for w in range(writers):  # each writer's own records stay in its order
        assert [r["i"] for r in records if r["writer"] == w] == list(range(per_writer))
    writer_sequence = [r["writer"] for r in records]
    switches = sum(a != b for a, b in zip(writer_sequence, writer_sequence[1:]))
    assert switches > 0  # the writers really ran at the same time


# -- setting ids -------------------------------------------------------------------------------
BASE = {
    "experiment_name": "adhoc",
    "trials": 20,
    "seed": 0,
    "device": "auto",
    "data_dir": "~/.cache/pilid",
    "results_dir": "results/runs",
    "force": False,
    "verbose": False,
    "gamma": 5,
    "data": {"name": "synthetic", "N": 2000, "m": 10},
    "model": {"name": "pilid", "gamma": "${gamma}", "hidden_layers": [16, 16]},
    "train": {"epochs": 10, "lr": 0.005, "batched": True, "n_jobs": 1, "trials_per_batch": None},
}


def _cfg(**changes):
    cfg = OmegaConf.create(BASE)
    for key, value in changes.items():
        OmegaConf.update(cfg, key, value, merge=False)
    return cfg


def test_setting_id_is_stable_and_ignores_bookkeeping():
    sid = setting_id(_cfg())
    assert len(sid) == 16 and int(sid, 16) >= 0
    assert setting_id(OmegaConf.to_container(_cfg())) == sid  # plain dicts work too
    reordered = OmegaConf.create(dict(reversed(list(BASE.items()))))
    assert setting_id(reordered) == sid
    for key, value in {
        "trials": 3,
        "device": "cpu",
        "results_dir": "/elsewhere",
        "data_dir": "/data",
        "force": True,
        "verbose": True,
        "experiment_name": "table1",
        "train.batched": False,
        "train.n_jobs": 4,
        "train.trials_per_batch": 5,
    }.items():
        assert setting_id(_cfg(**{key: value})) == sid, key
    config = setting_config(_cfg())
    assert config["model"]["gamma"] == 5 and "gamma" not in config and "trials" not in config


@pytest.mark.slow
def test_setting_id_changes_with_what_changes_results():
    sid = setting_id(_cfg())
    others = {
        setting_id(_cfg(**{key: value}))
        for key, value in {
            "seed": 1,
            "gamma": 10,  # reaches the model through the interpolation
            "data.N": 5000,
            "data.name": "skill",
            "model.hidden_layers": [16, 32],
            "train.epochs": 11,
            "train.lr": 0.001,
        }.items()
    }
    assert sid not in others and len(others) == 7
    # the subprocess computes the same id: nothing depends on the process (hash seeds etc.)
    code = (
        "from omegaconf import OmegaConf; from pilid.experiments.setting import setting_id; "
        f"print(setting_id(OmegaConf.create({BASE!r})))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == sid, out.stderr


# -- appends that cannot finish --------------------------------------------------------------------
def _fail_records_writes(monkeypatch, path, error=errno.ENOSPC, first_part=0.5):
    """Make ``os.write`` on ``path``'s file write ``first_part`` of its bytes (a short write),
    then fail with ``error`` (an ``OSError`` errno, or an exception to raise), as a disk that
    fills up mid-record does; writes to any other file go through."""
    real = os.write
    inode = os.stat(path).st_ino
    calls = []

    def write(fd, data):
        if os.fstat(fd).st_ino != inode:
            return real(fd, data)
        calls.append(len(data))
        if len(calls) == 1:
            return real(fd, bytes(data)[: int(len(data) * first_part)])
        if isinstance(error, BaseException):
            raise error
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(os, "write", write)
    return calls


def test_a_full_disk_mid_append_leaves_the_file_on_its_last_whole_line(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)
    store.extend([_record(0), _record(1)])
    before = store.path.read_bytes()
    calls = _fail_records_writes(monkeypatch, store.path)
    with pytest.raises(PilidError) as raised:
        store.extend([_record(2, payload="x" * 2000), _record(3)])
    assert len(calls) == 2  # a short write, then ENOSPC: the append really was cut half-way
    message = str(raised.value)
    assert "\n" not in message and str(store.path) in message
    assert "disk is full" in message and "run the same command to resume" in message
    assert store.path.read_bytes() == before  # earlier records kept, nothing of the new ones
    monkeypatch.undo()
    store.append(_record(4))  # space again: the next append lands on a clean line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [r["trial"] for r in store.records()] == [0, 1, 4]


def test_an_interrupt_between_two_short_writes_takes_the_append_back(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)
    store.append(_record(0))
    before = store.path.read_bytes()
    _fail_records_writes(monkeypatch, store.path, error=KeyboardInterrupt(), first_part=0.3)
    with pytest.raises(KeyboardInterrupt):
        store.append(_record(1))
    assert store.path.read_bytes() == before


def test_an_interrupt_in_the_fsync_of_a_whole_append_keeps_its_records(tmp_path, monkeypatch):
    """SIGHUP/SIGTERM arriving while the records' bytes are synced (a sweep signalled right as
    a trial is recorded) keeps them: the trial is finished, and the run's line counts it (the
    append used to be cut back, and the line said one trial fewer than the test had seen)."""
    store = ResultStore(tmp_path)
    store.append(_record(0))
    inode = os.stat(store.path).st_ino
    real = os.fsync

    def fsync(fd):
        if os.fstat(fd).st_ino == inode:
            raise KeyboardInterrupt
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(KeyboardInterrupt):
        store.extend([_record(1), _record(2)])
    monkeypatch.undo()
    assert [r["trial"] for r in store.records()] == [0, 1, 2]


def test_a_failed_fsync_takes_the_append_back(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)
    store.append(_record(0))
    before = store.path.read_bytes()
    inode = os.stat(store.path).st_ino
    real = os.fsync

    def fsync(fd):
        if os.fstat(fd).st_ino == inode:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(PilidError, match=r"cannot write results to .*\(Input/output error\)"):
        store.append(_record(1))
    monkeypatch.undo()
    assert store.path.read_bytes() == before


def test_other_write_errors_are_one_line_and_keep_the_file(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)
    store.append(_record(0))
    before = store.path.read_bytes()
    _fail_records_writes(monkeypatch, store.path, error=errno.EIO)
    with pytest.raises(PilidError, match=r"cannot write results to .*\(Input/output error\)"):
        store.append(_record(1))
    assert store.path.read_bytes() == before


_RUN = [sys.executable, "-m", "pilid.run", "model=linear", "data=synthetic", "data.N=200"]


def _run_cli(tmp_path, *args, **kwargs):
    return subprocess.run(
        [*_RUN, *args, f"hydra.run.dir={tmp_path / 'hydra'}"],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        cwd=tmp_path,
        **kwargs,
    )


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="RLIMIT_FSIZE needs a POSIX system")
def test_a_run_whose_record_does_not_fit_ends_with_one_line_and_keeps_the_file(tmp_path):
    """The kernel's own short write: the file size limit (RLIMIT_FSIZE) lets the record's write
    reach the limit and then fails it (EFBIG), as a full disk does with ENOSPC."""
    import resource

    results = tmp_path / "results"
    store = ResultStore(results)
    store.extend([_record(t, "padding", payload="p" * 1000) for t in range(60)])  # ~64 kB
    before = store.path.read_bytes()
    limit = len(before) + 100  # the next record (~700 bytes) crosses it mid-line

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    done = _run_cli(tmp_path, "trials=2", f"results_dir={results}", preexec_fn=small_files)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pilid: error: cannot write results to"), lines
    assert "File too large" in lines[0] and "run the same command to resume" in lines[0]
    assert store.path.read_bytes() == before  # no partial line: cut back to the last whole line


# -- reading writes nothing (a read-only results directory, the dry run) ---------------------------
def _tree(root):
    """Every path under ``root`` with its size and modification time."""
    return {
        str(p.relative_to(root)): (p.is_dir(), p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


def _bad_line_results(tmp_path):
    """A results directory as a fresh clone has it (no ``.locks/``): one good record of another
    setting, then a line whose trial number is a string."""
    results = tmp_path / "results"
    results.mkdir()
    good = _record(0, "other", model="linear", dataset="synthetic", fit_seconds=0.1)
    path = results / "records.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "trial": "1"}) + "\n")
    warning = (
        f"pilid: warning: {path}: line 2 is not a valid record ('trial' is '1', not a whole "
        "number >= 0); skipped"
    )
    return results, warning


@pytest.mark.slow
def test_a_dry_run_writes_nothing_in_the_results_directory(tmp_path):
    results, warning = _bad_line_results(tmp_path)
    before = _tree(results)
    done = _run_cli(tmp_path, "trials=3", "dry_run=true", f"results_dir={results}")
    assert done.returncode == 0, done.stderr
    assert "0/3 trials recorded" in done.stdout
    assert _tree(results) == before  # no .locks/records.jsonl.lock, nothing touched
    assert done.stderr.strip().splitlines() == [warning]  # one line, no source line


def _refuse_writes_under(monkeypatch, root):
    """Make ``root`` read-only for this process (as root, chmod alone does not stop writes):
    every create, write-open, mkdir or temporary file under it fails with EACCES/EROFS."""
    import tempfile

    root = str(root.resolve())
    real_open, real_mkdir, real_mkstemp = os.open, os.mkdir, tempfile.mkstemp
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def inside(path):
        return os.path.abspath(os.fspath(path)).startswith(root)

    def open_(path, flags, *args, **kwargs):
        if flags & writing and inside(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    def mkdir(path, *args, **kwargs):
        if inside(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        return real_mkdir(path, *args, **kwargs)

    def mkstemp(*args, dir=None, **kwargs):  # noqa: A002 (tempfile's own name)
        if dir is not None and inside(dir):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(dir))
        return real_mkstemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)


@pytest.mark.parametrize("with_locks", [True, False], ids=["with-locks", "without-locks"])
def test_reading_and_planning_need_no_write_access(tmp_path, monkeypatch, with_locks):
    from pilid.experiments.planning import plan_setting

    results = tmp_path / "results"
    results.mkdir()
    ResultStore(results).extend([_record(0), _record(1, value=0.7)])
    if not with_locks:
        import shutil

        shutil.rmtree(results / ".locks")
    before = _tree(results)
    _refuse_writes_under(monkeypatch, results)
    results.chmod(0o555)
    try:
        assert ResultStore(results).done_trials("s1") == {0, 1}
        assert sorted(load_results(results)["value"]) == [0.5, 0.7]
        cfg = OmegaConf.merge(_cfg(), {"results_dir": str(results), "dry_run": True})
        plan = plan_setting(cfg)
        assert plan.trials == 20 and plan.recorded == 0
    finally:
        results.chmod(0o755)
    assert _tree(results) == before


# -- one warning per bad line ----------------------------------------------------------------------
@pytest.mark.slow
def test_a_wrong_typed_line_is_one_warning_line_per_run_without_source_lines(tmp_path):
    results, warning = _bad_line_results(tmp_path)
    # the run reads the store three times: the missing trials, their old values, the summary
    done = _run_cli(tmp_path, "trials=2", f"results_dir={results}")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [warning]
    assert "over 2 trials" in done.stdout


def test_a_library_user_sees_the_warning_at_their_own_line(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(_record(0)) + "\n" + json.dumps(_record(1, value=None)) + "\n")
    with pytest.warns(StoreWarning, match="line 2 is not a valid record") as caught:
        load_results(tmp_path)
    assert caught[0].filename == __file__  # not a line inside pilid


@pytest.mark.parametrize(
    "field, value",
    [("experiment", 123), ("task", 5), ("device", ["cpu"]), ("versions", "1.0"), ("fit_mode", 1)],
)
def test_wrongly_typed_descriptive_fields_make_a_line_invalid(tmp_path, field, value):
    path = tmp_path / "records.jsonl"
    good = {**_record(0), "experiment": "adhoc", "task": "regression", "device": "cpu"}
    bad = {**_record(1), field: value}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.warns(StoreWarning, match=f"line 2 is not a valid record \\('{field}' is"):
        assert ResultStore(path).records() == [good]


@pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")
def test_a_reader_holds_the_records_lock_shared_while_it_reads(tmp_path, monkeypatch):
    """Readers share the lock (a writer waits for them; so does a reader for a writer) and open
    the lock file read-only: taken in the middle of the read, an exclusive lock is refused and a
    shared one granted."""
    import builtins
    import fcntl

    import pilid.experiments.store as store_module

    store = ResultStore(tmp_path)
    store.append(_record(0))
    lock = tmp_path / ".locks" / "records.jsonl.lock"
    seen = {}

    def try_lock(kind):
        fd = os.open(lock, os.O_RDONLY)
        try:
            fcntl.flock(fd, kind | fcntl.LOCK_NB)
            return "granted"
        except BlockingIOError:
            return "refused"
        finally:
            os.close(fd)

    class Probe:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def read(self):
            seen["exclusive"] = try_lock(fcntl.LOCK_EX)
            seen["shared"] = try_lock(fcntl.LOCK_SH)
            return self.handle.read()

    monkeypatch.setattr(
        store_module, "open", lambda *a, **k: Probe(builtins.open(*a, **k)), raising=False
    )
    assert [r["trial"] for r in store.records()] == [0]
    assert seen == {"exclusive": "refused", "shared": "granted"}
    assert try_lock(fcntl.LOCK_EX) == "granted"  # released after the read


def _finishes(block, seconds: float) -> bool:
    """Whether ``block()`` returns within ``seconds`` (run in a daemon thread: a block that
    waits forever fails the test instead of hanging it)."""
    import threading

    done = threading.Event()

    def run():
        block()
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done.wait(seconds)


def test_a_reader_inside_its_own_append_lock_reads_instead_of_waiting_for_itself(tmp_path):
    """SIGTERM while the store appends: the interrupted line counts the records inside the
    write lock's block. Two ``flock`` locks of one file conflict even in one process, so the
    reader used to wait for its own writer forever (a hung sweep in the resume test)."""
    pytest.importorskip("fcntl")
    from pilid.experiments.locking import exclusive, lock_path

    store = ResultStore(tmp_path)
    store.append(_record(0))
    lock = lock_path(store.root, store.path.name)
    assert lock.exists()
    seen = []

    def nested():
        with exclusive(lock):
            seen.append(len(store.records()))

    assert _finishes(nested, 5.0), "the reader waited for its own process's write lock"
    assert seen == [1]


def test_a_reader_waits_for_another_process_only_so_long(tmp_path, monkeypatch):
    """A writer of another process that never lets go (a hung process on a shared file system)
    delays a reader by `SHARED_WAIT_SECONDS`, then it reads unlocked; a short hold is waited
    for."""
    fcntl = pytest.importorskip("fcntl")
    from pilid.experiments import locking
    from pilid.experiments.locking import lock_path

    store = ResultStore(tmp_path)
    store.append(_record(0))
    lock = lock_path(store.root, store.path.name)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            f"f = open({str(lock)!r}, 'a')\n"
            "fcntl.flock(f, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(locking, "SHARED_WAIT_SECONDS", 0.3)
        start = time.monotonic()
        assert len(store.records()) == 1
        waited = time.monotonic() - start
        assert 0.3 <= waited < 5.0
        fd = os.open(lock, os.O_RDONLY)  # the other process holds it still: refused to us
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    finally:
        holder.kill()
        holder.wait()
